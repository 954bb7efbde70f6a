//! IPC of a stream-ordered pool between processes: the parent exports its
//! `cuda_async_memory_resource` pool as a POSIX file descriptor and one allocation's export
//! data; a child process (this test binary, re-run with a marker variable) inherits the
//! descriptor as fd 3, imports the pool and the pointer, copies the memory to the host and
//! exits 0 when it holds the pattern the parent wrote.
//!
//! Runs only on the CUDA runtime with POSIX-fd pool export (else prints why it skips).

use std::ffi::c_void;
use std::os::unix::process::CommandExt;
use std::process::Command;

use rmm::mr::{CudaAsyncMemoryResource, DeviceMemoryResource};
use rmm::runtime::{runtime, DeviceAttribute, MemHandleType, MemPool, RuntimeKind};
use rmm::Stream;

const MARKER: &str = "RMM_IPC_CHILD";
const BYTES: usize = 1 << 20;

fn pattern() -> Vec<u8> {
    (0..BYTES).map(|i| (i * 7 % 251) as u8).collect()
}

fn to_hex(data: &[u8]) -> String {
    data.iter().map(|b| format!("{b:02x}")).collect()
}

fn from_hex(s: &str) -> [u8; 64] {
    let mut out = [0u8; 64];
    assert_eq!(s.len(), 128, "export data must be 64 bytes");
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap();
    }
    out
}

fn child() {
    let rt = runtime().expect("runtime in the child");
    let data = from_hex(&std::env::var("RMM_IPC_PTR").unwrap());
    let pool: MemPool = rt
        .mem_pool_import_from_shareable_handle(3, MemHandleType::PosixFileDescriptor)
        .expect("import the pool from fd 3");
    let ptr = rt
        .mem_pool_import_pointer(pool, &data)
        .expect("import the pointer");
    let mut host = vec![0u8; BYTES];
    // SAFETY: `ptr` maps BYTES bytes of the parent's allocation; `host` holds BYTES bytes
    // and lives until the synchronization below.
    unsafe {
        rt.memcpy_async(
            host.as_mut_ptr().cast(),
            ptr.cast_const(),
            BYTES,
            Stream::DEFAULT,
        )
    }
    .unwrap();
    rt.stream_synchronize(Stream::DEFAULT).unwrap();
    rt.free_async(ptr, Stream::DEFAULT).unwrap();
    rt.stream_synchronize(Stream::DEFAULT).unwrap();
    assert!(host == pattern(), "the child saw different bytes");
}

#[test]
fn pool_and_pointer_shared_with_a_child_process() {
    if std::env::var_os(MARKER).is_some() {
        child();
        return;
    }
    let rt = match runtime() {
        Ok(rt) if rt.kind() == RuntimeKind::Cuda => rt,
        Ok(rt) => {
            println!(
                "skip: IPC needs the cuda runtime, this is {}",
                rt.kind().name()
            );
            return;
        }
        Err(e) => {
            println!("skip: no runtime ({e})");
            return;
        }
    };
    let device = rt.get_device().unwrap();
    let mask = rt
        .device_attribute(DeviceAttribute::MemoryPoolSupportedHandleTypes, device)
        .unwrap_or(0);
    if mask & 1 == 0 {
        println!("skip: device {device} pools cannot export POSIX file descriptors");
        return;
    }
    let mr = CudaAsyncMemoryResource::new(None, None, MemHandleType::PosixFileDescriptor)
        .expect("an exportable pool");
    let ptr = mr.allocate(BYTES, Stream::DEFAULT).unwrap();
    let src = pattern();
    // SAFETY: `ptr` holds BYTES bytes of device memory, `src` BYTES host bytes that live
    // until the synchronization below.
    unsafe { rt.memcpy_async(ptr, src.as_ptr().cast::<c_void>(), BYTES, Stream::DEFAULT) }.unwrap();
    rt.stream_synchronize(Stream::DEFAULT).unwrap();
    let fd = mr.export_handle().expect("export the pool") as i32;
    let data = mr.export_pointer(ptr).expect("export the pointer");

    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "pool_and_pointer_shared_with_a_child_process",
        "--exact",
        "--nocapture",
        "--test-threads=1",
    ])
    .env(MARKER, "1")
    .env("RMM_RUNTIME", "cuda")
    .env("RMM_IPC_PTR", to_hex(&data));
    // SAFETY: between fork and exec the closure only calls dup2 and fcntl, which are
    // async-signal-safe, and allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            if fd != 3 && libc::dup2(fd, 3) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            // Keep fd 3 across exec (dup2 clears close-on-exec; fd == 3 may have it set).
            if libc::fcntl(3, libc::F_SETFD, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    // SAFETY: `fd` is the descriptor the export gave us; the child has its own copy.
    unsafe { libc::close(fd) };
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "child failed: {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    assert!(stdout.contains("1 passed"), "child did not run:\n{stdout}");
    mr.deallocate(ptr, BYTES, Stream::DEFAULT).unwrap();
    rt.stream_synchronize(Stream::DEFAULT).unwrap();
}
