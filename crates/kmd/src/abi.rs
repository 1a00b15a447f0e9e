//! The user-kernel interface: ioctl request encoding, the KFD and amdgpu DRM
//! request numbers this driver answers, and the layouts of their argument
//! structures (`linux/kfd_ioctl.h`, `drm/amdgpu_drm.h`, `drm/drm.h`).
//!
//! Arguments are handled as byte buffers with named fields rather than
//! `repr(C)` structs: one request number can arrive with more than one
//! structure size (ROCr 6.4's `CREATE_QUEUE` is 96 bytes, 5.2's 88), and the
//! kernel zero-extends a short structure and copies back only the caller's
//! size. [`Args`] does the same. Every field (a [`Field`]: offset and type)
//! is declared once, in the layout modules below (`kfd::create_queue`,
//! `drm::info`, ...); `tests/it/abi_headers.rs` compiles a C program against
//! the system's headers and checks each one, and each structure's size.

use std::marker::PhantomData;

/// A field of a C structure: its byte offset, and its type, whose size is
/// the field's.
#[derive(Debug)]
pub struct Field<T> {
    pub off: usize,
    _t: PhantomData<T>,
}

impl<T> Clone for Field<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Field<T> {}

impl<T: Value> Field<T> {
    pub const fn at(off: usize) -> Field<T> {
        Field {
            off,
            _t: PhantomData,
        }
    }

    /// The bytes the field covers.
    pub const fn range(self) -> std::ops::Range<usize> {
        self.off..self.off + T::SIZE
    }
}

/// A field's type: a little-endian integer or a byte array.
pub trait Value: Sized {
    const SIZE: usize;
    fn zero() -> Self;
    /// From exactly `SIZE` bytes.
    fn from_le(b: &[u8]) -> Self;
    /// Into exactly `SIZE` bytes.
    fn to_le(&self, b: &mut [u8]);
}

macro_rules! int_value {
    ($($t:ty),*) => {$(
        impl Value for $t {
            const SIZE: usize = size_of::<$t>();
            fn zero() -> Self {
                0
            }
            fn from_le(b: &[u8]) -> Self {
                <$t>::from_le_bytes(b.try_into().expect("SIZE bytes"))
            }
            fn to_le(&self, b: &mut [u8]) {
                b.copy_from_slice(&self.to_le_bytes())
            }
        }
    )*};
}
int_value!(u32, u64);

impl<const N: usize> Value for [u8; N] {
    const SIZE: usize = N;
    fn zero() -> Self {
        [0; N]
    }
    fn from_le(b: &[u8]) -> Self {
        b.try_into().expect("SIZE bytes")
    }
    fn to_le(&self, b: &mut [u8]) {
        b.copy_from_slice(self)
    }
}

/// Field `f` of `buf` (zero where `buf` is too short for it).
pub fn get<T: Value>(buf: &[u8], f: Field<T>) -> T {
    buf.get(f.range()).map_or_else(T::zero, T::from_le)
}

/// Writes field `f` of `buf` (nothing where `buf` is too short for it).
pub fn put<T: Value>(buf: &mut [u8], f: Field<T>, v: T) {
    if let Some(s) = buf.get_mut(f.range()) {
        v.to_le(s);
    }
}

/// Which header declares a structure.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Header {
    /// `linux/kfd_ioctl.h`.
    Kfd,
    /// `drm/amdgpu_drm.h` (and the `drm/drm.h` it includes).
    Drm,
    /// Only the ROCm (DKMS) driver's and its thunk's copy of
    /// `kfd_ioctl.h` (the IPC ioctls), not the upstream one.
    RocmKfd,
}

/// One structure's layout as declared here, for the header check.
#[derive(Debug)]
pub struct Layout {
    pub header: Header,
    /// The module declaring it (`kfd::create_queue`).
    pub module: &'static str,
    /// The C structure, without `struct`.
    pub c: &'static str,
    /// `sizeof`, where this driver relies on it.
    pub size: Option<usize>,
    /// The KFD minor version since which it is that size.
    pub size_since: Option<u32>,
    pub fields: &'static [FieldInfo],
}

#[derive(Debug)]
pub struct FieldInfo {
    /// The constant's name (`GPU_ID`).
    pub name: &'static str,
    /// The C member designator, where it is not `name` in lower case.
    pub c: Option<&'static str>,
    pub off: usize,
    pub size: usize,
    /// The KFD minor version that added the field (none: older than 1.11).
    pub since: Option<u32>,
}

impl FieldInfo {
    pub fn c_name(&self) -> String {
        self.c
            .map_or_else(|| self.name.to_lowercase(), str::to_string)
    }
}

/// Declares layout modules (`SIZE` and one [`Field`] constant per member)
/// and a `LAYOUTS` table of them for the header check: `Header module =
/// "c_struct" (size N (since minor)?)? { members }`, a member
/// `NAME ("c.designator")?: type = offset (, since minor)?;` where `minor`
/// is the KFD version that added it.
macro_rules! layouts {
    ($($(#[$doc:meta])* $header:ident $m:ident = $c:literal $(size $size:literal $(since $ssince:literal)?)? {
        $($(#[$fdoc:meta])* $name:ident $(($cname:literal))?: $ty:ty = $off:expr $(, since $since:literal)?;)*
    })*) => {
        $(
            $(#[$doc])*
            pub mod $m {
                #[allow(unused_imports)]
                use crate::abi::Field;
                $(pub const SIZE: usize = $size;)?
                $($(#[$fdoc])* pub const $name: Field<$ty> = Field::at($off);)*
            }
        )*
        /// The layouts declared in this module.
        pub const LAYOUTS: &[crate::abi::Layout] = &[$(crate::abi::Layout {
            header: crate::abi::Header::$header,
            module: concat!(module_path!(), "::", stringify!($m)),
            c: $c,
            size: layouts!(@opt $($size)?),
            size_since: layouts!(@opt $($($ssince)?)?),
            fields: &[$(crate::abi::FieldInfo {
                name: stringify!($name),
                c: layouts!(@opt $($cname)?),
                off: $off,
                size: size_of::<$ty>(),
                since: layouts!(@opt $($since)?),
            }),*],
        }),*];
    };
    (@opt) => { None };
    (@opt $v:expr) => { Some($v) };
}

/// Every layout declared here (KFD, then DRM).
pub fn layouts() -> impl Iterator<Item = &'static Layout> {
    kfd::LAYOUTS.iter().chain(drm::LAYOUTS)
}

/// `_IOC_SIZE`: the argument size encoded in a request.
pub fn ioc_size(request: u64) -> usize {
    ((request >> 16) & 0x3fff) as usize
}

/// `_IOC_TYPE`: the driver letter.
pub fn ioc_type(request: u64) -> u8 {
    ((request >> 8) & 0xff) as u8
}

/// `_IOC_NR`: the command number.
pub fn ioc_nr(request: u64) -> u8 {
    (request & 0xff) as u8
}

/// `_IOC_DIR` read bit (the kernel writes the argument back).
pub fn ioc_reads(request: u64) -> bool {
    request >> 31 & 1 == 1
}

/// `_IOC_DIR` write bit (the kernel reads the argument).
pub fn ioc_writes(request: u64) -> bool {
    request >> 30 & 1 == 1
}

/// The KFD ioctl letter.
pub const KFD_TYPE: u8 = b'K';
/// The DRM ioctl letter.
pub const DRM_TYPE: u8 = b'd';

/// KFD command numbers (`AMDKFD_IOC_*`), with their names for logs.
pub mod kfd {
    pub const GET_VERSION: u8 = 0x01;
    pub const CREATE_QUEUE: u8 = 0x02;
    pub const DESTROY_QUEUE: u8 = 0x03;
    pub const SET_MEMORY_POLICY: u8 = 0x04;
    pub const GET_CLOCK_COUNTERS: u8 = 0x05;
    pub const GET_PROCESS_APERTURES: u8 = 0x06;
    pub const UPDATE_QUEUE: u8 = 0x07;
    pub const CREATE_EVENT: u8 = 0x08;
    pub const DESTROY_EVENT: u8 = 0x09;
    pub const SET_EVENT: u8 = 0x0a;
    pub const RESET_EVENT: u8 = 0x0b;
    pub const WAIT_EVENTS: u8 = 0x0c;
    pub const SET_SCRATCH_BACKING_VA: u8 = 0x11;
    pub const GET_TILE_CONFIG: u8 = 0x12;
    pub const SET_TRAP_HANDLER: u8 = 0x13;
    pub const GET_PROCESS_APERTURES_NEW: u8 = 0x14;
    pub const ACQUIRE_VM: u8 = 0x15;
    pub const ALLOC_MEMORY_OF_GPU: u8 = 0x16;
    pub const FREE_MEMORY_OF_GPU: u8 = 0x17;
    pub const MAP_MEMORY_TO_GPU: u8 = 0x18;
    pub const UNMAP_MEMORY_FROM_GPU: u8 = 0x19;
    pub const SET_CU_MASK: u8 = 0x1a;
    pub const GET_QUEUE_WAVE_STATE: u8 = 0x1b;
    pub const GET_DMABUF_INFO: u8 = 0x1c;
    pub const IMPORT_DMABUF: u8 = 0x1d;
    pub const ALLOC_QUEUE_GWS: u8 = 0x1e;
    pub const SMI_EVENTS: u8 = 0x1f;
    pub const SVM: u8 = 0x20;
    pub const SET_XNACK_MODE: u8 = 0x21;
    pub const CRIU_OP: u8 = 0x22;
    pub const AVAILABLE_MEMORY: u8 = 0x23;
    pub const EXPORT_DMABUF: u8 = 0x24;
    pub const RUNTIME_ENABLE: u8 = 0x25;
    pub const DBG_TRAP: u8 = 0x26;
    /// The ROCm (DKMS) driver's IPC ioctls, which ROCm 5's libhsakmt uses
    /// for hipIpcGetMemHandle / hipIpcOpenMemHandle (not upstream).
    pub const IPC_IMPORT_HANDLE: u8 = 0x80;
    pub const IPC_EXPORT_HANDLE: u8 = 0x81;

    /// The name of a KFD command, for logs (`AMDKFD_IOC_` left off).
    pub fn name(nr: u8) -> &'static str {
        match nr {
            GET_VERSION => "GET_VERSION",
            CREATE_QUEUE => "CREATE_QUEUE",
            DESTROY_QUEUE => "DESTROY_QUEUE",
            SET_MEMORY_POLICY => "SET_MEMORY_POLICY",
            GET_CLOCK_COUNTERS => "GET_CLOCK_COUNTERS",
            GET_PROCESS_APERTURES => "GET_PROCESS_APERTURES",
            UPDATE_QUEUE => "UPDATE_QUEUE",
            CREATE_EVENT => "CREATE_EVENT",
            DESTROY_EVENT => "DESTROY_EVENT",
            SET_EVENT => "SET_EVENT",
            RESET_EVENT => "RESET_EVENT",
            WAIT_EVENTS => "WAIT_EVENTS",
            0x0d => "DBG_REGISTER_DEPRECATED",
            0x0e => "DBG_UNREGISTER_DEPRECATED",
            0x0f => "DBG_ADDRESS_WATCH_DEPRECATED",
            0x10 => "DBG_WAVE_CONTROL_DEPRECATED",
            SET_SCRATCH_BACKING_VA => "SET_SCRATCH_BACKING_VA",
            GET_TILE_CONFIG => "GET_TILE_CONFIG",
            SET_TRAP_HANDLER => "SET_TRAP_HANDLER",
            GET_PROCESS_APERTURES_NEW => "GET_PROCESS_APERTURES_NEW",
            ACQUIRE_VM => "ACQUIRE_VM",
            ALLOC_MEMORY_OF_GPU => "ALLOC_MEMORY_OF_GPU",
            FREE_MEMORY_OF_GPU => "FREE_MEMORY_OF_GPU",
            MAP_MEMORY_TO_GPU => "MAP_MEMORY_TO_GPU",
            UNMAP_MEMORY_FROM_GPU => "UNMAP_MEMORY_FROM_GPU",
            SET_CU_MASK => "SET_CU_MASK",
            GET_QUEUE_WAVE_STATE => "GET_QUEUE_WAVE_STATE",
            GET_DMABUF_INFO => "GET_DMABUF_INFO",
            IMPORT_DMABUF => "IMPORT_DMABUF",
            ALLOC_QUEUE_GWS => "ALLOC_QUEUE_GWS",
            SMI_EVENTS => "SMI_EVENTS",
            SVM => "SVM",
            SET_XNACK_MODE => "SET_XNACK_MODE",
            CRIU_OP => "CRIU_OP",
            AVAILABLE_MEMORY => "AVAILABLE_MEMORY",
            EXPORT_DMABUF => "EXPORT_DMABUF",
            RUNTIME_ENABLE => "RUNTIME_ENABLE",
            DBG_TRAP => "DBG_TRAP",
            IPC_IMPORT_HANDLE => "IPC_IMPORT_HANDLE",
            IPC_EXPORT_HANDLE => "IPC_EXPORT_HANDLE",
            0x82 => "DBG_TRAP (ROCm driver)",
            0x83 => "CROSS_MEMORY_COPY",
            0x84 => "RLC_SPM",
            _ => "unknown",
        }
    }

    pub const QUEUE_TYPE_COMPUTE: u32 = 0;
    pub const QUEUE_TYPE_SDMA: u32 = 1;
    pub const QUEUE_TYPE_COMPUTE_AQL: u32 = 2;
    pub const QUEUE_TYPE_SDMA_XGMI: u32 = 3;
    /// An SDMA queue on the engine `sdma_engine_id` names (KFD 1.17).
    pub const QUEUE_TYPE_SDMA_BY_ENG_ID: u32 = 4;

    pub const ALLOC_VRAM: u32 = 1 << 0;
    pub const ALLOC_GTT: u32 = 1 << 1;
    pub const ALLOC_USERPTR: u32 = 1 << 2;
    pub const ALLOC_DOORBELL: u32 = 1 << 3;
    pub const ALLOC_MMIO_REMAP: u32 = 1 << 4;
    pub const ALLOC_PUBLIC: u32 = 1 << 29;
    pub const ALLOC_WRITABLE: u32 = 1 << 31;
    pub const ALLOC_EXECUTABLE: u32 = 1 << 30;

    pub const EVENT_SIGNAL: u32 = 0;
    pub const EVENT_HW_EXCEPTION: u32 = 3;
    pub const EVENT_MEMORY: u32 = 8;
    /// Signal events live in the event page, one 64-bit slot each.
    pub const SIGNAL_EVENT_LIMIT: u32 = 4096;
    /// `KFD_HW_EXCEPTION_WHOLE_GPU_RESET`, `KFD_HW_EXCEPTION_GPU_HANG`.
    pub const HW_EXCEPTION_WHOLE_GPU_RESET: u32 = 0;
    pub const HW_EXCEPTION_GPU_HANG: u32 = 0;
    /// `KFD_MEM_ERR_GPU_HANG`.
    pub const MEM_ERR_GPU_HANG: u32 = 3;
    pub const WAIT_COMPLETE: u32 = 0;
    pub const WAIT_TIMEOUT: u32 = 1;

    /// `KFD_MMAP_TYPE_*` in bits 62-63 of a KFD mmap offset.
    pub const MMAP_TYPE_SHIFT: u32 = 62;
    /// `KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK`.
    pub const RUNTIME_ENABLE_MODE_ENABLE_MASK: u32 = 1;
    pub const MMAP_TYPE_DOORBELL: u64 = 3;
    pub const MMAP_TYPE_EVENTS: u64 = 2;
    pub const MMAP_TYPE_MMIO: u64 = 0;
    /// The GPU id sits in bits 46-61 of a KFD mmap offset.
    pub const MMAP_GPU_ID_SHIFT: u32 = 46;
    pub const MMAP_GPU_ID_MASK: u64 = 0xffff;

    layouts! {
        /// `GET_VERSION`.
        Kfd get_version = "kfd_ioctl_get_version_args" size 8 {
            MAJOR_VERSION: u32 = 0;
            MINOR_VERSION: u32 = 4;
        }
        /// `CREATE_QUEUE` (88 bytes before KFD 1.17).
        Kfd create_queue = "kfd_ioctl_create_queue_args" size 96 since 17 {
            RING_BASE_ADDRESS: u64 = 0;
            WRITE_POINTER_ADDRESS: u64 = 8;
            READ_POINTER_ADDRESS: u64 = 16;
            DOORBELL_OFFSET: u64 = 24;
            RING_SIZE: u32 = 32;
            GPU_ID: u32 = 36;
            QUEUE_TYPE: u32 = 40;
            QUEUE_PERCENTAGE: u32 = 44;
            QUEUE_PRIORITY: u32 = 48;
            QUEUE_ID: u32 = 52;
            EOP_BUFFER_ADDRESS: u64 = 56;
            EOP_BUFFER_SIZE: u64 = 64;
            CTX_SAVE_RESTORE_ADDRESS: u64 = 72;
            CTX_SAVE_RESTORE_SIZE: u32 = 80;
            CTL_STACK_SIZE: u32 = 84;
            SDMA_ENGINE_ID: u32 = 88, since 17;
        }
        /// `DESTROY_QUEUE`.
        Kfd destroy_queue = "kfd_ioctl_destroy_queue_args" size 8 {
            QUEUE_ID: u32 = 0;
        }
        /// `UPDATE_QUEUE`.
        Kfd update_queue = "kfd_ioctl_update_queue_args" size 24 {
            RING_BASE_ADDRESS: u64 = 0;
            QUEUE_ID: u32 = 8;
            RING_SIZE: u32 = 12;
            QUEUE_PERCENTAGE: u32 = 16;
            QUEUE_PRIORITY: u32 = 20;
        }
        /// `SET_CU_MASK`.
        Kfd set_cu_mask = "kfd_ioctl_set_cu_mask_args" size 16 {
            QUEUE_ID: u32 = 0;
            NUM_CU_MASK: u32 = 4;
            CU_MASK_PTR: u64 = 8;
        }
        /// `ALLOC_QUEUE_GWS`.
        Kfd alloc_queue_gws = "kfd_ioctl_alloc_queue_gws_args" size 16 {
            QUEUE_ID: u32 = 0;
            NUM_GWS: u32 = 4;
            FIRST_GWS: u32 = 8;
        }
        /// `AVAILABLE_MEMORY`.
        Kfd available_memory = "kfd_ioctl_get_available_memory_args" size 16 {
            AVAILABLE: u64 = 0;
            GPU_ID: u32 = 8;
        }
        /// `SET_MEMORY_POLICY`.
        Kfd set_memory_policy = "kfd_ioctl_set_memory_policy_args" size 32 {
            ALTERNATE_APERTURE_BASE: u64 = 0;
            ALTERNATE_APERTURE_SIZE: u64 = 8;
            GPU_ID: u32 = 16;
            DEFAULT_POLICY: u32 = 20;
            ALTERNATE_POLICY: u32 = 24;
        }
        /// `GET_CLOCK_COUNTERS`.
        Kfd get_clock_counters = "kfd_ioctl_get_clock_counters_args" size 40 {
            GPU_CLOCK_COUNTER: u64 = 0;
            CPU_CLOCK_COUNTER: u64 = 8;
            SYSTEM_CLOCK_COUNTER: u64 = 16;
            SYSTEM_CLOCK_FREQ: u64 = 24;
            GPU_ID: u32 = 32;
        }
        /// One GPU's apertures, as both `GET_PROCESS_APERTURES` ioctls
        /// return them.
        Kfd process_device_apertures = "kfd_process_device_apertures" size 56 {
            LDS_BASE: u64 = 0;
            LDS_LIMIT: u64 = 8;
            SCRATCH_BASE: u64 = 16;
            SCRATCH_LIMIT: u64 = 24;
            GPUVM_BASE: u64 = 32;
            GPUVM_LIMIT: u64 = 40;
            GPU_ID: u32 = 48;
        }
        /// `GET_PROCESS_APERTURES`: room for 7 GPUs' apertures in place.
        Kfd get_process_apertures = "kfd_ioctl_get_process_apertures_args" size 400 {
            PROCESS_APERTURES: [u8; 7 * 56] = 0;
            NUM_OF_NODES: u32 = 392;
        }
        /// `GET_PROCESS_APERTURES_NEW`: the apertures go to a user array.
        Kfd get_process_apertures_new = "kfd_ioctl_get_process_apertures_new_args" size 16 {
            KFD_PROCESS_DEVICE_APERTURES_PTR: u64 = 0;
            NUM_OF_NODES: u32 = 8;
        }
        /// `CREATE_EVENT`.
        Kfd create_event = "kfd_ioctl_create_event_args" size 32 {
            EVENT_PAGE_OFFSET: u64 = 0;
            EVENT_TRIGGER_DATA: u32 = 8;
            EVENT_TYPE: u32 = 12;
            AUTO_RESET: u32 = 16;
            NODE_ID: u32 = 20;
            EVENT_ID: u32 = 24;
            EVENT_SLOT_INDEX: u32 = 28;
        }
        /// `DESTROY_EVENT`.
        Kfd destroy_event = "kfd_ioctl_destroy_event_args" size 8 {
            EVENT_ID: u32 = 0;
        }
        /// `SET_EVENT`.
        Kfd set_event = "kfd_ioctl_set_event_args" size 8 {
            EVENT_ID: u32 = 0;
        }
        /// `RESET_EVENT`.
        Kfd reset_event = "kfd_ioctl_reset_event_args" size 8 {
            EVENT_ID: u32 = 0;
        }
        /// A memory exception's data, in an event's entry.
        Kfd memory_exception_data = "kfd_hsa_memory_exception_data" size 32 {
            NOT_PRESENT("failure.NotPresent"): u32 = 0;
            READ_ONLY("failure.ReadOnly"): u32 = 4;
            NO_EXECUTE("failure.NoExecute"): u32 = 8;
            IMPRECISE("failure.imprecise"): u32 = 12;
            VA: u64 = 16;
            GPU_ID: u32 = 24;
            ERROR_TYPE("ErrorType"): u32 = 28;
        }
        /// A GPU reset's data, in a hardware-exception event's entry.
        Kfd hw_exception_data = "kfd_hsa_hw_exception_data" size 16 {
            RESET_TYPE: u32 = 0;
            RESET_CAUSE: u32 = 4;
            MEMORY_LOST: u32 = 8;
            GPU_ID: u32 = 12;
        }
        /// One entry of the `WAIT_EVENTS` array.
        Kfd event_data = "kfd_event_data" size 48 {
            MEMORY_EXCEPTION_DATA: [u8; 32] = 0;
            /// A hardware exception's data, sharing the union.
            HW_EXCEPTION_DATA: [u8; 16] = 0;
            /// A signal event's age (KFD 1.14), sharing the union.
            LAST_EVENT_AGE("signal_event_data.last_event_age"): u64 = 0, since 14;
            KFD_EVENT_DATA_EXT: u64 = 32;
            EVENT_ID: u32 = 40;
        }
        /// `WAIT_EVENTS`.
        Kfd wait_events = "kfd_ioctl_wait_events_args" size 24 {
            EVENTS_PTR: u64 = 0;
            NUM_EVENTS: u32 = 8;
            WAIT_FOR_ALL: u32 = 12;
            TIMEOUT: u32 = 16;
            WAIT_RESULT: u32 = 20;
        }
        /// `SET_SCRATCH_BACKING_VA`.
        Kfd set_scratch_backing_va = "kfd_ioctl_set_scratch_backing_va_args" size 16 {
            VA_ADDR: u64 = 0;
            GPU_ID: u32 = 8;
        }
        /// `GET_TILE_CONFIG`.
        Kfd get_tile_config = "kfd_ioctl_get_tile_config_args" size 40 {
            TILE_CONFIG_PTR: u64 = 0;
            MACRO_TILE_CONFIG_PTR: u64 = 8;
            NUM_TILE_CONFIGS: u32 = 16;
            NUM_MACRO_TILE_CONFIGS: u32 = 20;
            GPU_ID: u32 = 24;
            GB_ADDR_CONFIG: u32 = 28;
            NUM_BANKS: u32 = 32;
            NUM_RANKS: u32 = 36;
        }
        /// `RUNTIME_ENABLE` (KFD 1.13, "Add debugger API").
        Kfd runtime_enable = "kfd_ioctl_runtime_enable_args" size 16 since 13 {
            R_DEBUG: u64 = 0, since 13;
            MODE_MASK: u32 = 8, since 13;
            CAPABILITIES_MASK: u32 = 12, since 13;
        }
        /// `SET_TRAP_HANDLER`.
        Kfd set_trap_handler = "kfd_ioctl_set_trap_handler_args" size 24 {
            TBA_ADDR: u64 = 0;
            TMA_ADDR: u64 = 8;
            GPU_ID: u32 = 16;
        }
        /// `ACQUIRE_VM`.
        Kfd acquire_vm = "kfd_ioctl_acquire_vm_args" size 8 {
            DRM_FD: u32 = 0;
            GPU_ID: u32 = 4;
        }
        /// `ALLOC_MEMORY_OF_GPU`.
        Kfd alloc_memory_of_gpu = "kfd_ioctl_alloc_memory_of_gpu_args" size 40 {
            VA_ADDR: u64 = 0;
            BYTES("size"): u64 = 8;
            HANDLE: u64 = 16;
            MMAP_OFFSET: u64 = 24;
            GPU_ID: u32 = 32;
            FLAGS: u32 = 36;
        }
        /// `FREE_MEMORY_OF_GPU`.
        Kfd free_memory_of_gpu = "kfd_ioctl_free_memory_of_gpu_args" size 8 {
            HANDLE: u64 = 0;
        }
        /// `MAP_MEMORY_TO_GPU` (and `UNMAP_MEMORY_FROM_GPU`, the same
        /// layout: the code uses these names for both).
        Kfd map_memory_to_gpu = "kfd_ioctl_map_memory_to_gpu_args" size 24 {
            HANDLE: u64 = 0;
            DEVICE_IDS_ARRAY_PTR: u64 = 8;
            N_DEVICES: u32 = 16;
            N_SUCCESS: u32 = 20;
        }
        /// `UNMAP_MEMORY_FROM_GPU`: declared to check that it is
        /// [`map_memory_to_gpu`]'s layout.
        Kfd unmap_memory_from_gpu = "kfd_ioctl_unmap_memory_from_gpu_args" size 24 {
            HANDLE: u64 = 0;
            DEVICE_IDS_ARRAY_PTR: u64 = 8;
            N_DEVICES: u32 = 16;
            N_SUCCESS: u32 = 20;
        }
        /// `SET_XNACK_MODE` (`xnack_enabled` is signed: -1 asks).
        Kfd set_xnack_mode = "kfd_ioctl_set_xnack_mode_args" size 4 {
            XNACK_ENABLED: u32 = 0;
        }
        /// `SVM`: an interval, the operation and `nattr` attributes, which
        /// follow the structure (the request's size field counts them).
        Kfd svm = "kfd_ioctl_svm_args" size 24 {
            START_ADDR: u64 = 0;
            BYTES("size"): u64 = 8;
            OP: u32 = 16;
            NATTR: u32 = 20;
        }
        /// One attribute of an `SVM` call.
        Kfd svm_attribute = "kfd_ioctl_svm_attribute" size 8 {
            TYPE: u32 = 0;
            VALUE: u32 = 4;
        }
        /// `GET_DMABUF_INFO`: what a dma-buf descriptor holds.
        Kfd get_dmabuf_info = "kfd_ioctl_get_dmabuf_info_args" size 32 {
            BYTES("size"): u64 = 0;
            METADATA_PTR: u64 = 8;
            METADATA_SIZE: u32 = 16;
            GPU_ID: u32 = 20;
            FLAGS: u32 = 24;
            DMABUF_FD: u32 = 28;
        }
        /// `IMPORT_DMABUF`: a dma-buf mapped at `va_addr` of this process.
        Kfd import_dmabuf = "kfd_ioctl_import_dmabuf_args" size 24 {
            VA_ADDR: u64 = 0;
            HANDLE: u64 = 8;
            GPU_ID: u32 = 16;
            DMABUF_FD: u32 = 20;
        }
        /// `EXPORT_DMABUF`: a dma-buf descriptor of an allocation.
        Kfd export_dmabuf = "kfd_ioctl_export_dmabuf_args" size 16 since 12 {
            HANDLE: u64 = 0, since 12;
            FLAGS: u32 = 8, since 12;
            DMABUF_FD: u32 = 12, since 12;
        }
        /// `IPC_EXPORT_HANDLE` (ROCm driver; layout from its
        /// `include/uapi/linux/kfd_ioctl.h` and ROCT-Thunk-Interface's copy).
        RocmKfd ipc_export_handle = "kfd_ioctl_ipc_export_handle_args" size 32 {
            HANDLE: u64 = 0;
            SHARE_HANDLE: [u8; 16] = 8;
            GPU_ID: u32 = 24;
            FLAGS: u32 = 28;
        }
        /// `IPC_IMPORT_HANDLE` (ROCm driver, as above).
        RocmKfd ipc_import_handle = "kfd_ioctl_ipc_import_handle_args" size 48 {
            HANDLE: u64 = 0;
            VA_ADDR: u64 = 8;
            MMAP_OFFSET: u64 = 16;
            SHARE_HANDLE: [u8; 16] = 24;
            GPU_ID: u32 = 40;
            FLAGS: u32 = 44;
        }
    }
}

/// DRM core and amdgpu command numbers.
pub mod drm {
    pub const VERSION: u8 = 0x00;
    pub const GET_UNIQUE: u8 = 0x01;
    pub const GET_MAGIC: u8 = 0x02;
    pub const GET_CLIENT: u8 = 0x05;
    pub const GEM_CLOSE: u8 = 0x09;
    pub const GET_CAP: u8 = 0x0c;
    pub const SET_CLIENT_CAP: u8 = 0x0d;
    pub const PRIME_HANDLE_TO_FD: u8 = 0x2d;
    pub const PRIME_FD_TO_HANDLE: u8 = 0x2e;
    /// `DRM_COMMAND_BASE + DRM_AMDGPU_INFO`.
    pub const AMDGPU_INFO: u8 = 0x45;
    /// `DRM_COMMAND_BASE + DRM_AMDGPU_GEM_METADATA`.
    pub const AMDGPU_GEM_METADATA: u8 = 0x46;
    /// `DRM_COMMAND_BASE + DRM_AMDGPU_GEM_OP`.
    pub const AMDGPU_GEM_OP: u8 = 0x50;

    pub const GEM_METADATA_OP_SET: u32 = 1;
    pub const GEM_METADATA_OP_GET: u32 = 2;
    pub const GEM_OP_GET_GEM_CREATE_INFO: u32 = 0;
    /// `AMDGPU_GEM_DOMAIN_GTT`, `AMDGPU_GEM_DOMAIN_VRAM`.
    pub const GEM_DOMAIN_GTT: u64 = 0x2;
    pub const GEM_DOMAIN_VRAM: u64 = 0x4;
    /// `AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED`, `..._NO_CPU_ACCESS`.
    pub const GEM_CREATE_CPU_ACCESS_REQUIRED: u64 = 1 << 0;
    pub const GEM_CREATE_NO_CPU_ACCESS: u64 = 1 << 1;
    /// `AMDGPU_GEM_CREATE_VRAM_WIPE_ON_RELEASE` (KFD's VRAM buffers).
    pub const GEM_CREATE_VRAM_WIPE_ON_RELEASE: u64 = 1 << 9;

    pub fn name(nr: u8) -> &'static str {
        match nr {
            VERSION => "VERSION",
            GET_UNIQUE => "GET_UNIQUE",
            GET_MAGIC => "GET_MAGIC",
            GET_CLIENT => "GET_CLIENT",
            GEM_CLOSE => "GEM_CLOSE",
            GET_CAP => "GET_CAP",
            SET_CLIENT_CAP => "SET_CLIENT_CAP",
            PRIME_HANDLE_TO_FD => "PRIME_HANDLE_TO_FD",
            PRIME_FD_TO_HANDLE => "PRIME_FD_TO_HANDLE",
            0x40 => "AMDGPU_GEM_CREATE",
            0x41 => "AMDGPU_GEM_MMAP",
            0x42 => "AMDGPU_CTX",
            0x43 => "AMDGPU_BO_LIST",
            0x44 => "AMDGPU_CS",
            AMDGPU_INFO => "AMDGPU_INFO",
            0x46 => "AMDGPU_GEM_METADATA",
            0x47 => "AMDGPU_GEM_WAIT_IDLE",
            0x48 => "AMDGPU_GEM_VA",
            0x49 => "AMDGPU_WAIT_CS",
            0x50 => "AMDGPU_GEM_OP",
            0x51 => "AMDGPU_GEM_USERPTR",
            _ => "unknown",
        }
    }

    /// `AMDGPU_INFO_*` queries.
    pub const INFO_ACCEL_WORKING: u32 = 0x00;
    pub const INFO_HW_IP_INFO: u32 = 0x02;
    pub const INFO_HW_IP_COUNT: u32 = 0x03;
    pub const INFO_FW_VERSION: u32 = 0x0e;
    pub const INFO_VRAM_GTT: u32 = 0x14;
    pub const INFO_READ_MMR_REG: u32 = 0x15;
    pub const INFO_DEV_INFO: u32 = 0x16;
    pub const INFO_MEMORY: u32 = 0x19;
    pub const INFO_VIDEO_CAPS: u32 = 0x21;
    /// `AMDGPU_HW_IP_*`.
    pub const HW_IP_GFX: u32 = 0;
    pub const HW_IP_COMPUTE: u32 = 1;
    pub const HW_IP_DMA: u32 = 2;
    /// `AMDGPU_HW_IP_NUM`: UVD (3) to VPE (9) are video engines.
    pub const HW_IP_NUM: u32 = 10;
    /// `AMDGPU_HW_IP_INSTANCE_MAX_COUNT`.
    pub const HW_IP_INSTANCE_MAX_COUNT: u32 = 1;
    /// `AMDGPU_INFO_FW_*` (0x09 is not one).
    pub const FW_GFX_MEC: u32 = 0x08;
    pub const FW_SDMA: u32 = 0x0b;
    pub const FW_TA: u32 = 0x13;
    /// The last `AMDGPU_INFO_FW_*` (`FW_VPE`).
    pub const FW_LAST: u32 = 0x1c;
    /// Size of `struct drm_amdgpu_info_hw_ip` with `userq_num_slots`
    /// (Linux 6.16, the ROCm 7 headers); older headers end at 32.
    pub const HW_IP_INFO_SIZE: usize = 40;
    /// Size of `struct drm_amdgpu_info_device` in libdrm 2.4.114.
    pub const DEV_INFO_SIZE: usize = 368;
    /// `AMDGPU_FAMILY_AI` (GFX9).
    pub const FAMILY_AI: u32 = 141;
    /// `AMDGPU_FAMILY_GC_11_0_0` (Navi 31, gfx1100).
    pub const FAMILY_GC_11_0_0: u32 = 145;
    /// `AMDGPU_FAMILY_GC_11_5_0` (GC 11.5: Strix, Strix Halo).
    pub const FAMILY_GC_11_5_0: u32 = 150;
    /// `AMDGPU_FAMILY_GC_12_0_0` (GC 12: Navi 44, Navi 48).
    pub const FAMILY_GC_12_0_0: u32 = 152;
    /// `AMDGPU_VRAM_TYPE_HBM`, `AMDGPU_VRAM_TYPE_GDDR6` and
    /// `AMDGPU_VRAM_TYPE_LPDDR5` (LPDDR5 and LPDDR5X).
    pub const VRAM_TYPE_HBM: u32 = 6;
    pub const VRAM_TYPE_GDDR6: u32 = 9;
    pub const VRAM_TYPE_LPDDR5: u32 = 12;
    /// `AMDGPU_IDS_FLAGS_FUSION` in `ids_flags`: an APU.
    pub const IDS_FLAGS_FUSION: u64 = 0x1;
    /// `mmGB_ADDR_CONFIG` on GFX9 (dword offset).
    pub const GB_ADDR_CONFIG_REG: u32 = 0x263e;

    layouts! {
        /// `VERSION` (`struct drm_version`: three ints, then (length,
        /// pointer) for name, date and description).
        Drm version = "drm_version" size 64 {
            VERSION_MAJOR: u32 = 0;
            VERSION_MINOR: u32 = 4;
            VERSION_PATCHLEVEL: u32 = 8;
            NAME_LEN: u64 = 16;
            NAME: u64 = 24;
            DATE_LEN: u64 = 32;
            DATE: u64 = 40;
            DESC_LEN: u64 = 48;
            DESC: u64 = 56;
        }
        /// `PRIME_FD_TO_HANDLE` (and `PRIME_HANDLE_TO_FD`): a dma-buf
        /// descriptor and the GEM handle of its buffer in this file.
        Drm prime_handle = "drm_prime_handle" size 12 {
            HANDLE: u32 = 0;
            FLAGS: u32 = 4;
            FD: u32 = 8;
        }
        /// `GEM_CLOSE`.
        Drm gem_close = "drm_gem_close" size 8 {
            HANDLE: u32 = 0;
        }
        /// `AMDGPU_GEM_METADATA`: a buffer's tiling and driver metadata.
        Drm gem_metadata = "drm_amdgpu_gem_metadata" size 288 {
            HANDLE: u32 = 0;
            OP: u32 = 4;
            DATA_FLAGS("data.flags"): u64 = 8;
            TILING_INFO("data.tiling_info"): u64 = 16;
            DATA_SIZE_BYTES("data.data_size_bytes"): u32 = 24;
            DATA("data.data"): [u8; 256] = 28;
        }
        /// `AMDGPU_GEM_OP` (newer headers add `num_entries`).
        Drm gem_op = "drm_amdgpu_gem_op" {
            HANDLE: u32 = 0;
            OP: u32 = 4;
            VALUE: u64 = 8;
        }
        /// What `AMDGPU_GEM_OP_GET_GEM_CREATE_INFO` writes at `value`.
        Drm gem_create_in = "drm_amdgpu_gem_create_in" size 32 {
            BO_SIZE: u64 = 0;
            ALIGNMENT: u64 = 8;
            DOMAINS: u64 = 16;
            DOMAIN_FLAGS: u64 = 24;
        }
        /// `GET_CAP`.
        Drm get_cap = "drm_get_cap" size 16 {
            CAPABILITY: u64 = 0;
            VALUE: u64 = 8;
        }
        /// `AMDGPU_INFO`: the query and where its answer goes.
        Drm info = "drm_amdgpu_info" {
            RETURN_POINTER: u64 = 0;
            RETURN_SIZE: u32 = 8;
            QUERY: u32 = 12;
            HW_IP_TYPE("query_hw_ip.type"): u32 = 16;
            HW_IP_INSTANCE("query_hw_ip.ip_instance"): u32 = 20;
            MMR_DWORD_OFFSET("read_mmr_reg.dword_offset"): u32 = 16;
            MMR_COUNT("read_mmr_reg.count"): u32 = 20;
            FW_TYPE("query_fw.fw_type"): u32 = 16;
            FW_IP_INSTANCE("query_fw.ip_instance"): u32 = 20;
            FW_INDEX("query_fw.index"): u32 = 24;
            VIDEO_CAP_TYPE("video_cap.type"): u32 = 16;
        }
        /// `AMDGPU_INFO_HW_IP_INFO`'s answer (the driver writes
        /// [`HW_IP_INFO_SIZE`] bytes; `userq_num_slots`, at 32, stays 0).
        Drm info_hw_ip = "drm_amdgpu_info_hw_ip" {
            HW_IP_VERSION_MAJOR: u32 = 0;
            HW_IP_VERSION_MINOR: u32 = 4;
            CAPABILITIES_FLAGS: u64 = 8;
            IB_START_ALIGNMENT: u32 = 16;
            IB_SIZE_ALIGNMENT: u32 = 20;
            AVAILABLE_RINGS: u32 = 24;
            /// Bits 23:16 major, 15:8 minor, 7:0 revision.
            IP_DISCOVERY_VERSION: u32 = 28;
        }
        /// `AMDGPU_INFO_FW_VERSION`'s answer.
        Drm info_firmware = "drm_amdgpu_info_firmware" size 8 {
            VER: u32 = 0;
            FEATURE: u32 = 4;
        }
        /// `AMDGPU_INFO_MEMORY`'s answer: three `drm_amdgpu_heap_info`.
        Drm memory_info = "drm_amdgpu_memory_info" size 96 {
            VRAM_TOTAL_HEAP_SIZE("vram.total_heap_size"): u64 = 0;
            VRAM_USABLE_HEAP_SIZE("vram.usable_heap_size"): u64 = 8;
            VRAM_HEAP_USAGE("vram.heap_usage"): u64 = 16;
            VRAM_MAX_ALLOCATION("vram.max_allocation"): u64 = 24;
            CPU_VRAM_TOTAL_HEAP_SIZE("cpu_accessible_vram.total_heap_size"): u64 = 32;
            CPU_VRAM_USABLE_HEAP_SIZE("cpu_accessible_vram.usable_heap_size"): u64 = 40;
            CPU_VRAM_HEAP_USAGE("cpu_accessible_vram.heap_usage"): u64 = 48;
            CPU_VRAM_MAX_ALLOCATION("cpu_accessible_vram.max_allocation"): u64 = 56;
            GTT_TOTAL_HEAP_SIZE("gtt.total_heap_size"): u64 = 64;
            GTT_USABLE_HEAP_SIZE("gtt.usable_heap_size"): u64 = 72;
            GTT_HEAP_USAGE("gtt.heap_usage"): u64 = 80;
            GTT_MAX_ALLOCATION("gtt.max_allocation"): u64 = 88;
        }
        /// `AMDGPU_INFO_VRAM_GTT`'s answer.
        Drm info_vram_gtt = "drm_amdgpu_info_vram_gtt" size 24 {
            VRAM_SIZE: u64 = 0;
            VRAM_CPU_ACCESSIBLE_SIZE: u64 = 8;
            GTT_SIZE: u64 = 16;
        }
        /// `AMDGPU_INFO_DEV_INFO`'s answer: the fields this driver fills;
        /// it writes [`DEV_INFO_SIZE`] bytes (newer headers are longer).
        Drm info_device = "drm_amdgpu_info_device" {
            DEVICE_ID: u32 = 0;
            CHIP_REV: u32 = 4;
            EXTERNAL_REV: u32 = 8;
            PCI_REV: u32 = 12;
            FAMILY: u32 = 16;
            NUM_SHADER_ENGINES: u32 = 20;
            NUM_SHADER_ARRAYS_PER_ENGINE: u32 = 24;
            /// kHz.
            GPU_COUNTER_FREQ: u32 = 28;
            MAX_ENGINE_CLOCK: u64 = 32;
            MAX_MEMORY_CLOCK: u64 = 40;
            CU_ACTIVE_NUMBER: u32 = 48;
            /// `cu_bitmap[4][4]`: `[se % 4][se / 4]`, u32 each.
            CU_BITMAP: [u8; 64] = 56;
            IDS_FLAGS: u64 = 136;
            VIRTUAL_ADDRESS_OFFSET: u64 = 144;
            VIRTUAL_ADDRESS_MAX: u64 = 152;
            VIRTUAL_ADDRESS_ALIGNMENT: u32 = 160;
            PTE_FRAGMENT_SIZE: u32 = 164;
            GART_PAGE_SIZE: u32 = 168;
            VRAM_TYPE: u32 = 176;
            VRAM_BIT_WIDTH: u32 = 180;
            WAVE_FRONT_SIZE: u32 = 240;
            NUM_SHADER_VISIBLE_VGPRS: u32 = 244;
            NUM_CU_PER_SH: u32 = 248;
            NUM_TCC_BLOCKS: u32 = 252;
        }
    }
}

/// An ioctl argument as the kernel sees it: the caller's bytes, extended
/// with zeros to the size this driver knows. Reads past the end give 0;
/// writes past the end are dropped, so a caller with an older, shorter
/// structure gets back exactly its own size.
pub struct Args {
    pub bytes: Vec<u8>,
}

impl Args {
    pub fn new(caller: &[u8], known: usize) -> Args {
        let mut bytes = caller.to_vec();
        if bytes.len() < known {
            bytes.resize(known, 0);
        }
        Args { bytes }
    }

    /// Field `f` (zero past the caller's bytes, as they were extended).
    pub fn get<T: Value>(&self, f: Field<T>) -> T {
        get(&self.bytes, f)
    }

    pub fn set<T: Value>(&mut self, f: Field<T>, v: T) {
        put(&mut self.bytes, f, v)
    }
}

/// The most bytes one ioctl's argument may point at (WAIT_EVENTS on every
/// signal event is 4096 x 48 = 192 KiB).
pub const MAX_USER_BUFFERS: usize = 1 << 20;

/// The ranges of caller memory an ioctl's argument points at, as
/// (address, length): what a daemon client sends along with the argument
/// (and gets back once the driver wrote it). Lengths come from the counts
/// in the argument, as the kernel computes them; a total above
/// [`MAX_USER_BUFFERS`] is EINVAL.
pub fn user_buffers(request: u64, arg: &[u8]) -> Result<Vec<(u64, usize)>, crate::Errno> {
    let nr = ioc_nr(request);
    let mut v: Vec<(u64, usize)> = Vec::new();
    let mut add = |addr: u64, len: u64| {
        if addr != 0 && len != 0 {
            v.push((addr, len.min(MAX_USER_BUFFERS as u64 + 1) as usize));
        }
    };
    let n = |f: Field<u32>| u64::from(get(arg, f));
    match ioc_type(request) {
        KFD_TYPE => match nr {
            kfd::GET_PROCESS_APERTURES_NEW => {
                use kfd::get_process_apertures_new as g;
                let size = kfd::process_device_apertures::SIZE as u64;
                add(
                    get(arg, g::KFD_PROCESS_DEVICE_APERTURES_PTR),
                    n(g::NUM_OF_NODES) * size,
                )
            }
            kfd::WAIT_EVENTS => {
                use kfd::wait_events as w;
                let size = kfd::event_data::SIZE as u64;
                add(get(arg, w::EVENTS_PTR), n(w::NUM_EVENTS) * size)
            }
            kfd::MAP_MEMORY_TO_GPU | kfd::UNMAP_MEMORY_FROM_GPU => {
                use kfd::map_memory_to_gpu as m;
                add(get(arg, m::DEVICE_IDS_ARRAY_PTR), n(m::N_DEVICES) * 4)
            }
            kfd::GET_TILE_CONFIG => {
                use kfd::get_tile_config as t;
                add(
                    get(arg, t::TILE_CONFIG_PTR),
                    n(t::NUM_TILE_CONFIGS).min(32) * 4,
                );
                add(
                    get(arg, t::MACRO_TILE_CONFIG_PTR),
                    n(t::NUM_MACRO_TILE_CONFIGS).min(16) * 4,
                );
            }
            kfd::SET_CU_MASK => {
                use kfd::set_cu_mask as c;
                add(get(arg, c::CU_MASK_PTR), n(c::NUM_CU_MASK).div_ceil(32) * 4)
            }
            _ => {}
        },
        DRM_TYPE => match nr {
            drm::VERSION => {
                use drm::version as d;
                for (len, ptr) in [
                    (d::NAME_LEN, d::NAME),
                    (d::DATE_LEN, d::DATE),
                    (d::DESC_LEN, d::DESC),
                ] {
                    add(get(arg, ptr), get(arg, len));
                }
            }
            drm::AMDGPU_INFO => add(
                get(arg, drm::info::RETURN_POINTER),
                n(drm::info::RETURN_SIZE),
            ),
            drm::AMDGPU_GEM_OP if get(arg, drm::gem_op::OP) == drm::GEM_OP_GET_GEM_CREATE_INFO => {
                add(
                    get(arg, drm::gem_op::VALUE),
                    drm::gem_create_in::SIZE as u64,
                )
            }
            _ => {}
        },
        _ => {}
    }
    if v.iter().map(|&(_, n)| n).sum::<usize>() > MAX_USER_BUFFERS {
        return Err(crate::Errno::EINVAL);
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_fields_decode() {
        // Request numbers as ROCr 5.2.3 issues them (rocm-userspace notes).
        let create_queue = 0xc058_4b02u64;
        assert_eq!(ioc_size(create_queue), 88);
        assert_eq!(ioc_type(create_queue), KFD_TYPE);
        assert_eq!(ioc_nr(create_queue), kfd::CREATE_QUEUE);
        assert!(ioc_reads(create_queue) && ioc_writes(create_queue));
        let acquire = 0x4008_4b15u64;
        assert!(!ioc_reads(acquire) && ioc_writes(acquire));
        assert_eq!(ioc_size(0xc060_4b02), 96);
        assert_eq!(ioc_nr(0x4020_6445), drm::AMDGPU_INFO);
        assert_eq!(ioc_type(0x4020_6445), DRM_TYPE);
    }

    #[test]
    fn short_arguments_are_zero_extended() {
        let mut a = Args::new(&[1, 0, 0, 0], 8);
        assert_eq!(a.get(Field::<u32>::at(0)), 1);
        assert_eq!(a.get(Field::<u32>::at(4)), 0);
        assert_eq!(a.get(Field::<u64>::at(100)), 0);
        a.set(Field::<u64>::at(100), 5);
        assert_eq!(a.bytes.len(), 8);
    }
}
