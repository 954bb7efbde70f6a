//! The debug log (RMM's `rmm/logger.hpp`): diagnostics of the library itself, written to
//! the file named by `RMM_DEBUG_LOG_FILE`, or to stderr when it is unset.
//!
//! The library logs through the `log` facade. The backend is `env_logger` with its
//! optional features off: it is the most used `log` backend, well maintained, writes to
//! stderr or to any pipe (here the file), and does its own locking so lines from many
//! threads never tear. `simplelog` would also do, but needs a second logger type for the
//! file and offers nothing more here. The backend is installed lazily and idempotently
//! ([`init`]) on first use; when the host application already installed a `log` logger,
//! that one is kept and receives rmm's records instead.
//!
//! The level is set at run time ([`set_level`]) through `log::set_max_level`; note that
//! this maximum is process-wide (it filters every crate's records, as RMM's level filters
//! every RMM message). Lines look like RMM's: `[thread][HH:MM:SS:microseconds][level] message`.

use std::io::Write;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::OnceLock;

/// Severity levels, numbered as RMM's `rmm::level_enum` (rapids-logger).
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Everything.
    Trace = 0,
    /// Debugging detail (pool growth, ...).
    Debug = 1,
    /// Informational messages (the default).
    Info = 2,
    /// Warnings (allocation failures, leaks at exit, ...).
    Warn = 3,
    /// Errors.
    Error = 4,
    /// Critical errors (logged as errors: `log` has no higher level).
    Critical = 5,
    /// Nothing.
    Off = 6,
}

impl Level {
    /// The level numbered `n` (RMM's numbering), or `None`.
    pub fn from_i32(n: i32) -> Option<Level> {
        Some(match n {
            0 => Level::Trace,
            1 => Level::Debug,
            2 => Level::Info,
            3 => Level::Warn,
            4 => Level::Error,
            5 => Level::Critical,
            6 => Level::Off,
            _ => return None,
        })
    }

    fn filter(self) -> log::LevelFilter {
        match self {
            Level::Trace => log::LevelFilter::Trace,
            Level::Debug => log::LevelFilter::Debug,
            Level::Info => log::LevelFilter::Info,
            Level::Warn => log::LevelFilter::Warn,
            Level::Error | Level::Critical => log::LevelFilter::Error,
            Level::Off => log::LevelFilter::Off,
        }
    }

    /// The `log` level records of this severity are written at (`None` for `Off`).
    pub fn log_level(self) -> Option<log::Level> {
        self.filter().to_level()
    }
}

/// The environment variable naming the debug log file.
pub const DEBUG_LOG_FILE_ENV: &str = "RMM_DEBUG_LOG_FILE";

static LEVEL: AtomicU8 = AtomicU8::new(Level::Info as u8);
static INIT: OnceLock<()> = OnceLock::new();

/// Installs the debug log backend once (later calls do nothing) and applies the level.
pub fn init() {
    INIT.get_or_init(|| {
        let mut builder = env_logger::Builder::new();
        builder
            .filter_level(log::LevelFilter::Trace)
            .format(|buf, record| {
                let (h, m, s, us) = local_time_of_day();
                writeln!(
                    buf,
                    "[{:>6}][{h:02}:{m:02}:{s:02}:{us:06}][{:<6}] {}",
                    os_thread_id(),
                    level_name(record.level()),
                    record.args()
                )
            });
        let mut file_error = None;
        match std::env::var_os(DEBUG_LOG_FILE_ENV) {
            Some(path) if !path.is_empty() => match std::fs::File::create(&path) {
                Ok(f) => {
                    builder.target(env_logger::Target::Pipe(Box::new(f)));
                }
                Err(e) => {
                    file_error = Some(format!(
                        "cannot open {DEBUG_LOG_FILE_ENV} = '{}': {e}; logging to stderr",
                        std::path::Path::new(&path).display()
                    ));
                    builder.target(env_logger::Target::Stderr);
                }
            },
            _ => {
                builder.target(env_logger::Target::Stderr);
            }
        }
        // A logger the application installed first stays in place.
        let _ = builder.try_init();
        log::set_max_level(level().filter());
        if let Some(msg) = file_error {
            log::warn!("{msg}");
        }
    });
}

fn level_name(l: log::Level) -> &'static str {
    match l {
        log::Level::Trace => "trace",
        log::Level::Debug => "debug",
        log::Level::Info => "info",
        log::Level::Warn => "warn",
        log::Level::Error => "error",
    }
}

/// Sets the debug log's level (installing the backend first if needed).
pub fn set_level(level: Level) {
    init();
    LEVEL.store(level as u8, Ordering::Relaxed);
    log::set_max_level(level.filter());
}

/// The debug log's level.
pub fn level() -> Level {
    Level::from_i32(i32::from(LEVEL.load(Ordering::Relaxed))).unwrap_or(Level::Info)
}

/// True when a message of `level` would be written.
pub fn should_log(level: Level) -> bool {
    level != Level::Off && level >= self::level()
}

/// Writes `msg` at `level` to the debug log (used by the C and C++ `RMM_LOG_*` macros).
pub fn log_message(level: Level, msg: &str) {
    init();
    if !should_log(level) {
        return;
    }
    if let Some(l) = level.log_level() {
        log::log!(target: "rmm", l, "{msg}");
    }
}

/// Flushes the debug log.
pub fn flush() {
    log::logger().flush();
}

/// The calling thread's operating-system thread id (what RMM's logs print).
pub fn os_thread_id() -> u64 {
    crate::runtime::os::thread_id()
}

/// Local wall-clock time of day: hours, minutes, seconds, microseconds.
pub fn local_time_of_day() -> (u32, u32, u32, u32) {
    static TZ: OnceLock<jiff::tz::TimeZone> = OnceLock::new();
    let tz = TZ.get_or_init(|| jiff::tz::TimeZone::try_system().unwrap_or(jiff::tz::TimeZone::UTC));
    let now = jiff::Timestamp::now();
    let offset = i64::from(tz.to_offset(now).seconds());
    let secs = now.as_second() + offset;
    let day = secs.rem_euclid(86_400);
    let us = now.subsec_microsecond().max(0);
    (
        (day / 3600) as u32,
        (day / 60 % 60) as u32,
        (day % 60) as u32,
        us as u32,
    )
}
