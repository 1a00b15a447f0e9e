//! The environment a program runs in on emulated GPUs, defined once for
//! the `rocjitsu` launcher (`crates/cli`) and mirage's backends: the
//! emulator's variables for local or daemon mode ([`Emulator::changes`]),
//! and the lists (`LD_PRELOAD`, `PATH`) that get the preload library and
//! the `lsmod` shim in front ([`in_front`]). DBT guest mode adds its own
//! variables on top (`crate::guest_launch`).

use rocjitsu_config::env;
use std::ffi::OsString;
use std::path::Path;

/// A change to a program's environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvChange {
    Set(String, OsString),
    Unset(String),
    /// Set only where the environment does not set the variable already
    /// (the user's choice stands).
    Default(String, OsString),
}

/// UCX's memory hooks (libucm, which OpenMPI and so Debian's libtorch and
/// RCCL/MPI programs load) default to "bistro" mode: they overwrite the
/// first instructions of the `mmap` that `dlsym` finds with a jump to
/// their own, which then makes the system call itself. Under LD_PRELOAD
/// that `mmap` is the emulator's, so every mmap of a device file would
/// reach the kernel untranslated (a SIGBUS at the first touch). In "reloc"
/// mode UCX hooks through the programs' relocation tables and calls the
/// `mmap` it found, the emulator's, in turn.
pub const UCX_MMAP_HOOK_MODE: (&str, &str) = ("UCX_MEM_MMAP_HOOK_MODE", "reloc");

pub(crate) fn set(k: &str, v: impl Into<OsString>) -> EnvChange {
    EnvChange::Set(k.to_string(), v.into())
}

/// Where the program's GPUs live.
#[derive(Debug, Clone, Copy)]
pub enum Gpus<'a> {
    /// Emulated inside the program (local mode), from this configuration.
    Local {
        config: &'a Path,
        /// Host threads of the execution engine.
        threads: Option<u64>,
        /// Seconds before a hung kernel is stopped.
        watchdog_s: Option<u64>,
    },
    /// Served by the daemon at this socket (daemon and attach modes).
    Daemon { socket: &'a Path },
}

/// What a program is launched with.
#[derive(Debug, Clone, Copy)]
pub struct Emulator<'a> {
    /// The private runtime directory (sysfs tree, lsmod shim).
    pub runtime_dir: &'a Path,
    pub gpus: Gpus<'a>,
    /// A tracing filter for the emulator's log.
    pub log: Option<&'a str>,
}

impl Emulator<'_> {
    /// The emulator's variables: those the mode needs, and the removal of
    /// the one that would contradict it (a daemon socket in local mode, a
    /// configuration in daemon mode).
    pub fn changes(&self) -> Vec<EnvChange> {
        let mut out = vec![set(env::RUNTIME_DIR, self.runtime_dir)];
        match self.gpus {
            Gpus::Local {
                config,
                threads,
                watchdog_s,
            } => {
                out.push(set(env::CONFIG, config));
                out.push(EnvChange::Unset(env::DAEMON_SOCKET.into()));
                if let Some(t) = threads {
                    out.push(set(env::THREADS, t.to_string()));
                }
                if let Some(w) = watchdog_s {
                    out.push(set(env::WATCHDOG, w.to_string()));
                }
            }
            Gpus::Daemon { socket } => {
                out.push(set(env::DAEMON_SOCKET, socket));
                out.push(EnvChange::Unset(env::CONFIG.into()));
            }
        }
        if let Some(l) = self.log {
            out.push(set(env::LOG, l));
        }
        let (k, v) = UCX_MMAP_HOOK_MODE;
        out.push(EnvChange::Default(k.into(), v.into()));
        out
    }

    /// The variables to set in an environment that starts empty (mirage's
    /// executions), as strings.
    pub fn sets(&self) -> Vec<(String, String)> {
        self.changes()
            .into_iter()
            .filter_map(|c| match c {
                EnvChange::Set(k, v) | EnvChange::Default(k, v) => {
                    Some((k, v.to_string_lossy().into_owned()))
                }
                EnvChange::Unset(_) => None,
            })
            .collect()
    }
}

/// Applies `changes` to the environment `cmd` will run with.
pub fn apply(cmd: &mut std::process::Command, changes: impl IntoIterator<Item = EnvChange>) {
    for c in changes {
        match c {
            EnvChange::Set(k, v) => {
                cmd.env(k, v);
            }
            EnvChange::Unset(k) => {
                cmd.env_remove(k);
            }
            EnvChange::Default(k, v) => {
                let given =
                    cmd.get_envs().any(|(n, _)| n == k.as_str()) || std::env::var_os(&k).is_some();
                if !given {
                    cmd.env(k, v);
                }
            }
        }
    }
}

/// `first`, then `old` (a `:`-separated list such as `LD_PRELOAD` or
/// `PATH`) when it is set and not empty.
pub fn in_front(first: &Path, old: Option<OsString>) -> OsString {
    let mut v = first.as_os_str().to_os_string();
    if let Some(old) = old.filter(|s| !s.is_empty()) {
        v.push(":");
        v.push(old);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get<'a>(c: &'a [EnvChange], k: &str) -> Option<&'a OsString> {
        c.iter().find_map(|x| match x {
            EnvChange::Set(n, v) if n == k => Some(v),
            _ => None,
        })
    }

    #[test]
    fn local_and_daemon_modes_set_what_they_need_and_remove_the_other() {
        let local = Emulator {
            runtime_dir: Path::new("/run/r"),
            gpus: Gpus::Local {
                config: Path::new("/c.json"),
                threads: Some(4),
                watchdog_s: None,
            },
            log: Some("debug"),
        }
        .changes();
        assert_eq!(get(&local, "ROCJITSU_RUNTIME_DIR").unwrap(), "/run/r");
        assert_eq!(get(&local, "ROCJITSU_CONFIG").unwrap(), "/c.json");
        assert_eq!(get(&local, "ROCJITSU_THREADS").unwrap(), "4");
        assert_eq!(get(&local, "ROCJITSU_LOG").unwrap(), "debug");
        assert!(get(&local, "ROCJITSU_WATCHDOG").is_none());
        assert!(local.contains(&EnvChange::Unset("ROCJITSU_DAEMON_SOCKET".into())));
        let daemon = Emulator {
            runtime_dir: Path::new("/run/r"),
            gpus: Gpus::Daemon {
                socket: Path::new("/run/r/d.sock"),
            },
            log: None,
        };
        let c = daemon.changes();
        assert_eq!(get(&c, "ROCJITSU_DAEMON_SOCKET").unwrap(), "/run/r/d.sock");
        assert!(c.contains(&EnvChange::Unset("ROCJITSU_CONFIG".into())));
        assert!(get(&c, "ROCJITSU_LOG").is_none());
        assert_eq!(daemon.sets().len(), 3);
        for c in [&local, &c] {
            assert!(c.contains(&EnvChange::Default(
                "UCX_MEM_MMAP_HOOK_MODE".into(),
                "reloc".into()
            )));
        }
    }

    #[test]
    fn a_default_leaves_a_value_the_command_or_the_user_gave_alone() {
        let d = || EnvChange::Default("ROCJITSU_TEST_DEFAULT_VAR".into(), "reloc".into());
        let value = |cmd: &std::process::Command| {
            cmd.get_envs()
                .find(|(k, _)| *k == "ROCJITSU_TEST_DEFAULT_VAR")
                .and_then(|(_, v)| v.map(|v| v.to_os_string()))
        };
        let mut cmd = std::process::Command::new("true");
        apply(&mut cmd, [d()]);
        assert_eq!(value(&cmd).unwrap(), "reloc");
        let mut cmd = std::process::Command::new("true");
        cmd.env("ROCJITSU_TEST_DEFAULT_VAR", "bistro");
        apply(&mut cmd, [d()]);
        assert_eq!(value(&cmd).unwrap(), "bistro");
    }

    #[test]
    fn lists_get_the_new_entry_in_front() {
        let p = Path::new("/lib/librocjitsu.so");
        assert_eq!(in_front(p, None), "/lib/librocjitsu.so");
        assert_eq!(in_front(p, Some("".into())), "/lib/librocjitsu.so");
        assert_eq!(
            in_front(p, Some("a.so:b.so".into())),
            "/lib/librocjitsu.so:a.so:b.so"
        );
    }
}
