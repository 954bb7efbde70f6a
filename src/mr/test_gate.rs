//! Test helper: a gate that holds a stream's work back until opened (host runtime only:
//! it runs each stream's host functions on that stream's own thread).

use std::sync::{Arc, Condvar};

use crate::runtime::{runtime, Stream};

/// Tests that hold a stream back with a blocking host function need the host runtime: it
/// runs each stream's host functions on that stream's own thread, while CUDA runs every host
/// function of a context on one thread, so a held stream would hold back the others (and
/// opening gates one stream at a time would deadlock).
/// Says so (and returns false) on another runtime.
pub(crate) fn gates_work() -> bool {
    let host = crate::runtime::runtime()
        .map(|rt| rt.kind() == crate::runtime::RuntimeKind::Host)
        .unwrap_or(false);
    if !host {
        eprintln!("skipped: stream gates need the host runtime (RMM_RUNTIME=host)");
    }
    host
}

/// A gate holding a stream's work back until opened (or dropped).
pub(crate) struct Gate(pub(crate) Arc<(std::sync::Mutex<bool>, Condvar)>);

impl Gate {
    /// Enqueues on `stream` a host function that blocks until the gate opens.
    pub(crate) fn close(stream: Stream) -> Gate {
        let g = Arc::new((std::sync::Mutex::new(false), Condvar::new()));
        let w = g.clone();
        runtime()
            .expect("a runtime for tests")
            .launch_host_func(
                stream,
                Box::new(move || {
                    let mut open = w.0.lock().unwrap();
                    while !*open {
                        open = w.1.wait(open).unwrap();
                    }
                }),
            )
            .unwrap();
        Gate(g)
    }

    pub(crate) fn open(&self) {
        *self.0 .0.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.0 .1.notify_all();
    }
}

impl Drop for Gate {
    /// Never leaves a stream held back, even when a test fails.
    fn drop(&mut self) {
        self.open();
    }
}
