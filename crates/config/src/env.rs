//! The environment variables rocjitsu reads, each named once. The launcher
//! (`crates/cli`) and mirage's backends set them through
//! `rocjitsu_kmd::launch`; the preload library, the HSA tools library and
//! the daemon read them.

/// The GPU configuration of local mode (a `configs/*.json` path).
pub const CONFIG: &str = "ROCJITSU_CONFIG";
/// The daemon socket of daemon and attach modes (the preload connects).
pub const DAEMON_SOCKET: &str = "ROCJITSU_DAEMON_SOCKET";
/// Seconds a daemon client waits for its daemon to come back (restored
/// from a checkpoint: `rocjitsu --daemon --restore FILE`) when the daemon
/// is lost, before its GPU calls fail; unset or 0: they fail at once.
pub const DAEMON_RECONNECT: &str = "ROCJITSU_DAEMON_RECONNECT";
/// The private per-user runtime directory (sysfs tree, lsmod shim,
/// sockets); default `/tmp/rocjitsu-<uid>`.
pub const RUNTIME_DIR: &str = "ROCJITSU_RUNTIME_DIR";
/// Host threads of the execution engine (0: one per core).
pub const THREADS: &str = "ROCJITSU_THREADS";
/// Seconds before a hung kernel is stopped (0: never).
pub const WATCHDOG: &str = "ROCJITSU_WATCHDOG";
/// Execution plugins to enable, `NAME[:key=value,...]` separated by `;`
/// (`rocjitsu plugins` lists them).
pub const PLUGINS: &str = "ROCJITSU_PLUGINS";
/// The directory plugins write their files to (default: stderr).
pub const PLUGIN_OUT: &str = "ROCJITSU_PLUGIN_OUT";
/// A directory the translation tier writes each block's Cranelift IR and
/// machine code to (a debugging aid).
pub const JIT_DUMP: &str = "ROCJITSU_JIT_DUMP";
/// The execution tier of the wave engine: `interp`, `jit` or `auto`
/// (`rocjitsu run-kernel --exec` overrides it).
pub const EXEC: &str = "ROCJITSU_EXEC";
/// A tracing filter for the emulator's log (`debug`, `rocjitsu_kmd=trace`).
pub const LOG: &str = "ROCJITSU_LOG";
/// The preload library (`librocjitsu.so`) to use instead of the one beside
/// the `rocjitsu` executable.
pub const PRELOAD: &str = "ROCJITSU_PRELOAD";
/// The HSA tools library of DBT guest mode (`librocjitsu_hooks.so`).
pub const HOOKS: &str = "ROCJITSU_HOOKS";
/// The download and build cache (default `~/.cache/rocjitsu`).
pub const CACHE: &str = "ROCJITSU_CACHE";
/// `pass` or `suppress`: MADV_HUGEPAGE/MADV_DONTFORK on the driver's memfds
/// go to the kernel, or the preload answers them (default: by kernel
/// version).
pub const SHMEM_MADVISE: &str = "ROCJITSU_SHMEM_MADVISE";
/// The DBT guest configuration the HSA tools library loads.
pub const DBT_CONFIG: &str = "ROCJITSU_DBT_CONFIG";
/// The HSA tools library's log level.
pub const DBT_LOG: &str = "ROCJITSU_DBT_LOG";
/// `guest` (default) or `hotswap`.
pub const DBT_MODE: &str = "ROCJITSU_DBT_MODE";
/// The daemon socket of the host GPU (DBT guest mode, hardware backend).
pub const DBT_HOST_SOCKET: &str = "ROCJITSU_DBT_HOST_SOCKET";
/// The KFD node of the host GPU, when the topology has several.
pub const DBT_HOST_NODE: &str = "ROCJITSU_DBT_HOST_NODE";
/// The KFD node of the guest GPU, when the topology has several.
pub const DBT_GUEST_NODE: &str = "ROCJITSU_DBT_GUEST_NODE";
/// `1` or `true`: the HSA tools library prints a backtrace on a fatal signal.
pub const DBT_SIGNAL_BACKTRACE: &str = "ROCJITSU_DBT_SIGNAL_BACKTRACE";

/// Every variable above, for help texts and environment filters.
pub const ALL: &[&str] = &[
    CONFIG,
    DAEMON_SOCKET,
    DAEMON_RECONNECT,
    RUNTIME_DIR,
    THREADS,
    WATCHDOG,
    PLUGINS,
    PLUGIN_OUT,
    EXEC,
    JIT_DUMP,
    LOG,
    PRELOAD,
    HOOKS,
    CACHE,
    SHMEM_MADVISE,
    DBT_CONFIG,
    DBT_LOG,
    DBT_MODE,
    DBT_HOST_SOCKET,
    DBT_HOST_NODE,
    DBT_GUEST_NODE,
    DBT_SIGNAL_BACKTRACE,
];

#[cfg(test)]
mod tests {
    #[test]
    fn every_name_is_a_rocjitsu_variable_and_unique() {
        let mut seen = std::collections::BTreeSet::new();
        for n in super::ALL {
            assert!(n.starts_with("ROCJITSU_"), "{n}");
            assert!(seen.insert(n), "{n} twice");
        }
    }

    #[test]
    fn the_readme_names_every_variable() {
        let p = concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md");
        let readme = std::fs::read_to_string(p).unwrap();
        let missing: Vec<_> = super::ALL
            .iter()
            .filter(|n| !readme.contains(&format!("`{n}`")))
            .collect();
        assert!(missing.is_empty(), "README.md does not name {missing:?}");
    }
}
