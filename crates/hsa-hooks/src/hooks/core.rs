//! Core API entries (hsa.h) that take or return an agent.

use std::ffi::{c_char, c_void};

use super::{exec, exec_list, hook, list_ptr, public};
use crate::abi::*;

type AgentCallback = Option<unsafe extern "C" fn(Agent, *mut c_void) -> Status>;
type QueueErrorCallback = Option<unsafe extern "C" fn(Status, *mut Queue, *mut c_void)>;
type RegionCallback = Option<unsafe extern "C" fn(Region, *mut c_void) -> Status>;
type AgentSymbolCallback =
    Option<unsafe extern "C" fn(Executable, Agent, Symbol, *mut c_void) -> Status>;

/// Every agent the runtime knows, through the original entry.
pub fn all_agents() -> Result<Vec<Agent>, Status> {
    unsafe extern "C" fn collect(agent: Agent, data: *mut c_void) -> Status {
        // SAFETY: `data` is the Vec passed below, alive for the iteration.
        unsafe { (*data.cast::<Vec<Agent>>()).push(agent) };
        HSA_STATUS_SUCCESS
    }
    let mut out: Vec<Agent> = Vec::new();
    // SAFETY: ROCr's entry with a callback that only pushes into `out`.
    let s = unsafe { hsa_iterate_agents::orig()(Some(collect), (&raw mut out).cast()) };
    if s == HSA_STATUS_SUCCESS {
        Ok(out)
    } else {
        Err(s)
    }
}

/// `hsa_agent_get_info` through the original entry (no mapping).
///
/// # Safety
/// `value` must hold the attribute's value.
pub unsafe fn original_agent_info(agent: Agent, attribute: u32, value: *mut c_void) -> Status {
    // SAFETY: the caller passes a buffer large enough for the attribute.
    unsafe { hsa_agent_get_info::orig()(agent, attribute, value) }
}

hook!(
    CoreApiTable,
    fn hsa_iterate_agents(callback: AgentCallback, data: *mut c_void) {
        let Some(pair) = crate::pair() else {
            // SAFETY: forwards the caller's arguments to ROCr.
            return unsafe { orig()(callback, data) };
        };
        let Some(cb) = callback else {
            return HSA_STATUS_ERROR_INVALID_ARGUMENT;
        };
        let agents = match all_agents() {
            Ok(a) => a,
            Err(s) => return s,
        };
        for agent in pair.shadow(&agents) {
            // SAFETY: the application's callback with its own data, as ROCr would call it.
            let s = unsafe { cb(agent, data) };
            if s != HSA_STATUS_SUCCESS {
                return s;
            }
        }
        HSA_STATUS_SUCCESS
    }
);

hook!(
    CoreApiTable,
    fn hsa_agent_get_info(agent: Agent, attribute: u32, value: *mut c_void) {
        let target = match crate::pair() {
            Some(p) if agent == p.guest && crate::map::agent_info_from_host(attribute) => p.host,
            _ => agent,
        };
        // SAFETY: forwards the caller's buffer to ROCr.
        unsafe { orig()(target, attribute, value) }
    }
);

hook!(
    CoreApiTable,
    fn hsa_queue_create(
        agent: Agent,
        size: u32,
        kind: u32,
        callback: QueueErrorCallback,
        data: *mut c_void,
        private_segment_size: u32,
        group_segment_size: u32,
        queue: *mut *mut Queue,
    ) {
        // SAFETY: forwards the caller's arguments with the agent mapped.
        unsafe {
            orig()(
                exec(agent),
                size,
                kind,
                callback,
                data,
                private_segment_size,
                group_segment_size,
                queue,
            )
        }
    }
);

hook!(
    CoreApiTable,
    fn hsa_agent_iterate_regions(agent: Agent, callback: RegionCallback, data: *mut c_void) {
        // SAFETY: forwards the caller's arguments with the agent mapped.
        unsafe { orig()(exec(agent), callback, data) }
    }
);

hook!(
    CoreApiTable,
    fn hsa_memory_assign_agent(ptr: *mut c_void, agent: Agent, access: u32) {
        // SAFETY: forwards the caller's arguments with the agent mapped.
        unsafe { orig()(ptr, exec(agent), access) }
    }
);

hook!(
    CoreApiTable,
    fn hsa_signal_create(
        initial: i64,
        num_consumers: u32,
        consumers: *const Agent,
        signal: *mut Signal,
    ) {
        // SAFETY: `consumers` holds `num_consumers` agents (the API's contract).
        let mut list = unsafe { exec_list(consumers, num_consumers as usize) };
        // SAFETY: forwards the caller's arguments with the consumers mapped.
        unsafe { orig()(initial, num_consumers, list_ptr(&mut list), signal) }
    }
);

hook!(
    CoreApiTable,
    fn hsa_executable_load_code_object(
        executable: Executable,
        agent: Agent,
        code_object: CodeObject,
        options: *const c_char,
    ) {
        if crate::pair().is_some_and(|p| p.guest == agent) {
            crate::log::write_line(
                crate::log::Level::Error,
                format_args!(
                    "hsa_executable_load_code_object (deprecated v1.0 code objects) on the guest agent is not translated; use a code object reader and hsa_executable_load_agent_code_object"
                ),
            );
            return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
        }
        // SAFETY: forwards the caller's arguments.
        unsafe { orig()(executable, agent, code_object, options) }
    }
);

hook!(
    CoreApiTable,
    fn hsa_executable_agent_global_variable_define(
        executable: Executable,
        agent: Agent,
        name: *const c_char,
        address: *mut c_void,
    ) {
        // SAFETY: forwards the caller's arguments with the agent mapped.
        unsafe { orig()(executable, exec(agent), name, address) }
    }
);

hook!(
    CoreApiTable,
    fn hsa_executable_get_symbol(
        executable: Executable,
        module_name: *const c_char,
        symbol_name: *const c_char,
        agent: Agent,
        call_convention: i32,
        symbol: *mut Symbol,
    ) {
        // SAFETY: forwards the caller's arguments with the agent mapped.
        unsafe {
            orig()(
                executable,
                module_name,
                symbol_name,
                exec(agent),
                call_convention,
                symbol,
            )
        }
    }
);

hook!(
    CoreApiTable,
    fn hsa_executable_symbol_get_info(symbol: Symbol, attribute: u32, value: *mut c_void) {
        // SAFETY: forwards the caller's buffer to ROCr.
        let s = unsafe { orig()(symbol, attribute, value) };
        if s == HSA_STATUS_SUCCESS
            && attribute == HSA_EXECUTABLE_SYMBOL_INFO_AGENT
            && !value.is_null()
        {
            // SAFETY: for this attribute the value is an hsa_agent_t the runtime just wrote.
            unsafe { *value.cast::<Agent>() = public(*value.cast::<Agent>()) };
        }
        s
    }
);

hook!(
    CoreApiTable,
    fn hsa_executable_get_symbol_by_name(
        executable: Executable,
        name: *const c_char,
        agent: *const Agent,
        symbol: *mut Symbol,
    ) {
        // SAFETY: a non-null `agent` points to an agent (the API's contract).
        let mapped = (!agent.is_null()).then(|| exec(unsafe { *agent }));
        let agent_ptr = mapped
            .as_ref()
            .map_or(std::ptr::null(), |a| a as *const Agent);
        // SAFETY: forwards the caller's arguments with the agent mapped.
        unsafe { orig()(executable, name, agent_ptr, symbol) }
    }
);

struct SymbolIteration {
    callback: unsafe extern "C" fn(Executable, Agent, Symbol, *mut c_void) -> Status,
    data: *mut c_void,
}

unsafe extern "C" fn agent_symbol_trampoline(
    e: Executable,
    agent: Agent,
    symbol: Symbol,
    data: *mut c_void,
) -> Status {
    // SAFETY: `data` is the SymbolIteration of the iteration below, alive for its duration.
    let it = unsafe { &*data.cast::<SymbolIteration>() };
    // SAFETY: the application's callback with its own data, the agent as it knows it.
    unsafe { (it.callback)(e, public(agent), symbol, it.data) }
}

hook!(
    CoreApiTable,
    fn hsa_executable_iterate_agent_symbols(
        executable: Executable,
        agent: Agent,
        callback: AgentSymbolCallback,
        data: *mut c_void,
    ) {
        let Some(cb) = callback else {
            // SAFETY: forwards the caller's arguments; ROCr rejects the null callback.
            return unsafe { orig()(executable, exec(agent), callback, data) };
        };
        let mut it = SymbolIteration { callback: cb, data };
        // SAFETY: the trampoline reads `it`, which outlives the call.
        unsafe {
            orig()(
                executable,
                exec(agent),
                Some(agent_symbol_trampoline),
                (&raw mut it).cast(),
            )
        }
    }
);

hook!(
    CoreApiTable,
    fn hsa_system_get_major_extension_table(
        extension: u16,
        version_major: u16,
        table_length: usize,
        table: *mut c_void,
    ) {
        // SAFETY: forwards the caller's buffer to ROCr.
        let s = unsafe { orig()(extension, version_major, table_length, table) };
        if s == HSA_STATUS_SUCCESS && extension == HSA_EXTENSION_AMD_LOADER && version_major == 1 {
            // SAFETY: ROCr filled `table_length` bytes of a loader table at `table`.
            unsafe { crate::hooks::loader::patch(table, table_length) };
        }
        s
    }
);

hook!(
    CoreApiTable,
    fn hsa_system_get_extension_table(
        extension: u16,
        version_major: u16,
        version_minor: u16,
        table: *mut c_void,
    ) {
        // SAFETY: forwards the caller's buffer to ROCr.
        let s = unsafe { orig()(extension, version_major, version_minor, table) };
        if s == HSA_STATUS_SUCCESS && extension == HSA_EXTENSION_AMD_LOADER && version_major == 1 {
            if let Some(&len) = LOADER_TABLE_SIZES.get(version_minor as usize) {
                // SAFETY: ROCr filled the loader table of that minor version at `table`.
                unsafe { crate::hooks::loader::patch(table, len) };
            }
        }
        s
    }
);

hook!(
    CoreApiTable,
    fn hsa_code_object_reader_create_from_file(file: i32, reader: *mut Reader) {
        // SAFETY: the caller's out pointer (the API's contract).
        unsafe { crate::code::create_from_file(file, 0, 0, reader) }
    }
);

hook!(
    CoreApiTable,
    fn hsa_code_object_reader_create_from_memory(
        code_object: *const c_void,
        size: usize,
        reader: *mut Reader,
    ) {
        // SAFETY: forwards the caller's arguments to ROCr.
        let s = unsafe { orig()(code_object, size, reader) };
        if s == HSA_STATUS_SUCCESS && !reader.is_null() {
            // SAFETY: ROCr wrote the new reader.
            crate::code::remember_memory_reader(unsafe { *reader }, code_object, size);
        }
        s
    }
);

hook!(
    CoreApiTable,
    fn hsa_code_object_reader_destroy(reader: Reader) {
        // SAFETY: forwards the caller's reader to ROCr.
        let s = unsafe { orig()(reader) };
        if s == HSA_STATUS_SUCCESS {
            crate::code::forget_reader(reader);
        }
        s
    }
);

hook!(
    CoreApiTable,
    fn hsa_executable_load_agent_code_object(
        executable: Executable,
        agent: Agent,
        reader: Reader,
        options: *const c_char,
        loaded_code_object: *mut LoadedCodeObject,
    ) {
        if crate::state().config.mode == crate::config::Mode::Hotswap {
            // SAFETY: the caller's arguments (the API's contract).
            return unsafe {
                crate::code::load_hotswap(executable, agent, reader, options, loaded_code_object)
            };
        }
        match crate::pair() {
            Some(p) if agent == p.guest => {
                // SAFETY: the caller's arguments (the API's contract).
                unsafe {
                    crate::code::load_guest(p, executable, reader, options, loaded_code_object)
                }
            }
            _ => {
                // SAFETY: forwards the caller's arguments to ROCr.
                let s = unsafe { orig()(executable, agent, reader, options, loaded_code_object) };
                if s == HSA_STATUS_SUCCESS {
                    crate::code::loaded_elsewhere(executable, reader);
                }
                s
            }
        }
    }
);

hook!(
    CoreApiTable,
    fn hsa_executable_destroy(executable: Executable) {
        // SAFETY: forwards the caller's executable to ROCr.
        let s = unsafe { orig()(executable) };
        if s == HSA_STATUS_SUCCESS {
            crate::code::forget_executable(executable);
        }
        s
    }
);

/// The entries hotswap mode hooks: code-object readers and loading only.
pub fn hotswap_table() -> Vec<(usize, Fp)> {
    vec![
        hsa_code_object_reader_create_from_file::entry(),
        hsa_code_object_reader_create_from_memory::entry(),
        hsa_code_object_reader_destroy::entry(),
        hsa_executable_load_agent_code_object::entry(),
        hsa_executable_destroy::entry(),
    ]
}

/// The entries installed in the core table.
pub fn table() -> Vec<(usize, Fp)> {
    vec![
        hsa_iterate_agents::entry(),
        hsa_agent_get_info::entry(),
        hsa_queue_create::entry(),
        hsa_agent_iterate_regions::entry(),
        hsa_memory_assign_agent::entry(),
        hsa_signal_create::entry(),
        hsa_executable_load_code_object::entry(),
        hsa_executable_agent_global_variable_define::entry(),
        hsa_executable_get_symbol::entry(),
        hsa_executable_symbol_get_info::entry(),
        hsa_executable_get_symbol_by_name::entry(),
        hsa_executable_iterate_agent_symbols::entry(),
        hsa_system_get_major_extension_table::entry(),
        hsa_system_get_extension_table::entry(),
        hsa_code_object_reader_create_from_file::entry(),
        hsa_code_object_reader_create_from_memory::entry(),
        hsa_code_object_reader_destroy::entry(),
        hsa_executable_load_agent_code_object::entry(),
        hsa_executable_destroy::entry(),
    ]
}
