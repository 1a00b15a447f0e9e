//! The user-kernel interface: ioctl request encoding, the KFD and amdgpu DRM
//! request numbers this driver answers, and byte-level access to argument
//! structures (`linux/kfd_ioctl.h`, `libdrm/amdgpu_drm.h`, `drm/drm.h`).
//!
//! Arguments are handled as byte buffers with explicit offsets rather than
//! `repr(C)` structs: one request number can arrive with more than one
//! structure size (ROCr 6.4's `CREATE_QUEUE` is 96 bytes, 5.2's 88), and the
//! kernel zero-extends a short structure and copies back only the caller's
//! size. [`Args`] does the same.

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

    pub const ALLOC_VRAM: u32 = 1 << 0;
    pub const ALLOC_GTT: u32 = 1 << 1;
    pub const ALLOC_USERPTR: u32 = 1 << 2;
    pub const ALLOC_DOORBELL: u32 = 1 << 3;
    pub const ALLOC_MMIO_REMAP: u32 = 1 << 4;
    pub const ALLOC_WRITABLE: u32 = 1 << 31;
    pub const ALLOC_EXECUTABLE: u32 = 1 << 30;

    pub const EVENT_SIGNAL: u32 = 0;
    pub const EVENT_HW_EXCEPTION: u32 = 3;
    pub const EVENT_MEMORY: u32 = 8;
    /// Signal events live in the event page, one 64-bit slot each.
    pub const SIGNAL_EVENT_LIMIT: u32 = 4096;
    pub const WAIT_COMPLETE: u32 = 0;
    pub const WAIT_TIMEOUT: u32 = 1;

    /// `KFD_MMAP_TYPE_*` in bits 62-63 of a KFD mmap offset.
    pub const MMAP_TYPE_SHIFT: u32 = 62;
    pub const MMAP_TYPE_DOORBELL: u64 = 3;
    pub const MMAP_TYPE_EVENTS: u64 = 2;
    pub const MMAP_TYPE_MMIO: u64 = 0;
    /// The GPU id sits in bits 46-61 of a KFD mmap offset.
    pub const MMAP_GPU_ID_SHIFT: u32 = 46;
    pub const MMAP_GPU_ID_MASK: u64 = 0xffff;

    /// Size of one `struct kfd_event_data`.
    pub const EVENT_DATA_SIZE: usize = 48;
    /// Size of one `struct kfd_process_device_apertures`.
    pub const APERTURES_SIZE: usize = 56;
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
    /// `DRM_COMMAND_BASE + DRM_AMDGPU_INFO`.
    pub const AMDGPU_INFO: u8 = 0x45;

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
    /// Size of `struct drm_amdgpu_info_device` in libdrm 2.4.114.
    pub const DEV_INFO_SIZE: usize = 368;
    /// `AMDGPU_FAMILY_AI` (GFX9).
    pub const FAMILY_AI: u32 = 141;
    /// `mmGB_ADDR_CONFIG` on GFX9 (dword offset).
    pub const GB_ADDR_CONFIG_REG: u32 = 0x263e;
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

    pub fn u32(&self, off: usize) -> u32 {
        let mut b = [0u8; 4];
        if let Some(s) = self.bytes.get(off..off + 4) {
            b.copy_from_slice(s);
        }
        u32::from_le_bytes(b)
    }

    pub fn u64(&self, off: usize) -> u64 {
        let mut b = [0u8; 8];
        if let Some(s) = self.bytes.get(off..off + 8) {
            b.copy_from_slice(s);
        }
        u64::from_le_bytes(b)
    }

    pub fn set_u32(&mut self, off: usize, v: u32) {
        if let Some(s) = self.bytes.get_mut(off..off + 4) {
            s.copy_from_slice(&v.to_le_bytes());
        }
    }

    pub fn set_u64(&mut self, off: usize, v: u64) {
        if let Some(s) = self.bytes.get_mut(off..off + 8) {
            s.copy_from_slice(&v.to_le_bytes());
        }
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
    let a = Args::new(arg, 64);
    let nr = ioc_nr(request);
    let mut v: Vec<(u64, usize)> = Vec::new();
    let mut add = |addr: u64, len: u64| {
        if addr != 0 && len != 0 {
            v.push((addr, len.min(MAX_USER_BUFFERS as u64 + 1) as usize));
        }
    };
    match ioc_type(request) {
        KFD_TYPE => match nr {
            kfd::GET_PROCESS_APERTURES_NEW => {
                add(a.u64(0), u64::from(a.u32(8)) * kfd::APERTURES_SIZE as u64)
            }
            kfd::WAIT_EVENTS => add(a.u64(0), u64::from(a.u32(8)) * kfd::EVENT_DATA_SIZE as u64),
            kfd::MAP_MEMORY_TO_GPU | kfd::UNMAP_MEMORY_FROM_GPU => {
                add(a.u64(8), u64::from(a.u32(16)) * 4)
            }
            kfd::GET_TILE_CONFIG => {
                add(a.u64(0), u64::from(a.u32(16).min(32)) * 4);
                add(a.u64(8), u64::from(a.u32(20).min(16)) * 4);
            }
            kfd::SET_CU_MASK => add(a.u64(8), u64::from(a.u32(4)).div_ceil(32) * 4),
            _ => {}
        },
        DRM_TYPE => match nr {
            drm::VERSION => {
                for off in [16, 32, 48] {
                    add(a.u64(off + 8), a.u64(off));
                }
            }
            drm::AMDGPU_INFO => add(a.u64(0), u64::from(a.u32(8))),
            _ => {}
        },
        _ => {}
    }
    if v.iter().map(|&(_, n)| n).sum::<usize>() > MAX_USER_BUFFERS {
        return Err(crate::Errno::EINVAL);
    }
    Ok(v)
}

/// Little-endian field writes into a plain buffer (structures the driver
/// builds and copies out through a user pointer).
pub fn put_u32(buf: &mut [u8], off: usize, v: u32) {
    if let Some(s) = buf.get_mut(off..off + 4) {
        s.copy_from_slice(&v.to_le_bytes());
    }
}

pub fn put_u64(buf: &mut [u8], off: usize, v: u64) {
    if let Some(s) = buf.get_mut(off..off + 8) {
        s.copy_from_slice(&v.to_le_bytes());
    }
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
        assert_eq!(a.u32(0), 1);
        assert_eq!(a.u32(4), 0);
        assert_eq!(a.u64(100), 0);
        a.set_u64(100, 5);
        assert_eq!(a.bytes.len(), 8);
    }
}
