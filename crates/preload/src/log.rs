//! Logging inside the host program: `tracing` events at or above the level
//! in `ROCJITSU_LOG` go to stderr with one `write(2)` each. No thread-local
//! state is used, so logging stays safe in threads that are exiting (the
//! runtime closes descriptors from thread-local destructors).

use std::fmt::Write as _;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

struct Logger {
    max: Level,
}

struct Line(String);

impl Visit for Line {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.0, "{value:?}");
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.0.push_str(value);
        } else {
            let _ = write!(self.0, " {}={value}", field.name());
        }
    }
}

impl Subscriber for Logger {
    fn enabled(&self, m: &Metadata<'_>) -> bool {
        *m.level() <= self.max
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, e: &Event<'_>) {
        // SAFETY: getpid has no preconditions.
        let pid = unsafe { libc::getpid() };
        let mut line = Line(format!("rocjitsu[{pid}] {}: ", e.metadata().level()));
        e.record(&mut line);
        line.0.push('\n');
        // SAFETY: writing our own buffer to stderr.
        unsafe { libc::write(2, line.0.as_ptr().cast(), line.0.len()) };
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

/// Installs the logger for a filter such as `debug` or `warn`.
pub fn init(filter: &str) {
    let max = match filter.rsplit(['=', ',']).next().unwrap_or("").trim() {
        "trace" => Level::TRACE,
        "debug" => Level::DEBUG,
        "info" => Level::INFO,
        "error" => Level::ERROR,
        _ => Level::WARN,
    };
    let _ = tracing::subscriber::set_global_default(Logger { max });
}
