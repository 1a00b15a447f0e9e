//! Logging of the hooks: one `write(2)` per line to stderr or to a file,
//! filtered by level (the config's `log_level`, overridden by
//! `ROCJITSU_DBT_LOG`).

use std::fmt::Arguments;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicI32, AtomicU8, Ordering};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Off = 0,
    Error = 1,
    Warn = 2,
    Info = 3,
    Debug = 4,
    Trace = 5,
}

impl Level {
    pub fn parse(s: &str) -> Option<Level> {
        Some(match s.trim().to_ascii_lowercase().as_str() {
            "off" | "none" => Level::Off,
            "error" => Level::Error,
            "warn" | "warning" => Level::Warn,
            "info" => Level::Info,
            "debug" => Level::Debug,
            "trace" => Level::Trace,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Level::Off => "off",
            Level::Error => "error",
            Level::Warn => "warn",
            Level::Info => "info",
            Level::Debug => "debug",
            Level::Trace => "trace",
        }
    }
}

static LEVEL: AtomicU8 = AtomicU8::new(Level::Warn as u8);
static FD: AtomicI32 = AtomicI32::new(2);
static PID: OnceLock<u32> = OnceLock::new();

/// What `ROCJITSU_DBT_LOG` asks for: a level (`trace`), a file (`/tmp/x.log`),
/// or both (`trace:/tmp/x.log`).
#[derive(Debug, PartialEq, Eq)]
pub struct LogSpec {
    pub level: Option<Level>,
    pub file: Option<String>,
}

pub fn parse_spec(value: &str) -> Result<LogSpec, String> {
    let value = value.trim();
    if value.is_empty() {
        return Ok(LogSpec {
            level: None,
            file: None,
        });
    }
    if let Some(level) = Level::parse(value) {
        return Ok(LogSpec {
            level: Some(level),
            file: None,
        });
    }
    if let Some((l, f)) = value.split_once(':')
        && let Some(level) = Level::parse(l)
    {
        return Ok(LogSpec {
            level: Some(level),
            file: Some(f.to_owned()),
        });
    }
    if value.contains('/') {
        return Ok(LogSpec {
            level: None,
            file: Some(value.to_owned()),
        });
    }
    Err(format!(
        "ROCJITSU_DBT_LOG={value}: expected a level (off, error, warn, info, debug, trace), a file path, or LEVEL:PATH"
    ))
}

pub fn set_level(level: Level) {
    LEVEL.store(level as u8, Ordering::Relaxed);
}

/// Sends the log to `path` (appending); stderr stays the target on failure.
pub fn set_file(path: &str) -> Result<(), String> {
    let c = std::ffi::CString::new(path)
        .map_err(|_| format!("log file {path:?}: contains a NUL byte"))?;
    // SAFETY: `c` is a valid NUL-terminated path; open has no other preconditions.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_APPEND | libc::O_CLOEXEC,
            0o644,
        )
    };
    if fd < 0 {
        return Err(format!(
            "log file {path}: {}",
            std::io::Error::last_os_error()
        ));
    }
    FD.store(fd, Ordering::Relaxed);
    Ok(())
}

pub fn enabled(level: Level) -> bool {
    level != Level::Off && level as u8 <= LEVEL.load(Ordering::Relaxed)
}

/// Writes one line, always (errors that must reach the user go here).
pub fn write_line(level: Level, args: Arguments<'_>) {
    let pid = *PID.get_or_init(std::process::id);
    let line = format!("[rocjitsu-hooks {pid}] {}: {args}\n", level.name());
    let fd = FD.load(Ordering::Relaxed);
    // SAFETY: writes an owned buffer to a descriptor; a failed write is ignored.
    unsafe { libc::write(fd, line.as_ptr().cast(), line.len()) };
}

pub fn log(level: Level, args: Arguments<'_>) {
    if enabled(level) {
        write_line(level, args);
    }
}

#[macro_export]
macro_rules! log {
    ($lvl:ident, $($t:tt)*) => {
        if $crate::log::enabled($crate::log::Level::$lvl) {
            $crate::log::write_line($crate::log::Level::$lvl, format_args!($($t)*))
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs() {
        assert_eq!(
            parse_spec("trace").unwrap(),
            LogSpec {
                level: Some(Level::Trace),
                file: None
            }
        );
        assert_eq!(
            parse_spec("debug:/tmp/h.log").unwrap(),
            LogSpec {
                level: Some(Level::Debug),
                file: Some("/tmp/h.log".into())
            }
        );
        assert_eq!(
            parse_spec("/tmp/h.log").unwrap(),
            LogSpec {
                level: None,
                file: Some("/tmp/h.log".into())
            }
        );
        assert!(
            parse_spec("loud")
                .unwrap_err()
                .contains("ROCJITSU_DBT_LOG=loud")
        );
    }
}
