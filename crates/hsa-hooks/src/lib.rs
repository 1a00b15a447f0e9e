//! `librocjitsu_hooks.so`: the HSA tools library of DBT guest mode.
//!
//! ROCr loads it through `HSA_TOOLS_LIB` and calls [`OnLoad`] with its API
//! table after discovering its agents. With `ROCJITSU_DBT_CONFIG` naming a
//! configuration with an enabled `dbt_guest` block, the library replaces the
//! table entries that take or return an agent, so that the application sees
//! one GPU, the guest (its name, ISA, caches), while everything that runs
//! (queues, memory, copies, code objects, symbols) uses the host agent, and
//! guest code objects are translated to the host ISA when loaded
//! ([`code`]). Without `ROCJITSU_DBT_CONFIG` it changes nothing.
//!
//! With `ROCJITSU_DBT_MODE=hotswap` no agent is shadowed: the application
//! sees the host GPU as it is, and only code-object loading is hooked: a
//! code object whose ELF target is `guest_isa`, loaded on an agent whose
//! ISA is `host_isa`, is translated ([`code::load_hotswap`]); every other
//! load passes through.
//!
//! No panic crosses the C boundary: every entry runs under [`guard`].

pub mod abi;
pub mod backtrace;
pub mod code;
pub mod config;
pub mod hip;
pub mod hooks;
pub mod log;
pub mod map;
pub mod translate;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;

use abi::*;
use map::{AgentInfo, Pair};

/// The runtime's original entries, copied before any is replaced.
pub struct Originals {
    pub core: CoreApiTable,
    pub core_len: u32,
    pub amd: AmdExtTable,
    pub amd_len: u32,
    pub image: ImageExtTable,
    pub image_len: u32,
}

pub struct State {
    pub config: config::Config,
    pub orig: Originals,
    pair: OnceLock<Option<Pair>>,
}

static STATE: OnceLock<State> = OnceLock::new();

/// The state of an active library; hooks are installed only after it is set.
pub fn state() -> &'static State {
    STATE
        .get()
        .expect("hooks run only after OnLoad set the state")
}

/// The host/guest pair, discovered on first use through the original entries.
/// `None` (logged once) leaves every entry a pass-through.
pub fn pair() -> Option<Pair> {
    *state().pair.get_or_init(|| match discover() {
        Ok(p) => {
            log!(
                Info,
                "guest agent {:#x} shows the application; host agent {:#x} runs its work",
                p.guest.handle,
                p.host.handle
            );
            Some(p)
        }
        Err(e) => {
            log::write_line(
                log::Level::Error,
                format_args!("{e}; guest mode is off in this process"),
            );
            None
        }
    })
}

/// Enumerates the runtime's agents through the original entries and picks the pair.
fn discover() -> Result<Pair, String> {
    let agents = hooks::core::all_agents()
        .map_err(|s| format!("hsa_iterate_agents failed with status {s:#x}"))?;
    let mut infos = Vec::new();
    for agent in agents {
        let mut device = 0u32;
        let mut name = [0u8; 64];
        let mut node = 0u32;
        // SAFETY: each buffer holds its attribute (u32; a 64-byte name).
        unsafe {
            hooks::core::original_agent_info(
                agent,
                HSA_AGENT_INFO_DEVICE,
                (&raw mut device).cast(),
            );
            if device == HSA_DEVICE_TYPE_GPU {
                hooks::core::original_agent_info(
                    agent,
                    HSA_AGENT_INFO_NAME,
                    name.as_mut_ptr().cast(),
                );
                hooks::core::original_agent_info(
                    agent,
                    HSA_AMD_AGENT_INFO_DRIVER_NODE_ID,
                    (&raw mut node).cast(),
                );
            }
        }
        let len = name.iter().position(|&b| b == 0).unwrap_or(name.len());
        let info = AgentInfo {
            agent,
            is_gpu: device == HSA_DEVICE_TYPE_GPU,
            is_cpu: device == HSA_DEVICE_TYPE_CPU,
            name: String::from_utf8_lossy(&name[..len]).into_owned(),
            node,
        };
        log!(
            Debug,
            "runtime agent {:#x}: gpu={} name={} node={}",
            agent.handle,
            info.is_gpu,
            info.name,
            info.node
        );
        infos.push(info);
    }
    map::select(&infos, &state().config.selection).map_err(|e| e.to_string())
}

/// Runs a hook body; a panic is logged and becomes `HSA_STATUS_ERROR`.
pub fn guard(name: &str, f: impl FnOnce() -> Status) -> Status {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(s) => s,
        Err(p) => {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "(no message)".into());
            log::write_line(
                log::Level::Error,
                format_args!("internal error in {name}: {msg}"),
            );
            HSA_STATUS_ERROR
        }
    }
}

/// Copies the first `len` bytes (at most the size of `T`) of a runtime
/// table into a zeroed `T`.
///
/// # Safety
/// `src` must point to a table of at least `len` readable bytes.
unsafe fn copy_table<T: Copy>(src: *const T, len: u32) -> T {
    let n = (len as usize).min(size_of::<T>());
    let mut out = std::mem::MaybeUninit::<T>::zeroed();
    // SAFETY: `n` bytes are readable at `src` (caller) and fit in `out`; a
    // zeroed table is valid (version 0, null slots).
    unsafe {
        std::ptr::copy_nonoverlapping(src.cast::<u8>(), out.as_mut_ptr().cast::<u8>(), n);
        out.assume_init()
    }
}

/// Writes `hooks` into a runtime table whose version says `len` bytes;
/// slots past its end or empty in the runtime stay untouched. Returns how
/// many were installed.
///
/// # Safety
/// `table` must point to a writable table of `len` bytes.
unsafe fn install(table: *mut u8, len: u32, hooks: &[(usize, Fp)], what: &str) -> usize {
    let mut n = 0;
    for &(offset, hook) in hooks {
        if !slot_present(len, offset) {
            log!(
                Debug,
                "{what}: slot at {offset} is past the runtime's table ({len} bytes); not hooked"
            );
            continue;
        }
        // SAFETY: the slot lies inside the table (checked above) and is pointer-aligned.
        let slot = unsafe { &mut *table.add(offset).cast::<Fp>() };
        if slot.is_none() {
            continue;
        }
        *slot = hook;
        n += 1;
    }
    n
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Reads the configuration; `Ok(None)` means stay inert.
fn load_config() -> Result<Option<config::Config>, String> {
    let Some(path) = env(rocjitsu_config::env::DBT_CONFIG).filter(|p| !p.is_empty()) else {
        return Ok(None);
    };
    let text = std::fs::read_to_string(&path).map_err(|e| {
        format!(
            "ROCJITSU_DBT_CONFIG={path}: {e} (set it to a guest-mode configuration, or unset it)"
        )
    })?;
    let Some(mut cfg) = config::parse(&path, &text)? else {
        return Ok(None);
    };
    cfg.selection.guest_node = config::node_override(
        rocjitsu_config::env::DBT_GUEST_NODE,
        env(rocjitsu_config::env::DBT_GUEST_NODE).as_deref(),
    )?;
    cfg.selection.host_node = config::node_override(
        rocjitsu_config::env::DBT_HOST_NODE,
        env(rocjitsu_config::env::DBT_HOST_NODE).as_deref(),
    )?;
    cfg.mode = config::Mode::parse(env(rocjitsu_config::env::DBT_MODE).as_deref())?;
    log::set_level(cfg.log_level);
    if let Some(v) = env(rocjitsu_config::env::DBT_LOG) {
        let spec = log::parse_spec(&v)?;
        if let Some(l) = spec.level {
            log::set_level(l);
            cfg.log_level = l;
        }
        if let Some(f) = spec.file {
            log::set_file(&f)?;
        }
    }
    Ok(Some(cfg))
}

fn on_load(table: *mut HsaApiTable, runtime_version: u64, failed: u64) -> bool {
    let cfg = match load_config() {
        Ok(Some(c)) => c,
        Ok(None) => return true,
        Err(e) => {
            log::write_line(log::Level::Error, format_args!("{e}"));
            return false;
        }
    };
    if table.is_null() {
        log::write_line(
            log::Level::Error,
            format_args!("OnLoad got a null API table"),
        );
        return false;
    }
    // SAFETY: ROCr hands a valid root table that lives as long as the runtime.
    let root = unsafe { &mut *table };
    log!(
        Info,
        "OnLoad: config {}, HSA API table major {} ({} bytes, runtime version {}), {} tool(s) failed before",
        cfg.path,
        root.version.major_id,
        root.version.minor_id,
        runtime_version,
        failed
    );
    if root.version.major_id != HSA_API_TABLE_MAJOR_VERSION {
        log::write_line(
            log::Level::Error,
            format_args!(
                "HSA API table major version {} (this library knows {HSA_API_TABLE_MAJOR_VERSION}); guest mode needs a ROCm 6 or 7 runtime",
                root.version.major_id
            ),
        );
        return false;
    }
    let has = |off: usize| (root.version.minor_id as usize) >= off + size_of::<*mut u8>();
    let core = if has(std::mem::offset_of!(HsaApiTable, core)) {
        root.core
    } else {
        std::ptr::null_mut()
    };
    let amd = if has(std::mem::offset_of!(HsaApiTable, amd_ext)) {
        root.amd_ext
    } else {
        std::ptr::null_mut()
    };
    let image = if has(std::mem::offset_of!(HsaApiTable, image_ext)) {
        root.image_ext
    } else {
        std::ptr::null_mut()
    };
    let version = |p: *const ApiTableVersion| {
        if p.is_null() {
            ApiTableVersion::default()
        } else {
            // SAFETY: each non-null sub-table is ROCr's, with a version header.
            unsafe { *p }
        }
    };
    let (cv, av, iv) = (
        version(core.cast()),
        version(amd.cast()),
        version(image.cast()),
    );
    if core.is_null() || cv.major_id != HSA_CORE_API_TABLE_MAJOR_VERSION {
        log::write_line(
            log::Level::Error,
            format_args!(
                "the runtime's core API table is missing or has major version {} (expected {HSA_CORE_API_TABLE_MAJOR_VERSION})",
                cv.major_id
            ),
        );
        return false;
    }
    let amd_ok = !amd.is_null() && av.major_id == HSA_AMD_EXT_API_TABLE_MAJOR_VERSION;
    let image_ok = !image.is_null() && iv.major_id == HSA_IMAGE_API_TABLE_MAJOR_VERSION;
    if !amd_ok {
        log!(
            Warn,
            "AMD extension table missing or major {}: its agent arguments are not redirected",
            av.major_id
        );
    }
    // SAFETY: the tables are ROCr's, at least `minor_id` bytes long.
    let orig = unsafe {
        Originals {
            core: copy_table(core, cv.minor_id),
            core_len: cv.minor_id,
            amd: if amd_ok {
                copy_table(amd, av.minor_id)
            } else {
                std::mem::zeroed()
            },
            amd_len: if amd_ok { av.minor_id } else { 0 },
            image: if image_ok {
                copy_table(image, iv.minor_id)
            } else {
                std::mem::zeroed()
            },
            image_len: if image_ok { iv.minor_id } else { 0 },
        }
    };
    let hotswap = cfg.mode == config::Mode::Hotswap;
    if STATE
        .set(State {
            config: cfg,
            orig,
            pair: OnceLock::new(),
        })
        .is_err()
    {
        log!(Warn, "OnLoad called twice; the first table stays hooked");
        return true;
    }
    if hotswap {
        // No agent is shadowed: only code-object loading is hooked.
        // SAFETY: the core table is ROCr's and writable during OnLoad.
        let n = unsafe {
            install(
                core.cast(),
                cv.minor_id,
                &hooks::core::hotswap_table(),
                "core",
            )
        };
        log!(
            Info,
            "hotswap mode: hooked {n} code-object entries; {} code objects loaded on a {} agent are translated",
            crate::state().config.selection.guest_isa,
            crate::state().config.selection.host_isa
        );
        return true;
    }
    // SAFETY: the tables are ROCr's and writable during OnLoad; lengths from their versions.
    let (nc, na, ni) = unsafe {
        (
            install(core.cast(), cv.minor_id, &hooks::core::table(), "core"),
            if amd_ok {
                install(amd.cast(), av.minor_id, &hooks::amd::table(), "amd_ext")
            } else {
                0
            },
            if image_ok {
                install(
                    image.cast(),
                    iv.minor_id,
                    &hooks::image::table(),
                    "image_ext",
                )
            } else {
                0
            },
        )
    };
    log!(
        Info,
        "hooked {nc} core entries (table major {}, {} bytes), {na} AMD extension entries ({} bytes, step {}), {ni} image entries ({} bytes)",
        cv.major_id,
        cv.minor_id,
        av.minor_id,
        av.step_id,
        iv.minor_id
    );
    if env(rocjitsu_config::env::DBT_SIGNAL_BACKTRACE)
        .is_some_and(|v| v == "1" || v.eq_ignore_ascii_case("true"))
    {
        backtrace::install();
    }
    true
}

/// The tools entry ROCr calls after loading its agents.
///
/// # Safety
/// Called by ROCr with its API table (or null).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn OnLoad(
    table: *mut HsaApiTable,
    runtime_version: u64,
    failed_tool_count: u64,
    _failed_tool_names: *const *const std::ffi::c_char,
) -> bool {
    catch_unwind(AssertUnwindSafe(|| {
        on_load(table, runtime_version, failed_tool_count)
    }))
    .unwrap_or_else(|_| {
        log::write_line(
            log::Level::Error,
            format_args!("internal error in OnLoad; guest mode is off"),
        );
        false
    })
}

/// The tools exit ROCr calls at shutdown; the runtime resets its table itself.
#[unsafe(no_mangle)]
pub extern "C" fn OnUnload() {
    let _ = catch_unwind(|| {
        if STATE.get().is_some() {
            log!(Info, "OnUnload");
            code::report_totals();
        }
    });
}

#[cfg(test)]
mod tests_fake;
