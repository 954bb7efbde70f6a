//! `logging_resource_adaptor`: forwards to an upstream and writes one CSV row per event,
//! in RMM's format, so that RMM's replay benchmark and `rmm-replay` read the same files.
//!
//! Format (RMM 25.02): a header `Thread,Time,Action,Pointer,Size,Stream`, then rows
//! `tid,HH:MM:SS.uuuuuu,action,pointer,size,stream` where `tid` is the OS thread id in
//! decimal, the time is local time with microseconds, `action` is `allocate`,
//! `allocate failure` or `free`, the pointer is printed as C's `%p` (`0x7f..`, `(nil)` for
//! null) and the stream as C++'s `std::hex` of the stream handle (`0` for the default
//! stream, `0x..` otherwise).
//!
//! Rows go through one `Mutex<BufWriter>` (whole rows, never torn). Nothing is lost: with
//! `auto_flush` each row is flushed; otherwise the buffer is flushed by [`flush`], on
//! drop, and at process exit (every live log is registered with an exit hook).
//!
//! [`flush`]: LoggingResourceAdaptor::flush

use std::any::Any;
use std::ffi::c_void;
use std::fmt::Write as _;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Once, Weak};

use parking_lot::Mutex;

use super::{DeviceMemoryResource, SharedResource};
use crate::error::{Error, Result};
use crate::runtime::Stream;

const NAME: &str = "logging_resource_adaptor";

/// The CSV header RMM writes.
pub const LOG_HEADER: &str = "Thread,Time,Action,Pointer,Size,Stream";

/// The environment variable naming the default event log file.
pub const LOG_FILE_ENV: &str = "RMM_LOG_FILE";

type Sink = Mutex<BufWriter<Box<dyn Write + Send>>>;

/// Logs still alive, flushed by the exit hook.
static LIVE: Mutex<Vec<Weak<Sink>>> = Mutex::new(Vec::new());
static EXIT_HOOK: Once = Once::new();

/// Flushes every live event log (run at process exit).
extern "C" fn flush_logs_at_exit() {
    // Never unwind into libc's exit.
    let _ = std::panic::catch_unwind(flush_live_logs);
    let _ = std::panic::catch_unwind(crate::logger::flush);
}

/// Flushes every live event log (at exit, so no row is lost).
pub(crate) fn flush_live_logs() {
    let live: Vec<Arc<Sink>> = LIVE.lock().iter().filter_map(Weak::upgrade).collect();
    for sink in live {
        let _ = sink.lock().flush();
    }
}

fn register(sink: &Arc<Sink>) {
    EXIT_HOOK.call_once(|| {
        if !crate::runtime::os::at_exit(flush_logs_at_exit) {
            log::warn!("logging_resource_adaptor: cannot register the exit flush (atexit failed)");
        }
    });
    let mut live = LIVE.lock();
    live.retain(|w| w.strong_count() > 0);
    live.push(Arc::downgrade(sink));
}

/// A resource that logs every allocation and free of its upstream as a CSV row.
pub struct LoggingResourceAdaptor {
    upstream: SharedResource,
    sink: Arc<Sink>,
    auto_flush: bool,
    path: Option<PathBuf>,
}

impl LoggingResourceAdaptor {
    /// Logs to `filename`, or to the file named by `RMM_LOG_FILE` when `None` (an error
    /// when neither is given). The file is created or truncated.
    pub fn new(
        upstream: SharedResource,
        filename: Option<&Path>,
        auto_flush: bool,
    ) -> Result<Self> {
        let path: PathBuf = match filename {
            Some(p) => p.to_path_buf(),
            None => Self::default_filename()?,
        };
        let file = std::fs::File::create(&path).map_err(|e| {
            Error::invalid(format!(
                "{NAME}: cannot open log file '{}' for writing: {e}",
                path.display()
            ))
        })?;
        let mut r = Self::with_writer(upstream, Box::new(file), auto_flush)?;
        r.path = Some(path);
        Ok(r)
    }

    /// Logs to any writer (RMM's `std::ostream&` constructor), buffering rows (64 KiB).
    pub fn with_writer(
        upstream: SharedResource,
        writer: Box<dyn Write + Send>,
        auto_flush: bool,
    ) -> Result<Self> {
        Self::with_buffer(upstream, writer, auto_flush, 1 << 16)
    }

    /// Logs to a writer that buffers by itself (a C++ `std::ostream` or logger sink): each
    /// row reaches it whole, in one `write_all`, as soon as it is logged; `flush` and
    /// `auto_flush` are forwarded to it.
    pub fn with_passthrough_writer(
        upstream: SharedResource,
        writer: Box<dyn Write + Send>,
        auto_flush: bool,
    ) -> Result<Self> {
        Self::with_buffer(upstream, writer, auto_flush, 0)
    }

    fn with_buffer(
        upstream: SharedResource,
        writer: Box<dyn Write + Send>,
        auto_flush: bool,
        capacity: usize,
    ) -> Result<Self> {
        crate::logger::init();
        // A zero capacity makes the BufWriter hand every write straight to `writer`.
        let sink: Arc<Sink> = Arc::new(Mutex::new(BufWriter::with_capacity(capacity, writer)));
        {
            let mut w = sink.lock();
            let io =
                |e: std::io::Error| Error::invalid(format!("{NAME}: cannot write the log: {e}"));
            // One write: a pass-through writer receives whole lines only.
            w.write_all(format!("{LOG_HEADER}\n").as_bytes())
                .map_err(io)?;
            if auto_flush {
                w.flush().map_err(io)?;
            }
        }
        register(&sink);
        Ok(LoggingResourceAdaptor {
            upstream,
            sink,
            auto_flush,
            path: None,
        })
    }

    /// The value of `RMM_LOG_FILE`, or an error saying that no file was named.
    pub fn default_filename() -> Result<PathBuf> {
        match std::env::var_os(LOG_FILE_ENV) {
            Some(p) if !p.is_empty() => Ok(PathBuf::from(p)),
            _ => Err(Error::invalid(format!(
                "{NAME}: logging requested without an explicit file name, but {LOG_FILE_ENV} \
                 is unset"
            ))),
        }
    }

    /// The CSV header.
    pub fn header(&self) -> &'static str {
        LOG_HEADER
    }

    /// The upstream resource.
    pub fn upstream(&self) -> &SharedResource {
        &self.upstream
    }

    /// The log file, when logging to a file.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Writes buffered rows out.
    pub fn flush(&self) -> Result<()> {
        self.sink
            .lock()
            .flush()
            .map_err(|e| Error::invalid(format!("{NAME}: cannot flush the log: {e}")))
    }

    fn row(&self, action: &str, ptr: *mut c_void, bytes: usize, stream: Stream) {
        let (h, m, s, us) = crate::logger::local_time_of_day();
        let mut line = String::with_capacity(96);
        let _ = write!(
            line,
            "{},{h:02}:{m:02}:{s:02}.{us:06},{action},",
            crate::logger::os_thread_id()
        );
        format_row_tail(&mut line, ptr as usize, bytes, stream.0);
        let mut w = self.sink.lock();
        let mut res = w.write_all(line.as_bytes());
        if self.auto_flush && res.is_ok() {
            res = w.flush();
        }
        drop(w);
        if let Err(e) = res {
            log::error!("{NAME}: cannot write to the event log: {e}");
        }
    }
}

/// Appends `pointer,size,stream\n` as RMM prints them.
pub(crate) fn format_row_tail(line: &mut String, ptr: usize, bytes: usize, stream: usize) {
    if ptr == 0 {
        line.push_str("(nil)");
    } else {
        let _ = write!(line, "{ptr:#x}");
    }
    let _ = write!(line, ",{bytes},");
    if stream == 0 {
        line.push('0');
    } else {
        let _ = write!(line, "{stream:#x}");
    }
    line.push('\n');
}

impl Drop for LoggingResourceAdaptor {
    fn drop(&mut self) {
        let _ = self.sink.lock().flush();
    }
}

impl std::fmt::Debug for LoggingResourceAdaptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{NAME}(upstream: {}, file: {:?}, auto_flush: {})",
            self.upstream.name(),
            self.path,
            self.auto_flush
        )
    }
}

impl DeviceMemoryResource for LoggingResourceAdaptor {
    fn allocate(&self, bytes: usize, stream: Stream) -> Result<*mut c_void> {
        match self.upstream.allocate(bytes, stream) {
            Ok(p) => {
                self.row("allocate", p, bytes, stream);
                Ok(p)
            }
            Err(e) => {
                self.row("allocate failure", std::ptr::null_mut(), bytes, stream);
                log::warn!("{NAME}: allocation of {bytes} bytes failed: {e}");
                Err(e)
            }
        }
    }

    fn deallocate(&self, ptr: *mut c_void, bytes: usize, stream: Stream) -> Result<()> {
        self.row("free", ptr, bytes, stream);
        self.upstream.deallocate(ptr, bytes, stream)
    }

    /// Equal to itself, and to another logging adaptor over an equal upstream (as RMM).
    fn is_equal(&self, other: &dyn DeviceMemoryResource) -> bool {
        super::adaptor_is_equal(self, other, |a| a.upstream.as_ref(), |_, _| true)
    }

    fn name(&self) -> &'static str {
        NAME
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
