//! AMD extension entries (hsa_ext_amd.h) that take or return an agent.

use std::ffi::c_void;
use std::sync::{Mutex, OnceLock};

use crate::map::{PoolInfo, PoolMap};

use super::{exec, exec_list, hook, list_ptr, mapped_copy, public};
use crate::abi::*;

type PoolCallback = Option<unsafe extern "C" fn(Pool, *mut c_void) -> Status>;
type QueueErrorCallback = Option<unsafe extern "C" fn(Status, *mut Queue, *mut c_void)>;
type Alloc = Option<unsafe extern "C" fn(usize) -> *mut c_void>;
type EventCallback = unsafe extern "C" fn(*const AmdEvent, *mut c_void) -> Status;
type QueueNotifier = unsafe extern "C" fn(*const Queue, Agent, *mut c_void);

hook!(
    AmdExtTable,
    fn hsa_amd_coherency_get_type(agent: Agent, kind: *mut u32) {
        // SAFETY: forwards the caller's arguments with the agent mapped.
        unsafe { orig()(exec(agent), kind) }
    }
);

hook!(
    AmdExtTable,
    fn hsa_amd_coherency_set_type(agent: Agent, kind: u32) {
        // SAFETY: forwards the caller's arguments with the agent mapped.
        unsafe { orig()(exec(agent), kind) }
    }
);

hook!(
    AmdExtTable,
    fn hsa_amd_profiling_get_dispatch_time(agent: Agent, signal: Signal, time: *mut c_void) {
        // SAFETY: forwards the caller's arguments with the agent mapped.
        unsafe { orig()(exec(agent), signal, time) }
    }
);

hook!(
    AmdExtTable,
    fn hsa_amd_profiling_convert_tick_to_system_domain(
        agent: Agent,
        tick: u64,
        system_tick: *mut u64,
    ) {
        // SAFETY: forwards the caller's arguments with the agent mapped.
        unsafe { orig()(exec(agent), tick, system_tick) }
    }
);

/// The pools of an agent through the original entries, with segment and flags.
fn pools_of(agent: Agent) -> Vec<PoolInfo> {
    unsafe extern "C" fn collect(pool: Pool, data: *mut c_void) -> Status {
        // SAFETY: `data` is the Vec passed below, alive for the iteration.
        unsafe { (*data.cast::<Vec<Pool>>()).push(pool) };
        HSA_STATUS_SUCCESS
    }
    let mut pools: Vec<Pool> = Vec::new();
    // SAFETY: ROCr's entry with a callback that only pushes into `pools`.
    unsafe {
        hsa_amd_agent_iterate_memory_pools::orig()(agent, Some(collect), (&raw mut pools).cast())
    };
    pools
        .into_iter()
        .map(|pool| {
            let (mut segment, mut flags) = (0u32, 0u32);
            // SAFETY: both attributes are u32.
            unsafe {
                hsa_amd_memory_pool_get_info::orig()(
                    pool,
                    HSA_AMD_MEMORY_POOL_INFO_SEGMENT,
                    (&raw mut segment).cast(),
                );
                hsa_amd_memory_pool_get_info::orig()(
                    pool,
                    HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS,
                    (&raw mut flags).cast(),
                );
            }
            PoolInfo {
                pool,
                segment,
                flags,
            }
        })
        .collect()
}

static POOLS: OnceLock<PoolMap> = OnceLock::new();

/// The guest/host pool pairing, discovered on first use.
pub fn pools() -> &'static PoolMap {
    POOLS.get_or_init(|| {
        let Some(p) = crate::pair() else {
            return PoolMap::default();
        };
        let (guest, host) = (pools_of(p.guest), pools_of(p.host));
        let m = PoolMap::pair(&guest, &host);
        crate::log!(
            Debug,
            "memory pools: guest {:?}, host {:?}, paired (guest, host) {:?}",
            guest,
            host,
            m.pairs
        );
        m
    })
}

fn pool_exec(pool: Pool) -> Pool {
    pools().to_exec(pool)
}

struct PoolIteration {
    callback: unsafe extern "C" fn(Pool, *mut c_void) -> Status,
    data: *mut c_void,
}

unsafe extern "C" fn pool_trampoline(pool: Pool, data: *mut c_void) -> Status {
    // SAFETY: `data` is the PoolIteration of the iteration below.
    let it = unsafe { &*data.cast::<PoolIteration>() };
    // SAFETY: the application's callback with its data and the pool as it knows it.
    unsafe { (it.callback)(pools().to_public(pool), it.data) }
}

hook!(
    AmdExtTable,
    fn hsa_amd_agent_iterate_memory_pools(agent: Agent, callback: PoolCallback, data: *mut c_void) {
        let target = exec(agent);
        match callback {
            // The host's pools, each under its guest handle where paired.
            Some(cb) if target != agent => {
                let _ = pools(); // discovered before the runtime's iteration starts
                let mut it = PoolIteration { callback: cb, data };
                // SAFETY: the trampoline reads `it`, which outlives the call.
                unsafe { orig()(target, Some(pool_trampoline), (&raw mut it).cast()) }
            }
            // SAFETY: forwards the caller's arguments.
            _ => unsafe { orig()(target, callback, data) },
        }
    }
);

hook!(
    AmdExtTable,
    fn hsa_amd_memory_pool_get_info(pool: Pool, attribute: u32, value: *mut c_void) {
        let target = if crate::map::pool_info_from_guest(attribute) {
            pool
        } else {
            pool_exec(pool)
        };
        // SAFETY: forwards the caller's buffer with the pool mapped.
        unsafe { orig()(target, attribute, value) }
    }
);

hook!(
    AmdExtTable,
    fn hsa_amd_memory_pool_allocate(pool: Pool, size: usize, flags: u32, ptr: *mut *mut c_void) {
        // SAFETY: forwards the caller's arguments with the pool mapped.
        unsafe { orig()(pool_exec(pool), size, flags, ptr) }
    }
);

hook!(
    AmdExtTable,
    fn hsa_amd_memory_pool_can_migrate(src: Pool, dst: Pool, result: *mut bool) {
        // SAFETY: forwards the caller's arguments with the pools mapped.
        unsafe { orig()(pool_exec(src), pool_exec(dst), result) }
    }
);

hook!(
    AmdExtTable,
    fn hsa_amd_memory_migrate(ptr: *const c_void, pool: Pool, flags: u32) {
        // SAFETY: forwards the caller's arguments with the pool mapped.
        unsafe { orig()(ptr, pool_exec(pool), flags) }
    }
);

hook!(
    AmdExtTable,
    fn hsa_amd_vmem_handle_create(
        pool: Pool,
        size: usize,
        kind: u32,
        flags: u64,
        handle: *mut u64,
    ) {
        // SAFETY: forwards the caller's arguments with the pool mapped.
        unsafe { orig()(pool_exec(pool), size, kind, flags, handle) }
    }
);

hook!(
    AmdExtTable,
    fn hsa_amd_vmem_get_alloc_properties_from_handle(handle: u64, pool: *mut Pool, kind: *mut u32) {
        // SAFETY: forwards the caller's arguments.
        let s = unsafe { orig()(handle, pool, kind) };
        if s == HSA_STATUS_SUCCESS && !pool.is_null() {
            // SAFETY: ROCr wrote the handle's pool.
            unsafe { *pool = pools().to_public(*pool) };
        }
        s
    }
);

hook!(
    AmdExtTable,
    fn hsa_amd_memory_async_copy(
        dst: *mut c_void,
        dst_agent: Agent,
        src: *const c_void,
        src_agent: Agent,
        size: usize,
        num_dep_signals: u32,
        dep_signals: *const Signal,
        completion_signal: Signal,
    ) {
        // SAFETY: forwards the caller's arguments with the agents mapped.
        unsafe {
            orig()(
                dst,
                exec(dst_agent),
                src,
                exec(src_agent),
                size,
                num_dep_signals,
                dep_signals,
                completion_signal,
            )
        }
    }
);

hook!(
    AmdExtTable,
    fn hsa_amd_memory_async_copy_on_engine(
        dst: *mut c_void,
        dst_agent: Agent,
        src: *const c_void,
        src_agent: Agent,
        size: usize,
        num_dep_signals: u32,
        dep_signals: *const Signal,
        completion_signal: Signal,
        engine_id: u32,
        force_copy_on_sdma: bool,
    ) {
        // SAFETY: forwards the caller's arguments with the agents mapped.
        unsafe {
            orig()(
                dst,
                exec(dst_agent),
                src,
                exec(src_agent),
                size,
                num_dep_signals,
                dep_signals,
                completion_signal,
                engine_id,
                force_copy_on_sdma,
            )
        }
    }
);

hook!(
    AmdExtTable,
    fn hsa_amd_memory_copy_engine_status(
        dst_agent: Agent,
        src_agent: Agent,
        engine_ids_mask: *mut u32,
    ) {
        // SAFETY: forwards the caller's arguments with the agents mapped.
        unsafe { orig()(exec(dst_agent), exec(src_agent), engine_ids_mask) }
    }
);

hook!(
    AmdExtTable,
    fn hsa_amd_agent_memory_pool_get_info(
        agent: Agent,
        pool: Pool,
        attribute: u32,
        value: *mut c_void,
    ) {
        // SAFETY: forwards the caller's arguments with the agent and pool mapped.
        unsafe { orig()(exec(agent), pool_exec(pool), attribute, value) }
    }
);

hook!(
    AmdExtTable,
    fn hsa_amd_agents_allow_access(
        num_agents: u32,
        agents: *const Agent,
        flags: *const u32,
        ptr: *const c_void,
    ) {
        // SAFETY: `agents` holds `num_agents` agents (the API's contract).
        let mut list = unsafe { exec_list(agents, num_agents as usize) };
        // SAFETY: forwards the caller's arguments with the agents mapped.
        unsafe { orig()(num_agents, list_ptr(&mut list), flags, ptr) }
    }
);

hook!(
    AmdExtTable,
    fn hsa_amd_memory_lock(
        host_ptr: *mut c_void,
        size: usize,
        agents: *mut Agent,
        num_agent: i32,
        agent_ptr: *mut *mut c_void,
    ) {
        // SAFETY: `agents` holds `num_agent` agents (the API's contract).
        let mut list = unsafe { exec_list(agents, num_agent.max(0) as usize) };
        // SAFETY: forwards the caller's arguments with the agents mapped.
        unsafe { orig()(host_ptr, size, list_ptr(&mut list), num_agent, agent_ptr) }
    }
);

hook!(
    AmdExtTable,
    fn hsa_amd_memory_lock_to_pool(
        host_ptr: *mut c_void,
        size: usize,
        agents: *mut Agent,
        num_agent: i32,
        pool: Pool,
        flags: u32,
        agent_ptr: *mut *mut c_void,
    ) {
        // SAFETY: `agents` holds `num_agent` agents (the API's contract).
        let mut list = unsafe { exec_list(agents, num_agent.max(0) as usize) };
        // SAFETY: forwards the caller's arguments with the agents mapped.
        unsafe {
            orig()(
                host_ptr,
                size,
                list_ptr(&mut list),
                num_agent,
                pool_exec(pool),
                flags,
                agent_ptr,
            )
        }
    }
);

hook!(
    AmdExtTable,
    fn hsa_amd_interop_map_buffer(
        num_agents: u32,
        agents: *mut Agent,
        interop_handle: i32,
        flags: u32,
        size: *mut usize,
        ptr: *mut *mut c_void,
        metadata_size: *mut usize,
        metadata: *mut *const c_void,
    ) {
        // SAFETY: `agents` holds `num_agents` agents (the API's contract).
        let mut list = unsafe { exec_list(agents, num_agents as usize) };
        // SAFETY: forwards the caller's arguments with the agents mapped.
        unsafe {
            orig()(
                num_agents,
                list_ptr(&mut list),
                interop_handle,
                flags,
                size,
                ptr,
                metadata_size,
                metadata,
            )
        }
    }
);

hook!(
    AmdExtTable,
    fn hsa_amd_image_create(
        agent: Agent,
        descriptor: *const c_void,
        layout: *const c_void,
        data: *const c_void,
        access: u32,
        image: *mut Image,
    ) {
        // SAFETY: forwards the caller's arguments with the agent mapped.
        unsafe { orig()(exec(agent), descriptor, layout, data, access, image) }
    }
);

hook!(
    AmdExtTable,
    fn hsa_amd_pointer_info(
        ptr: *const c_void,
        info: *mut PointerInfo,
        alloc: Alloc,
        num_agents_accessible: *mut u32,
        accessible: *mut *mut Agent,
    ) {
        // SAFETY: forwards the caller's arguments to ROCr.
        let s = unsafe { orig()(ptr, info, alloc, num_agents_accessible, accessible) };
        if s != HSA_STATUS_SUCCESS {
            return s;
        }
        let owner_end = std::mem::offset_of!(PointerInfo, agent_owner) + size_of::<Agent>();
        // SAFETY: `info` is the caller's structure; its `size` (written back by ROCr)
        // says which members the runtime filled.
        unsafe {
            if !info.is_null() && (*info).size as usize >= owner_end {
                (*info).agent_owner = public((*info).agent_owner);
            }
        }
        if !num_agents_accessible.is_null() && !accessible.is_null() {
            // SAFETY: ROCr allocated (with the caller's allocator) and filled this list.
            unsafe {
                let (n, list) = (*num_agents_accessible as usize, *accessible);
                if !list.is_null() {
                    for a in std::slice::from_raw_parts_mut(list, n) {
                        *a = public(*a);
                    }
                }
            }
        }
        s
    }
);

hook!(
    AmdExtTable,
    fn hsa_amd_ipc_memory_attach(
        handle: *const c_void,
        len: usize,
        num_agents: u32,
        mapping_agents: *const Agent,
        mapped_ptr: *mut *mut c_void,
    ) {
        // SAFETY: `mapping_agents` holds `num_agents` agents (the API's contract).
        let mut list = unsafe { exec_list(mapping_agents, num_agents as usize) };
        // SAFETY: forwards the caller's arguments with the agents mapped.
        unsafe { orig()(handle, len, num_agents, list_ptr(&mut list), mapped_ptr) }
    }
);

hook!(
    AmdExtTable,
    fn hsa_amd_signal_create(
        initial: i64,
        num_consumers: u32,
        consumers: *const Agent,
        attributes: u64,
        signal: *mut Signal,
    ) {
        // SAFETY: `consumers` holds `num_consumers` agents (the API's contract).
        let mut list = unsafe { exec_list(consumers, num_consumers as usize) };
        // SAFETY: forwards the caller's arguments with the consumers mapped.
        unsafe {
            orig()(
                initial,
                num_consumers,
                list_ptr(&mut list),
                attributes,
                signal,
            )
        }
    }
);

/// A handler registered by the application, kept for the process's life
/// (ROCr offers no way to unregister one).
struct EventHandler {
    callback: EventCallback,
    data: *mut c_void,
}

unsafe extern "C" fn event_trampoline(event: *const AmdEvent, data: *mut c_void) -> Status {
    // SAFETY: `data` is a leaked EventHandler registered below.
    let h = unsafe { &*data.cast::<EventHandler>() };
    if event.is_null() {
        // SAFETY: the application's handler with its own data.
        return unsafe { (h.callback)(event, h.data) };
    }
    // SAFETY: ROCr passes a complete hsa_amd_event_t.
    let mut copy = unsafe { *event };
    if HSA_AMD_EVENT_TYPES_WITH_AGENT.contains(&copy.event_type) {
        copy.agent = public(copy.agent);
    }
    // SAFETY: the application's handler, given the event with the agent it knows.
    unsafe { (h.callback)(&copy, h.data) }
}

hook!(
    AmdExtTable,
    fn hsa_amd_register_system_event_handler(callback: Option<EventCallback>, data: *mut c_void) {
        let Some(cb) = callback else {
            // SAFETY: forwards the caller's arguments; ROCr rejects the null callback.
            return unsafe { orig()(callback, data) };
        };
        let h = Box::into_raw(Box::new(EventHandler { callback: cb, data }));
        // SAFETY: the trampoline reads the leaked handler.
        let s = unsafe { orig()(Some(event_trampoline), h.cast()) };
        if s != HSA_STATUS_SUCCESS {
            // SAFETY: not registered, so nothing else holds it.
            drop(unsafe { Box::from_raw(h) });
        }
        s
    }
);

hook!(
    AmdExtTable,
    fn hsa_amd_queue_intercept_create(
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
    AmdExtTable,
    fn hsa_amd_memory_async_copy_rect(
        dst: *const c_void,
        dst_offset: *const c_void,
        src: *const c_void,
        src_offset: *const c_void,
        range: *const c_void,
        copy_agent: Agent,
        dir: u32,
        num_dep_signals: u32,
        dep_signals: *const Signal,
        completion_signal: Signal,
    ) {
        // SAFETY: forwards the caller's arguments with the agent mapped.
        unsafe {
            orig()(
                dst,
                dst_offset,
                src,
                src_offset,
                range,
                exec(copy_agent),
                dir,
                num_dep_signals,
                dep_signals,
                completion_signal,
            )
        }
    }
);

/// The application's runtime-queue notifier (ROCr keeps one).
static QUEUE_NOTIFIER: Mutex<Option<(QueueNotifier, usize)>> = Mutex::new(None);

unsafe extern "C" fn queue_notifier_trampoline(
    queue: *const Queue,
    agent: Agent,
    _data: *mut c_void,
) {
    let n = *QUEUE_NOTIFIER.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((cb, data)) = n {
        // SAFETY: the application's notifier with its own data and the agent it knows.
        unsafe { cb(queue, public(agent), data as *mut c_void) }
    }
}

hook!(
    AmdExtTable,
    fn hsa_amd_runtime_queue_create_register(callback: Option<QueueNotifier>, data: *mut c_void) {
        let Some(cb) = callback else {
            // SAFETY: forwards the caller's arguments.
            return unsafe { orig()(callback, data) };
        };
        *QUEUE_NOTIFIER.lock().unwrap_or_else(|e| e.into_inner()) = Some((cb, data as usize));
        // SAFETY: the trampoline reads the notifier stored above.
        unsafe { orig()(Some(queue_notifier_trampoline), std::ptr::null_mut()) }
    }
);

hook!(
    AmdExtTable,
    fn hsa_amd_svm_attributes_set(
        ptr: *mut c_void,
        size: usize,
        attributes: *mut SvmAttributePair,
        count: usize,
    ) {
        // SAFETY: `attributes` is null or holds `count` pairs (the API's
        // contract).
        let list = unsafe {
            mapped_copy(attributes, count, |p| {
                if svm_attribute_is_agent(p.attribute) {
                    p.value = exec(Agent { handle: p.value }).handle;
                }
            })
        };
        let Some(mut list) = list else {
            // SAFETY: forwards the caller's arguments.
            return unsafe { orig()(ptr, size, attributes, count) };
        };
        // SAFETY: forwards a mapped copy of the caller's list.
        unsafe { orig()(ptr, size, list.as_mut_ptr(), count) }
    }
);

hook!(
    AmdExtTable,
    fn hsa_amd_svm_attributes_get(
        ptr: *mut c_void,
        size: usize,
        attributes: *mut SvmAttributePair,
        count: usize,
    ) {
        if attributes.is_null() {
            // SAFETY: forwards the caller's arguments.
            return unsafe { orig()(ptr, size, attributes, count) };
        }
        // SAFETY: `attributes` holds `count` pairs the runtime reads and rewrites.
        let list = unsafe { std::slice::from_raw_parts_mut(attributes, count) };
        for p in list.iter_mut() {
            if svm_attribute_is_agent(p.attribute) {
                p.value = exec(Agent { handle: p.value }).handle;
            }
        }
        // SAFETY: forwards the caller's list, agents mapped in place.
        let s = unsafe { orig()(ptr, size, attributes, count) };
        for p in list.iter_mut() {
            if svm_attribute_is_agent(p.attribute) {
                p.value = public(Agent { handle: p.value }).handle;
            }
        }
        s
    }
);

hook!(
    AmdExtTable,
    fn hsa_amd_svm_prefetch_async(
        ptr: *mut c_void,
        size: usize,
        agent: Agent,
        num_dep_signals: u32,
        dep_signals: *const Signal,
        completion_signal: Signal,
    ) {
        // SAFETY: forwards the caller's arguments with the agent mapped.
        unsafe {
            orig()(
                ptr,
                size,
                exec(agent),
                num_dep_signals,
                dep_signals,
                completion_signal,
            )
        }
    }
);

hook!(
    AmdExtTable,
    fn hsa_amd_spm_acquire(agent: Agent) {
        // SAFETY: forwards the caller's arguments with the agent mapped.
        unsafe { orig()(exec(agent)) }
    }
);

hook!(
    AmdExtTable,
    fn hsa_amd_spm_release(agent: Agent) {
        // SAFETY: forwards the caller's arguments with the agent mapped.
        unsafe { orig()(exec(agent)) }
    }
);

hook!(
    AmdExtTable,
    fn hsa_amd_spm_set_dest_buffer(
        agent: Agent,
        size_in_bytes: usize,
        timeout: *mut u32,
        size_copied: *mut u32,
        dest: *mut c_void,
        is_data_loss: *mut bool,
    ) {
        // SAFETY: forwards the caller's arguments with the agent mapped.
        unsafe {
            orig()(
                exec(agent),
                size_in_bytes,
                timeout,
                size_copied,
                dest,
                is_data_loss,
            )
        }
    }
);

hook!(
    AmdExtTable,
    fn hsa_amd_vmem_set_access(
        va: *mut c_void,
        size: usize,
        desc: *const MemoryAccessDesc,
        desc_cnt: usize,
    ) {
        // SAFETY: `desc` is null or holds `desc_cnt` descriptors (the API's
        // contract).
        let Some(list) = (unsafe { mapped_copy(desc, desc_cnt, |d| d.agent = exec(d.agent)) })
        else {
            // SAFETY: forwards the caller's arguments.
            return unsafe { orig()(va, size, desc, desc_cnt) };
        };
        // SAFETY: forwards a mapped copy of the caller's descriptors.
        unsafe { orig()(va, size, list.as_ptr(), desc_cnt) }
    }
);

hook!(
    AmdExtTable,
    fn hsa_amd_vmem_get_access(va: *mut c_void, perms: *mut u32, agent: Agent) {
        // SAFETY: forwards the caller's arguments with the agent mapped.
        unsafe { orig()(va, perms, exec(agent)) }
    }
);

hook!(
    AmdExtTable,
    fn hsa_amd_agent_set_async_scratch_limit(agent: Agent, threshold: usize) {
        // SAFETY: forwards the caller's arguments with the agent mapped.
        unsafe { orig()(exec(agent), threshold) }
    }
);

hook!(
    AmdExtTable,
    fn hsa_amd_queue_get_info(queue: *mut Queue, attribute: u32, value: *mut c_void) {
        // SAFETY: forwards the caller's arguments.
        let s = unsafe { orig()(queue, attribute, value) };
        if s == HSA_STATUS_SUCCESS && attribute == HSA_AMD_QUEUE_INFO_AGENT && !value.is_null() {
            // SAFETY: for this attribute the value is the hsa_agent_t the runtime wrote.
            unsafe { *value.cast::<Agent>() = public(*value.cast::<Agent>()) };
        }
        s
    }
);

hook!(
    AmdExtTable,
    fn hsa_amd_memory_get_preferred_copy_engine(
        dst_agent: Agent,
        src_agent: Agent,
        recommended_ids_mask: *mut u32,
    ) {
        // SAFETY: forwards the caller's arguments with the agents mapped.
        unsafe { orig()(exec(dst_agent), exec(src_agent), recommended_ids_mask) }
    }
);

/// The entries installed in the AMD extension table.
pub fn table() -> Vec<(usize, Fp)> {
    vec![
        hsa_amd_coherency_get_type::entry(),
        hsa_amd_coherency_set_type::entry(),
        hsa_amd_profiling_get_dispatch_time::entry(),
        hsa_amd_profiling_convert_tick_to_system_domain::entry(),
        hsa_amd_agent_iterate_memory_pools::entry(),
        hsa_amd_memory_pool_get_info::entry(),
        hsa_amd_memory_pool_allocate::entry(),
        hsa_amd_memory_pool_can_migrate::entry(),
        hsa_amd_memory_migrate::entry(),
        hsa_amd_vmem_handle_create::entry(),
        hsa_amd_vmem_get_alloc_properties_from_handle::entry(),
        hsa_amd_memory_async_copy::entry(),
        hsa_amd_memory_async_copy_on_engine::entry(),
        hsa_amd_memory_copy_engine_status::entry(),
        hsa_amd_agent_memory_pool_get_info::entry(),
        hsa_amd_agents_allow_access::entry(),
        hsa_amd_memory_lock::entry(),
        hsa_amd_memory_lock_to_pool::entry(),
        hsa_amd_interop_map_buffer::entry(),
        hsa_amd_image_create::entry(),
        hsa_amd_pointer_info::entry(),
        hsa_amd_ipc_memory_attach::entry(),
        hsa_amd_signal_create::entry(),
        hsa_amd_register_system_event_handler::entry(),
        hsa_amd_queue_intercept_create::entry(),
        hsa_amd_memory_async_copy_rect::entry(),
        hsa_amd_runtime_queue_create_register::entry(),
        hsa_amd_svm_attributes_set::entry(),
        hsa_amd_svm_attributes_get::entry(),
        hsa_amd_svm_prefetch_async::entry(),
        hsa_amd_spm_acquire::entry(),
        hsa_amd_spm_release::entry(),
        hsa_amd_spm_set_dest_buffer::entry(),
        hsa_amd_vmem_set_access::entry(),
        hsa_amd_vmem_get_access::entry(),
        hsa_amd_agent_set_async_scratch_limit::entry(),
        hsa_amd_queue_get_info::entry(),
        hsa_amd_memory_get_preferred_copy_engine::entry(),
    ]
}
