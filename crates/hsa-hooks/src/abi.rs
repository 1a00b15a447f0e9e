//! The C ABI of ROCr's tools interface, written from the layout facts of
//! ROCm's `hsa_api_trace.h`, `hsa.h`, `hsa_ext_amd.h` and
//! `hsa_ven_amd_loader.h` (ROCm 6.4.3).
//!
//! Every API table starts with an [`ApiTableVersion`] whose `minor_id` is the
//! size in bytes of the table the runtime was built with, followed by
//! function pointers in header order. A runtime with a shorter table has
//! fewer entries; one with a longer table has entries this crate does not
//! know, which it never touches. [`slot_present`] is the check.

use std::ffi::c_void;

/// `hsa_status_t`.
pub type Status = u32;

pub const HSA_STATUS_SUCCESS: Status = 0x0;
pub const HSA_STATUS_INFO_BREAK: Status = 0x1;
pub const HSA_STATUS_ERROR: Status = 0x1000;
pub const HSA_STATUS_ERROR_INVALID_ARGUMENT: Status = 0x1001;
pub const HSA_STATUS_ERROR_OUT_OF_RESOURCES: Status = 0x1008;
pub const HSA_STATUS_ERROR_INVALID_CODE_OBJECT: Status = 0x1010;
pub const HSA_STATUS_ERROR_INVALID_FILE: Status = 0x1020;
pub const HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER: Status = 0x1021;

/// An untyped table slot: a C function pointer or null.
pub type Fp = Option<unsafe extern "C" fn()>;

macro_rules! handle {
    ($($(#[$m:meta])* $name:ident),* $(,)?) => {$(
        $(#[$m])*
        #[repr(transparent)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
        pub struct $name {
            pub handle: u64,
        }
    )*};
}

handle!(
    /// `hsa_agent_t`.
    Agent,
    /// `hsa_executable_t`.
    Executable,
    /// `hsa_code_object_reader_t`.
    Reader,
    /// `hsa_executable_symbol_t`.
    Symbol,
    /// `hsa_loaded_code_object_t`.
    LoadedCodeObject,
    /// `hsa_signal_t`.
    Signal,
    /// `hsa_region_t`.
    Region,
    /// `hsa_amd_memory_pool_t`.
    Pool,
    /// `hsa_ext_image_t`.
    Image,
    /// `hsa_ext_sampler_t`.
    Sampler,
    /// `hsa_code_object_t` (deprecated code objects).
    CodeObject,
);

/// `hsa_queue_t`, only ever handled by pointer.
#[repr(C)]
pub struct Queue {
    _opaque: [u8; 0],
}

/// `ApiTableVersion`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ApiTableVersion {
    pub major_id: u32,
    /// The size in bytes of the table.
    pub minor_id: u32,
    pub step_id: u32,
    pub reserved: u32,
}

/// `HsaApiTable`, the root table handed to `OnLoad`.
#[repr(C)]
pub struct HsaApiTable {
    pub version: ApiTableVersion,
    pub core: *mut CoreApiTable,
    pub amd_ext: *mut AmdExtTable,
    pub finalizer_ext: *mut c_void,
    pub image_ext: *mut ImageExtTable,
    pub tools: *mut c_void,
    pub pc_sampling_ext: *mut c_void,
}

/// The major versions this crate's layouts describe (hsa_api_trace_version.h).
pub const HSA_API_TABLE_MAJOR_VERSION: u32 = 0x03;
pub const HSA_CORE_API_TABLE_MAJOR_VERSION: u32 = 0x02;
pub const HSA_AMD_EXT_API_TABLE_MAJOR_VERSION: u32 = 0x02;
pub const HSA_IMAGE_API_TABLE_MAJOR_VERSION: u32 = 0x02;

/// Whether a table whose version says `table_len` bytes holds the 8-byte
/// slot at `offset`.
pub const fn slot_present(table_len: u32, offset: usize) -> bool {
    offset >= size_of::<ApiTableVersion>() && offset + size_of::<Fp>() <= table_len as usize
}

// hsa_agent_info_t and hsa_amd_agent_info_t values used here.
pub const HSA_AGENT_INFO_NAME: u32 = 0;
pub const HSA_AGENT_INFO_QUEUES_MAX: u32 = 12;
pub const HSA_AGENT_INFO_QUEUE_MIN_SIZE: u32 = 13;
pub const HSA_AGENT_INFO_QUEUE_MAX_SIZE: u32 = 14;
pub const HSA_AGENT_INFO_QUEUE_TYPE: u32 = 15;
pub const HSA_AGENT_INFO_NODE: u32 = 16;
pub const HSA_AGENT_INFO_DEVICE: u32 = 17;
pub const HSA_AMD_AGENT_INFO_DRIVER_NODE_ID: u32 = 0xA004;
pub const HSA_AMD_AGENT_INFO_HDP_FLUSH: u32 = 0xA00E;
pub const HSA_AMD_AGENT_INFO_COOPERATIVE_QUEUES: u32 = 0xA010;
pub const HSA_AMD_AGENT_INFO_SVM_DIRECT_HOST_ACCESS: u32 = 0xA013;
pub const HSA_AMD_AGENT_INFO_MEMORY_AVAIL: u32 = 0xA015;
pub const HSA_AMD_AGENT_INFO_TIMESTAMP_FREQUENCY: u32 = 0xA016;
pub const HSA_AMD_AGENT_INFO_NUM_SDMA_ENG: u32 = 0xA10A;
pub const HSA_AMD_AGENT_INFO_NUM_SDMA_XGMI_ENG: u32 = 0xA10B;
pub const HSA_AMD_AGENT_INFO_IOMMU_SUPPORT: u32 = 0xA110;
pub const HSA_AMD_AGENT_INFO_DRIVER_UID: u32 = 0xA112;
pub const HSA_AMD_AGENT_INFO_MEMORY_PROPERTIES: u32 = 0xA114;
pub const HSA_AMD_AGENT_INFO_SCRATCH_LIMIT_MAX: u32 = 0xA116;
pub const HSA_AMD_AGENT_INFO_SCRATCH_LIMIT_CURRENT: u32 = 0xA117;

// hsa_amd_memory_pool_info_t values used here.
pub const HSA_AMD_MEMORY_POOL_INFO_SEGMENT: u32 = 0;
pub const HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS: u32 = 1;
pub const HSA_AMD_MEMORY_POOL_INFO_SIZE: u32 = 2;
pub const HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE: u32 = 16;

/// `HSA_DEVICE_TYPE_CPU` of hsa_device_type_t.
pub const HSA_DEVICE_TYPE_CPU: u32 = 0;
/// `HSA_DEVICE_TYPE_GPU` of hsa_device_type_t.
pub const HSA_DEVICE_TYPE_GPU: u32 = 1;
/// `HSA_EXECUTABLE_SYMBOL_INFO_AGENT` of hsa_executable_symbol_info_t.
pub const HSA_EXECUTABLE_SYMBOL_INFO_AGENT: u32 = 20;
/// `HSA_AMD_QUEUE_INFO_AGENT` of hsa_queue_info_attribute_t.
pub const HSA_AMD_QUEUE_INFO_AGENT: u32 = 0;
/// `HSA_EXTENSION_AMD_LOADER` of hsa_extension_t.
pub const HSA_EXTENSION_AMD_LOADER: u16 = 0x201;
/// `HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_AGENT`.
pub const HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_AGENT: u32 = 3;

// hsa_amd_svm_attribute_t values whose value is an agent handle.
pub const HSA_AMD_SVM_ATTRIB_PREFERRED_LOCATION: u64 = 4;
pub const HSA_AMD_SVM_ATTRIB_PREFETCH_LOCATION: u64 = 5;
pub const HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE: u64 = 0x200;
pub const HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE_IN_PLACE: u64 = 0x201;
pub const HSA_AMD_SVM_ATTRIB_AGENT_NO_ACCESS: u64 = 0x202;
pub const HSA_AMD_SVM_ATTRIB_ACCESS_QUERY: u64 = 0x203;

/// Whether an SVM attribute's value is an agent handle.
pub const fn svm_attribute_is_agent(attribute: u64) -> bool {
    matches!(
        attribute,
        HSA_AMD_SVM_ATTRIB_PREFERRED_LOCATION
            | HSA_AMD_SVM_ATTRIB_PREFETCH_LOCATION
            | HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE
            | HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE_IN_PLACE
            | HSA_AMD_SVM_ATTRIB_AGENT_NO_ACCESS
            | HSA_AMD_SVM_ATTRIB_ACCESS_QUERY
    )
}

/// `hsa_amd_svm_attribute_pair_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SvmAttributePair {
    pub attribute: u64,
    pub value: u64,
}

/// `hsa_amd_memory_access_desc_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct MemoryAccessDesc {
    pub permissions: u32,
    pub agent: Agent,
}

/// `hsa_amd_pointer_info_t`: `agentOwner` is the field mapped here.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PointerInfo {
    pub size: u32,
    pub kind: u32,
    pub agent_base_address: *mut c_void,
    pub host_base_address: *mut c_void,
    pub size_in_bytes: usize,
    pub user_data: *mut c_void,
    pub agent_owner: Agent,
    pub global_flags: u32,
}

/// `hsa_amd_event_t`: an event type, then a union whose three members
/// (memory fault, hardware exception, memory error) all start with the agent.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct AmdEvent {
    pub event_type: u32,
    pub agent: Agent,
    pub rest: [u64; 2],
}
/// The event types of `hsa_amd_event_type_t` whose union member starts with an agent.
pub const HSA_AMD_EVENT_TYPES_WITH_AGENT: [u32; 3] = [0, 1, 2];

/// `hsa_ven_amd_loader_1_03_pfn_t`: the loader extension table, in order.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct LoaderTable {
    pub query_host_address: Fp,
    pub query_segment_descriptors: Fp,
    pub query_executable: Fp,
    pub executable_iterate_loaded_code_objects: Fp,
    pub loaded_code_object_get_info: Fp,
    pub code_object_reader_create_from_file_with_offset_size: Fp,
    pub iterate_executables: Fp,
}

/// The size of the loader table of each minor version 0..=3
/// (hsa_ven_amd_loader_1_0{0,1,2,3}_pfn_t).
pub const LOADER_TABLE_SIZES: [usize; 4] = [3 * 8, 5 * 8, 6 * 8, 7 * 8];

/// `CoreApiTable` of hsa_api_trace.h (core major 2, step 0): 125 entries in header order.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct CoreApiTable {
    pub version: ApiTableVersion,
    pub hsa_init: Fp,
    pub hsa_shut_down: Fp,
    pub hsa_system_get_info: Fp,
    pub hsa_system_extension_supported: Fp,
    pub hsa_system_get_extension_table: Fp,
    pub hsa_iterate_agents: Fp,
    pub hsa_agent_get_info: Fp,
    pub hsa_queue_create: Fp,
    pub hsa_soft_queue_create: Fp,
    pub hsa_queue_destroy: Fp,
    pub hsa_queue_inactivate: Fp,
    pub hsa_queue_load_read_index_scacquire: Fp,
    pub hsa_queue_load_read_index_relaxed: Fp,
    pub hsa_queue_load_write_index_scacquire: Fp,
    pub hsa_queue_load_write_index_relaxed: Fp,
    pub hsa_queue_store_write_index_relaxed: Fp,
    pub hsa_queue_store_write_index_screlease: Fp,
    pub hsa_queue_cas_write_index_scacq_screl: Fp,
    pub hsa_queue_cas_write_index_scacquire: Fp,
    pub hsa_queue_cas_write_index_relaxed: Fp,
    pub hsa_queue_cas_write_index_screlease: Fp,
    pub hsa_queue_add_write_index_scacq_screl: Fp,
    pub hsa_queue_add_write_index_scacquire: Fp,
    pub hsa_queue_add_write_index_relaxed: Fp,
    pub hsa_queue_add_write_index_screlease: Fp,
    pub hsa_queue_store_read_index_relaxed: Fp,
    pub hsa_queue_store_read_index_screlease: Fp,
    pub hsa_agent_iterate_regions: Fp,
    pub hsa_region_get_info: Fp,
    pub hsa_agent_get_exception_policies: Fp,
    pub hsa_agent_extension_supported: Fp,
    pub hsa_memory_register: Fp,
    pub hsa_memory_deregister: Fp,
    pub hsa_memory_allocate: Fp,
    pub hsa_memory_free: Fp,
    pub hsa_memory_copy: Fp,
    pub hsa_memory_assign_agent: Fp,
    pub hsa_signal_create: Fp,
    pub hsa_signal_destroy: Fp,
    pub hsa_signal_load_relaxed: Fp,
    pub hsa_signal_load_scacquire: Fp,
    pub hsa_signal_store_relaxed: Fp,
    pub hsa_signal_store_screlease: Fp,
    pub hsa_signal_wait_relaxed: Fp,
    pub hsa_signal_wait_scacquire: Fp,
    pub hsa_signal_and_relaxed: Fp,
    pub hsa_signal_and_scacquire: Fp,
    pub hsa_signal_and_screlease: Fp,
    pub hsa_signal_and_scacq_screl: Fp,
    pub hsa_signal_or_relaxed: Fp,
    pub hsa_signal_or_scacquire: Fp,
    pub hsa_signal_or_screlease: Fp,
    pub hsa_signal_or_scacq_screl: Fp,
    pub hsa_signal_xor_relaxed: Fp,
    pub hsa_signal_xor_scacquire: Fp,
    pub hsa_signal_xor_screlease: Fp,
    pub hsa_signal_xor_scacq_screl: Fp,
    pub hsa_signal_exchange_relaxed: Fp,
    pub hsa_signal_exchange_scacquire: Fp,
    pub hsa_signal_exchange_screlease: Fp,
    pub hsa_signal_exchange_scacq_screl: Fp,
    pub hsa_signal_add_relaxed: Fp,
    pub hsa_signal_add_scacquire: Fp,
    pub hsa_signal_add_screlease: Fp,
    pub hsa_signal_add_scacq_screl: Fp,
    pub hsa_signal_subtract_relaxed: Fp,
    pub hsa_signal_subtract_scacquire: Fp,
    pub hsa_signal_subtract_screlease: Fp,
    pub hsa_signal_subtract_scacq_screl: Fp,
    pub hsa_signal_cas_relaxed: Fp,
    pub hsa_signal_cas_scacquire: Fp,
    pub hsa_signal_cas_screlease: Fp,
    pub hsa_signal_cas_scacq_screl: Fp,
    pub hsa_isa_from_name: Fp,
    pub hsa_isa_get_info: Fp,
    pub hsa_isa_compatible: Fp,
    pub hsa_code_object_serialize: Fp,
    pub hsa_code_object_deserialize: Fp,
    pub hsa_code_object_destroy: Fp,
    pub hsa_code_object_get_info: Fp,
    pub hsa_code_object_get_symbol: Fp,
    pub hsa_code_symbol_get_info: Fp,
    pub hsa_code_object_iterate_symbols: Fp,
    pub hsa_executable_create: Fp,
    pub hsa_executable_destroy: Fp,
    pub hsa_executable_load_code_object: Fp,
    pub hsa_executable_freeze: Fp,
    pub hsa_executable_get_info: Fp,
    pub hsa_executable_global_variable_define: Fp,
    pub hsa_executable_agent_global_variable_define: Fp,
    pub hsa_executable_readonly_variable_define: Fp,
    pub hsa_executable_validate: Fp,
    pub hsa_executable_get_symbol: Fp,
    pub hsa_executable_symbol_get_info: Fp,
    pub hsa_executable_iterate_symbols: Fp,
    pub hsa_status_string: Fp,
    pub hsa_extension_get_name: Fp,
    pub hsa_system_major_extension_supported: Fp,
    pub hsa_system_get_major_extension_table: Fp,
    pub hsa_agent_major_extension_supported: Fp,
    pub hsa_cache_get_info: Fp,
    pub hsa_agent_iterate_caches: Fp,
    pub hsa_signal_silent_store_relaxed: Fp,
    pub hsa_signal_silent_store_screlease: Fp,
    pub hsa_signal_group_create: Fp,
    pub hsa_signal_group_destroy: Fp,
    pub hsa_signal_group_wait_any_scacquire: Fp,
    pub hsa_signal_group_wait_any_relaxed: Fp,
    pub hsa_agent_iterate_isas: Fp,
    pub hsa_isa_get_info_alt: Fp,
    pub hsa_isa_get_exception_policies: Fp,
    pub hsa_isa_get_round_method: Fp,
    pub hsa_wavefront_get_info: Fp,
    pub hsa_isa_iterate_wavefronts: Fp,
    pub hsa_code_object_get_symbol_from_name: Fp,
    pub hsa_code_object_reader_create_from_file: Fp,
    pub hsa_code_object_reader_create_from_memory: Fp,
    pub hsa_code_object_reader_destroy: Fp,
    pub hsa_executable_create_alt: Fp,
    pub hsa_executable_load_program_code_object: Fp,
    pub hsa_executable_load_agent_code_object: Fp,
    pub hsa_executable_validate_alt: Fp,
    pub hsa_executable_get_symbol_by_name: Fp,
    pub hsa_executable_iterate_agent_symbols: Fp,
    pub hsa_executable_iterate_program_symbols: Fp,
}

/// `AmdExtTable` of hsa_api_trace.h (AMD extension major 2): the 72 entries of ROCm 6.4.3 (step 5), then the 4 that ROCm 7.2 (step 8) appends; a runtime's shorter table ends earlier, and entries past these stay untouched.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct AmdExtTable {
    pub version: ApiTableVersion,
    pub hsa_amd_coherency_get_type: Fp,
    pub hsa_amd_coherency_set_type: Fp,
    pub hsa_amd_profiling_set_profiler_enabled: Fp,
    pub hsa_amd_profiling_async_copy_enable: Fp,
    pub hsa_amd_profiling_get_dispatch_time: Fp,
    pub hsa_amd_profiling_get_async_copy_time: Fp,
    pub hsa_amd_profiling_convert_tick_to_system_domain: Fp,
    pub hsa_amd_signal_async_handler: Fp,
    pub hsa_amd_async_function: Fp,
    pub hsa_amd_signal_wait_any: Fp,
    pub hsa_amd_queue_cu_set_mask: Fp,
    pub hsa_amd_memory_pool_get_info: Fp,
    pub hsa_amd_agent_iterate_memory_pools: Fp,
    pub hsa_amd_memory_pool_allocate: Fp,
    pub hsa_amd_memory_pool_free: Fp,
    pub hsa_amd_memory_async_copy: Fp,
    pub hsa_amd_memory_async_copy_on_engine: Fp,
    pub hsa_amd_memory_copy_engine_status: Fp,
    pub hsa_amd_agent_memory_pool_get_info: Fp,
    pub hsa_amd_agents_allow_access: Fp,
    pub hsa_amd_memory_pool_can_migrate: Fp,
    pub hsa_amd_memory_migrate: Fp,
    pub hsa_amd_memory_lock: Fp,
    pub hsa_amd_memory_unlock: Fp,
    pub hsa_amd_memory_fill: Fp,
    pub hsa_amd_interop_map_buffer: Fp,
    pub hsa_amd_interop_unmap_buffer: Fp,
    pub hsa_amd_image_create: Fp,
    pub hsa_amd_pointer_info: Fp,
    pub hsa_amd_pointer_info_set_userdata: Fp,
    pub hsa_amd_ipc_memory_create: Fp,
    pub hsa_amd_ipc_memory_attach: Fp,
    pub hsa_amd_ipc_memory_detach: Fp,
    pub hsa_amd_signal_create: Fp,
    pub hsa_amd_ipc_signal_create: Fp,
    pub hsa_amd_ipc_signal_attach: Fp,
    pub hsa_amd_register_system_event_handler: Fp,
    pub hsa_amd_queue_intercept_create: Fp,
    pub hsa_amd_queue_intercept_register: Fp,
    pub hsa_amd_queue_set_priority: Fp,
    pub hsa_amd_memory_async_copy_rect: Fp,
    pub hsa_amd_runtime_queue_create_register: Fp,
    pub hsa_amd_memory_lock_to_pool: Fp,
    pub hsa_amd_register_deallocation_callback: Fp,
    pub hsa_amd_deregister_deallocation_callback: Fp,
    pub hsa_amd_signal_value_pointer: Fp,
    pub hsa_amd_svm_attributes_set: Fp,
    pub hsa_amd_svm_attributes_get: Fp,
    pub hsa_amd_svm_prefetch_async: Fp,
    pub hsa_amd_spm_acquire: Fp,
    pub hsa_amd_spm_release: Fp,
    pub hsa_amd_spm_set_dest_buffer: Fp,
    pub hsa_amd_queue_cu_get_mask: Fp,
    pub hsa_amd_portable_export_dmabuf: Fp,
    pub hsa_amd_portable_close_dmabuf: Fp,
    pub hsa_amd_vmem_address_reserve: Fp,
    pub hsa_amd_vmem_address_free: Fp,
    pub hsa_amd_vmem_handle_create: Fp,
    pub hsa_amd_vmem_handle_release: Fp,
    pub hsa_amd_vmem_map: Fp,
    pub hsa_amd_vmem_unmap: Fp,
    pub hsa_amd_vmem_set_access: Fp,
    pub hsa_amd_vmem_get_access: Fp,
    pub hsa_amd_vmem_export_shareable_handle: Fp,
    pub hsa_amd_vmem_import_shareable_handle: Fp,
    pub hsa_amd_vmem_retain_alloc_handle: Fp,
    pub hsa_amd_vmem_get_alloc_properties_from_handle: Fp,
    pub hsa_amd_agent_set_async_scratch_limit: Fp,
    pub hsa_amd_queue_get_info: Fp,
    pub hsa_amd_vmem_address_reserve_align: Fp,
    pub hsa_amd_enable_logging: Fp,
    pub hsa_amd_signal_wait_all: Fp,
    // ROCm 7 (AMD extension step 8) appends these.
    pub hsa_amd_memory_get_preferred_copy_engine: Fp,
    pub hsa_amd_portable_export_dmabuf_v2: Fp,
    pub hsa_amd_ais_file_write: Fp,
    pub hsa_amd_ais_file_read: Fp,
}

/// `ImageExtTable` of hsa_api_trace.h (image major 2, step 1).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ImageExtTable {
    pub version: ApiTableVersion,
    pub hsa_ext_image_get_capability: Fp,
    pub hsa_ext_image_data_get_info: Fp,
    pub hsa_ext_image_create: Fp,
    pub hsa_ext_image_import: Fp,
    pub hsa_ext_image_export: Fp,
    pub hsa_ext_image_copy: Fp,
    pub hsa_ext_image_clear: Fp,
    pub hsa_ext_image_destroy: Fp,
    pub hsa_ext_sampler_create: Fp,
    pub hsa_ext_sampler_destroy: Fp,
    pub hsa_ext_image_get_capability_with_layout: Fp,
    pub hsa_ext_image_data_get_info_with_layout: Fp,
    pub hsa_ext_image_create_with_layout: Fp,
    pub hsa_ext_sampler_create_v2: Fp,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::offset_of;

    /// Sizes and offsets that hsa_api_trace.h implies (16-byte version, then
    /// 8-byte slots); ROCm 6.4.3 reports 1016, 592 and 128 bytes.
    #[test]
    fn table_layouts_match_the_headers() {
        assert_eq!(size_of::<ApiTableVersion>(), 16);
        assert_eq!(size_of::<CoreApiTable>(), 16 + 125 * 8);
        assert_eq!(size_of::<AmdExtTable>(), 16 + 76 * 8);
        assert_eq!(
            offset_of!(AmdExtTable, hsa_amd_signal_wait_all),
            16 + 71 * 8
        );
        assert_eq!(size_of::<ImageExtTable>(), 16 + 14 * 8);
        assert_eq!(offset_of!(CoreApiTable, hsa_iterate_agents), 16 + 5 * 8);
        assert_eq!(
            offset_of!(CoreApiTable, hsa_agent_iterate_isas),
            16 + 108 * 8
        );
        assert_eq!(
            offset_of!(CoreApiTable, hsa_executable_load_agent_code_object),
            16 + 120 * 8
        );
        assert_eq!(
            offset_of!(CoreApiTable, hsa_executable_iterate_program_symbols),
            16 + 124 * 8
        );
        assert_eq!(
            offset_of!(AmdExtTable, hsa_amd_agent_iterate_memory_pools),
            16 + 12 * 8
        );
        assert_eq!(offset_of!(HsaApiTable, image_ext), 40);
        assert_eq!(size_of::<HsaApiTable>(), 64);
        assert_eq!(offset_of!(PointerInfo, agent_owner), 40);
        assert_eq!(size_of::<AmdEvent>(), 32);
        assert_eq!(offset_of!(AmdEvent, agent), 8);
        assert_eq!(size_of::<MemoryAccessDesc>(), 16);
        assert_eq!(offset_of!(LoaderTable, loaded_code_object_get_info), 32);
        assert_eq!(LOADER_TABLE_SIZES[3], size_of::<LoaderTable>());
    }

    #[test]
    fn slots_past_a_shorter_table_are_absent() {
        // ROCm 6.4.3's AMD table (592 bytes) ends before ROCm 7's additions.
        let off = offset_of!(AmdExtTable, hsa_amd_memory_get_preferred_copy_engine);
        assert!(!slot_present(592, off));
        assert!(slot_present(624, off));
        assert!(slot_present(
            592,
            offset_of!(AmdExtTable, hsa_amd_signal_wait_all)
        ));
        assert!(!slot_present(592, 8), "the version header is no slot");
    }
}
