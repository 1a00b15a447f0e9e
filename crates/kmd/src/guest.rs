//! [`GuestKfd`]: the KFD/driver interposer of DBT guest mode.
//!
//! The process sees the host's GPUs plus one synthetic guest GPU (e.g. an
//! MI355X, gfx950, on an MI300X host): the sysfs topology is the host's with
//! a guest node appended (its own `gpu_id`, render node
//! `/dev/dri/renderD<N>` and `/sys/dev/char/226:<N>` entries), and libdrm
//! gets the guest's device information on the guest's render node.
//!
//! Everything aimed at a host GPU, and every process-wide call (events,
//! queues by id, XNACK mode, ...), goes to the host driver: the emulator's
//! [`SimulatedDriver`](crate::SimulatedDriver), a daemon's
//! [`RemoteDriver`](crate::RemoteDriver), or the machine's real `/dev/kfd`
//! ([`KfdPassthrough`](crate::KfdPassthrough), untested: no AMD GPU here).
//! For the guest GPU this
//! layer answers only what the runtime needs to discover the GPU and start
//! up: process apertures (both ioctls), clock counters, VM acquisition,
//! available memory, memory policy, scratch and trap-handler set-up, and
//! memory. Guest memory is host memory under a synthetic handle (the guest's
//! `gpu_id` in the high half, as KFD makes handles), and the guest's
//! `gpu_id` in map/unmap device lists is rewritten to the host's.
//!
//! It never runs guest work: `CREATE_QUEUE` on the guest, a guest doorbell
//! allocation and a mapping of the guest's doorbells fail with KFD's errno
//! (EINVAL) and are logged by name. Reaching one means an HSA call aimed at
//! the guest agent was not redirected to the host agent by the HSA tools
//! library (`librocjitsu_hooks.so`, loaded through `HSA_TOOLS_LIB`).

use crate::abi::{self, Args, Field, get, kfd, put};
use crate::sysfs::SysfsTree;
use crate::user::{self, UserMemory};
use crate::{DeviceFile, Driver, Errno, MapSource, drm, gpu_id_of};
use rocjitsu_config::{DbtGuest, GpuConfig, GpuSpec};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The hint every refused guest call carries.
const NOT_INTERCEPTED: &str = "an HSA call aimed at the guest agent was not redirected to the host agent; is librocjitsu_hooks.so loaded (HSA_TOOLS_LIB) and does it handle this call?";

/// The host GPUs as the process sees them: KFD gpu_ids and render minors,
/// in node order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostGpu {
    pub gpu_id: u32,
    pub minor: u32,
}

/// The KFD interposer of guest mode (see the module documentation).
pub struct GuestKfd {
    host: Arc<dyn Driver>,
    host_gpus: Vec<HostGpu>,
    /// Index of the host GPU that runs the guest's work.
    host_index: usize,
    guest: GpuSpec,
    guest_gpu_id: u32,
    guest_minor: u32,
    sysfs: SysfsTree,
    /// Synthetic guest memory handles -> the host's handles.
    handles: Mutex<HashMap<u64, u64>>,
    /// The names of the guest calls refused so far (tests, reports).
    refused: Mutex<Vec<&'static str>>,
}

/// The guest's GPU as the process sees it: the identity of `guest_target`'s
/// shipped configuration, on a PCI location and render minor of its own
/// after the host's GPUs.
pub fn guest_spec(host_gpus: &[GpuSpec], d: &DbtGuest) -> Result<GpuSpec, String> {
    let target = d.guest_target().ok_or_else(|| {
        format!(
            "dbt_guest.guest_isa: no {} GPU identity is available",
            d.guest_isa
        )
    })?;
    let mut g = GpuConfig::builtin(target).gpus.remove(0);
    let minor = host_gpus
        .iter()
        .map(|h| h.kfd.drm_render_minor)
        .max()
        .unwrap_or(127)
        .max(127)
        + 1;
    g.kfd.drm_render_minor = minor;
    g.kfd.hive_id = 0;
    g.pci.domain = host_gpus.first().map_or(0, |h| h.pci.domain);
    // The bus after the host GPUs' last one.
    let bus = host_gpus
        .iter()
        .map(|h| h.pci.location_id >> 8)
        .max()
        .map_or(0xc1, |b| b + 1);
    g.pci.location_id = bus << 8;
    Ok(g)
}

impl GuestKfd {
    /// The guest layer over `host`, whose GPUs `host_config` describes (the
    /// simulator's configuration, or the one a daemon sent). Writes the
    /// combined sysfs tree under `runtime_dir`.
    pub fn new(
        host: Arc<dyn Driver>,
        host_config: &GpuConfig,
        d: &DbtGuest,
        runtime_dir: &Path,
    ) -> Result<GuestKfd, String> {
        let idx = d.host_gpu_id as usize;
        let Some(h) = host_config.gpus.get(idx) else {
            return Err(format!(
                "dbt_guest.host_gpu_id: {} names host GPU {idx}, but the host has {} GPU(s) (counted from 0)",
                d.host_gpu_id,
                host_config.gpus.len()
            ));
        };
        if Some(h.gfx_target) != d.host_isa.gfx_target() {
            return Err(format!(
                "dbt_guest.host_isa: host GPU {idx} is a {} ({}), not a {}",
                h.gfx_target, h.marketing_name, d.host_isa
            ));
        }
        let mut combined = GpuConfig {
            schema: None,
            version: host_config.version,
            gpus: host_config.gpus.clone(),
            dbt_guest: None,
            plugins: Vec::new(),
        };
        let mut guest = guest_spec(&host_config.gpus, d)?;
        let n = combined.gpus.len();
        let host_gpus: Vec<HostGpu> = host_config
            .gpus
            .iter()
            .enumerate()
            .map(|(i, g)| HostGpu {
                gpu_id: gpu_id_of(host_config, i),
                minor: g.kfd.drm_render_minor,
            })
            .collect();
        // A gpu_id of its own (the ids are hashes; move the guest to the
        // next bus on the rare collision).
        let guest_gpu_id = loop {
            combined.gpus.truncate(n);
            combined.gpus.push(guest.clone());
            let id = gpu_id_of(&combined, n);
            if host_gpus.iter().all(|h| h.gpu_id != id) {
                break id;
            }
            guest.pci.location_id += 0x100;
        };
        let sysfs = SysfsTree::create(&combined, runtime_dir).map_err(|e| {
            format!(
                "cannot write the guest KFD sysfs tree under {}: {e} (set ROCJITSU_RUNTIME_DIR to a writable directory)",
                runtime_dir.display()
            )
        })?;
        tracing::info!("DBT guest: host GPU {idx} is a {}", h.marketing_name);
        Ok(Self::assemble(
            host,
            host_gpus,
            idx,
            guest,
            guest_gpu_id,
            sysfs,
        ))
    }

    /// The guest layer over the machine's real KFD: the real topology,
    /// copied, plus the guest node.
    pub fn over_real(
        host: Arc<crate::KfdPassthrough>,
        d: &DbtGuest,
        runtime_dir: &Path,
    ) -> Result<GuestKfd, String> {
        let real = host.gpus().to_vec();
        let idx = d.host_gpu_id as usize;
        let Some(h) = real.get(idx) else {
            return Err(format!(
                "dbt_guest.host_gpu_id: {} names host GPU {idx}, but this machine's KFD has {} GPU(s) (counted from 0)",
                d.host_gpu_id,
                real.len()
            ));
        };
        let want = d.host_isa.gfx_target().map(|t| t.gfx_target_version());
        if Some(h.gfx_target_version) != want {
            return Err(format!(
                "dbt_guest.host_isa: host GPU {idx} (KFD node {}) has gfx_target_version {}, not a {}",
                h.node, h.gfx_target_version, d.host_isa
            ));
        }
        let mut guest = guest_spec(&[], d)?;
        guest.kfd.drm_render_minor = real
            .iter()
            .map(|g| g.gpu.minor)
            .max()
            .unwrap_or(127)
            .max(127)
            + 1;
        guest.pci.location_id = 0xfe00;
        let one = GpuConfig {
            schema: None,
            version: rocjitsu_config::CONFIG_VERSION,
            gpus: vec![guest.clone()],
            dbt_guest: None,
            plugins: Vec::new(),
        };
        let mut guest_gpu_id = gpu_id_of(&one, 0);
        while real.iter().any(|g| g.gpu.gpu_id == guest_gpu_id) {
            guest_gpu_id = (guest_gpu_id % 0xffff) + 1;
        }
        let sysfs = SysfsTree::create_over_real(host.sys_root(), &guest, guest_gpu_id, runtime_dir)
            .map_err(|e| {
                format!(
                    "cannot write the guest KFD sysfs tree (from {}) under {}: {e}",
                    host.sys_root().display(),
                    runtime_dir.display()
                )
            })?;
        let host_gpus = real.into_iter().map(|g| g.gpu).collect();
        Ok(Self::assemble(
            host,
            host_gpus,
            idx,
            guest,
            guest_gpu_id,
            sysfs,
        ))
    }

    fn assemble(
        host: Arc<dyn Driver>,
        host_gpus: Vec<HostGpu>,
        idx: usize,
        guest: GpuSpec,
        guest_gpu_id: u32,
        sysfs: SysfsTree,
    ) -> GuestKfd {
        tracing::info!(
            "DBT guest: {} ({}, gpu_id {guest_gpu_id}, /dev/dri/renderD{}) on host GPU {idx} (gpu_id {}); sysfs at {}",
            guest.marketing_name,
            guest.gfx_target,
            guest.kfd.drm_render_minor,
            host_gpus[idx].gpu_id,
            sysfs.root().display()
        );
        GuestKfd {
            host,
            host_index: idx,
            guest_minor: guest.kfd.drm_render_minor,
            guest,
            guest_gpu_id,
            host_gpus,
            sysfs,
            handles: Mutex::new(HashMap::new()),
            refused: Mutex::new(Vec::new()),
        }
    }

    /// The guest GPU's KFD gpu_id.
    pub fn guest_gpu_id(&self) -> u32 {
        self.guest_gpu_id
    }

    /// The gpu_id of the host GPU that runs the guest's work.
    pub fn host_gpu_id(&self) -> u32 {
        self.host_gpus[self.host_index].gpu_id
    }

    /// The guest's render node minor.
    pub fn guest_minor(&self) -> u32 {
        self.guest_minor
    }

    /// The guest GPU as shown (identity and properties).
    pub fn guest(&self) -> &GpuSpec {
        &self.guest
    }

    pub fn sysfs(&self) -> &SysfsTree {
        &self.sysfs
    }

    /// The guest calls refused so far, by name.
    pub fn refused(&self) -> Vec<&'static str> {
        self.refused
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The host handle a (possibly synthetic) handle stands for.
    fn host_handle(&self, h: u64) -> u64 {
        self.handles
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&h)
            .copied()
            .unwrap_or(h)
    }

    fn host_device(&self) -> DeviceFile {
        DeviceFile::Render {
            gpu: self.host_index,
            minor: self.host_gpus[self.host_index].minor,
        }
    }

    fn is_guest_dev(&self, dev: DeviceFile) -> bool {
        matches!(dev, DeviceFile::Render { minor, .. } if minor == self.guest_minor)
    }

    fn refuse(&self, what: &'static str, detail: String) -> Errno {
        tracing::error!(
            "DBT guest: {what} on the guest GPU ({}, gpu_id {}) refused (EINVAL): {detail}; guest work runs on the host GPU only: {NOT_INTERCEPTED}",
            self.guest.gfx_target,
            self.guest_gpu_id
        );
        self.refused
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(what);
        Errno::EINVAL
    }

    /// Forwards a KFD ioctl whose argument names the guest in `gpu_id`,
    /// with the host's gpu_id there; the caller sees its own gpu_id back.
    fn forward_rewritten(
        &self,
        request: u64,
        arg: &mut [u8],
        gpu_id: Field<u32>,
    ) -> Result<i32, Errno> {
        put(arg, gpu_id, self.host_gpu_id());
        let r = self.host.ioctl(DeviceFile::Kfd, request, arg);
        put(arg, gpu_id, self.guest_gpu_id);
        r
    }

    fn kfd(&self, request: u64, arg: &mut [u8]) -> Result<i32, Errno> {
        let nr = abi::ioc_nr(request);
        let g = self.guest_gpu_id;
        match nr {
            kfd::GET_PROCESS_APERTURES_NEW => self.apertures_new(request, arg),
            kfd::GET_PROCESS_APERTURES => {
                use kfd::get_process_apertures as p;
                use kfd::process_device_apertures as e;
                let r = self.host.ioctl(DeviceFile::Kfd, request, arg)?;
                let n = get(arg, p::NUM_OF_NODES) as usize;
                let max = p::PROCESS_APERTURES.range().len() / e::SIZE;
                if n < max && self.host_index < n && arg.len() >= p::NUM_OF_NODES.range().end {
                    let at = |i: usize| p::PROCESS_APERTURES.off + i * e::SIZE;
                    let src = at(self.host_index);
                    let mut entry = arg[src..src + e::SIZE].to_vec();
                    put(&mut entry, e::GPU_ID, g);
                    arg[at(n)..at(n + 1)].copy_from_slice(&entry);
                    put(arg, p::NUM_OF_NODES, n as u32 + 1);
                }
                Ok(r)
            }
            // The guest's render node is ours.
            kfd::ACQUIRE_VM if get(arg, kfd::acquire_vm::GPU_ID) == g => Ok(0),
            kfd::SET_MEMORY_POLICY if get(arg, kfd::set_memory_policy::GPU_ID) == g => {
                use kfd::set_memory_policy as p;
                if get(arg, p::DEFAULT_POLICY) > 1 || get(arg, p::ALTERNATE_POLICY) > 1 {
                    return Err(Errno::EINVAL);
                }
                Ok(0)
            }
            // Scratch and trap handler set-up: start-up plumbing of an agent
            // that never runs a wave.
            kfd::SET_SCRATCH_BACKING_VA if get(arg, kfd::set_scratch_backing_va::GPU_ID) == g => {
                Ok(0)
            }
            kfd::SET_TRAP_HANDLER if get(arg, kfd::set_trap_handler::GPU_ID) == g => Ok(0),
            kfd::GET_CLOCK_COUNTERS if get(arg, kfd::get_clock_counters::GPU_ID) == g => {
                self.forward_rewritten(request, arg, kfd::get_clock_counters::GPU_ID)
            }
            kfd::AVAILABLE_MEMORY if get(arg, kfd::available_memory::GPU_ID) == g => {
                self.forward_rewritten(request, arg, kfd::available_memory::GPU_ID)
            }
            kfd::GET_TILE_CONFIG if get(arg, kfd::get_tile_config::GPU_ID) == g => {
                self.forward_rewritten(request, arg, kfd::get_tile_config::GPU_ID)
            }
            kfd::CREATE_QUEUE if get(arg, kfd::create_queue::GPU_ID) == g => Err(self.refuse(
                "CREATE_QUEUE",
                format!("queue type {}", get(arg, kfd::create_queue::QUEUE_TYPE)),
            )),
            kfd::ALLOC_MEMORY_OF_GPU => self.alloc(request, arg),
            kfd::FREE_MEMORY_OF_GPU => {
                use kfd::free_memory_of_gpu::HANDLE;
                let h = get(arg, HANDLE);
                let host = self.host_handle(h);
                put(arg, HANDLE, host);
                let r = self.host.ioctl(DeviceFile::Kfd, request, arg);
                put(arg, HANDLE, h);
                if r.is_ok() {
                    self.handles
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .remove(&h);
                }
                r
            }
            kfd::MAP_MEMORY_TO_GPU | kfd::UNMAP_MEMORY_FROM_GPU => self.map(request, arg),
            kfd::IPC_EXPORT_HANDLE => {
                use kfd::ipc_export_handle as x;
                let h = get(arg, x::HANDLE);
                put(arg, x::HANDLE, self.host_handle(h));
                let guest = get(arg, x::GPU_ID) == g;
                if guest {
                    put(arg, x::GPU_ID, self.host_gpu_id());
                }
                let r = self.host.ioctl(DeviceFile::Kfd, request, arg);
                put(arg, x::HANDLE, h);
                if guest {
                    put(arg, x::GPU_ID, g);
                }
                r
            }
            kfd::IPC_IMPORT_HANDLE if get(arg, kfd::ipc_import_handle::GPU_ID) == g => {
                use kfd::ipc_import_handle as x;
                let r = self.forward_rewritten(request, arg, x::GPU_ID)?;
                let host = get(arg, x::HANDLE);
                put(arg, x::HANDLE, self.synthetic(host));
                Ok(r)
            }
            _ => self.host.ioctl(DeviceFile::Kfd, request, arg),
        }
    }

    /// A synthetic guest handle for host handle `host`.
    fn synthetic(&self, host: u64) -> u64 {
        let s = (u64::from(self.guest_gpu_id) << 32) | (host & 0xffff_ffff);
        self.handles
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(s, host);
        s
    }

    /// `GET_PROCESS_APERTURES_NEW` {kfd_process_device_apertures_ptr,
    /// num_of_nodes}: the host's entries, then the guest's (the selected
    /// host GPU's apertures under the guest's gpu_id).
    fn apertures_new(&self, request: u64, arg: &mut [u8]) -> Result<i32, Errno> {
        use kfd::get_process_apertures_new::{KFD_PROCESS_DEVICE_APERTURES_PTR, NUM_OF_NODES};
        use kfd::process_device_apertures as e;
        let cap = get(arg, NUM_OF_NODES) as usize;
        let hosts = self.host_gpus.len();
        if cap == 0 {
            let r = self.host.ioctl(DeviceFile::Kfd, request, arg)?;
            put(arg, NUM_OF_NODES, get(arg, NUM_OF_NODES) + 1);
            return Ok(r);
        }
        if cap <= hosts {
            return self.host.ioctl(DeviceFile::Kfd, request, arg);
        }
        put(arg, NUM_OF_NODES, hosts as u32);
        let r = self.host.ioctl(DeviceFile::Kfd, request, arg);
        if r.is_err() {
            put(arg, NUM_OF_NODES, cap as u32);
        }
        let r = r?;
        let n = get(arg, NUM_OF_NODES) as usize;
        let ptr = get(arg, KFD_PROCESS_DEVICE_APERTURES_PTR);
        let size = e::SIZE as u64;
        let mut entry = vec![0u8; e::SIZE];
        user::Local.read(
            ptr + self.host_index.min(n.saturating_sub(1)) as u64 * size,
            &mut entry,
        )?;
        put(&mut entry, e::GPU_ID, self.guest_gpu_id);
        user::Local.write(ptr + n as u64 * size, &entry)?;
        put(arg, NUM_OF_NODES, n as u32 + 1);
        Ok(r)
    }

    /// `ALLOC_MEMORY_OF_GPU` {va_addr, size, handle out, mmap_offset
    /// in/out, gpu_id, flags}: on the guest, host memory under a synthetic
    /// handle; a doorbell page is refused.
    fn alloc(&self, request: u64, arg: &mut [u8]) -> Result<i32, Errno> {
        use kfd::alloc_memory_of_gpu as m;
        if get(arg, m::GPU_ID) != self.guest_gpu_id {
            return self.host.ioctl(DeviceFile::Kfd, request, arg);
        }
        let flags = get(arg, m::FLAGS);
        if flags & kfd::ALLOC_DOORBELL != 0 {
            return Err(self.refuse(
                "ALLOC_MEMORY_OF_GPU (doorbell)",
                format!("flags 0x{flags:08x}"),
            ));
        }
        let r = self.forward_rewritten(request, arg, m::GPU_ID)?;
        let host = get(arg, m::HANDLE);
        let s = self.synthetic(host);
        put(arg, m::HANDLE, s);
        tracing::debug!(
            "DBT guest: allocation of {} bytes at 0x{:x} (flags 0x{flags:08x}) on the guest is host handle 0x{host:x}, shown as 0x{s:x}",
            get(arg, m::BYTES),
            get(arg, m::VA_ADDR)
        );
        Ok(r)
    }

    /// `MAP/UNMAP_MEMORY_TO_GPU` {handle, device_ids_array_ptr, n_devices,
    /// n_success}: the guest's gpu_id becomes the host's (once).
    fn map(&self, request: u64, arg: &mut [u8]) -> Result<i32, Errno> {
        // UNMAP's layout is MAP's.
        use kfd::map_memory_to_gpu::{DEVICE_IDS_ARRAY_PTR, HANDLE, N_DEVICES, N_SUCCESS};
        let h = get(arg, HANDLE);
        let ptr = get(arg, DEVICE_IDS_ARRAY_PTR);
        let n = get(arg, N_DEVICES) as usize;
        let host_handle = self.host_handle(h);
        put(arg, HANDLE, host_handle);
        if n == 0 || n > 1024 {
            let r = self.host.ioctl(DeviceFile::Kfd, request, arg);
            put(arg, HANDLE, h);
            return r;
        }
        let mut raw = vec![0u8; n * 4];
        if let Err(e) = user::Local.read(ptr, &mut raw) {
            put(arg, HANDLE, h);
            return Err(e);
        }
        let ids: Vec<u32> = raw
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        if !ids.contains(&self.guest_gpu_id) {
            let r = self.host.ioctl(DeviceFile::Kfd, request, arg);
            put(arg, HANDLE, h);
            return r;
        }
        let host_id = self.host_gpu_id();
        let mut rewritten: Vec<u32> = Vec::with_capacity(n);
        for id in ids {
            let id = if id == self.guest_gpu_id { host_id } else { id };
            if !rewritten.contains(&id) {
                rewritten.push(id);
            }
        }
        let bytes: Vec<u8> = rewritten.iter().flat_map(|v| v.to_le_bytes()).collect();
        tracing::debug!(
            "DBT guest: {} of handle 0x{h:x}: device ids rewritten to {rewritten:?}",
            kfd::name(abi::ioc_nr(request))
        );
        put(arg, DEVICE_IDS_ARRAY_PTR, bytes.as_ptr() as u64);
        put(arg, N_DEVICES, rewritten.len() as u32);
        put(arg, N_SUCCESS, 0);
        let r = self.host.ioctl(DeviceFile::Kfd, request, arg);
        put(arg, HANDLE, h);
        put(arg, DEVICE_IDS_ARRAY_PTR, ptr);
        put(arg, N_DEVICES, n as u32);
        if r.is_ok() {
            put(arg, N_SUCCESS, n as u32);
        }
        drop(bytes);
        r
    }

    fn guest_drm(&self, request: u64, arg: &mut [u8]) -> Result<i32, Errno> {
        if abi::ioc_type(request) != abi::DRM_TYPE {
            return Err(Errno::ENOTTY);
        }
        let nr = abi::ioc_nr(request);
        let mut a = Args::new(arg, arg.len().max(64));
        // The guest's memory is the host GPU's, whose use is not seen here.
        let r = drm::ioctl(&self.guest, 0, nr, &mut a, &user::Local);
        match &r {
            Ok(_) => tracing::debug!(
                "guest drm ioctl {} (0x{request:x}) -> 0",
                abi::drm::name(nr)
            ),
            Err(e) => tracing::debug!(
                "guest drm ioctl {} (0x{request:x}) -> errno {}",
                abi::drm::name(nr),
                e.0
            ),
        }
        if r.is_ok() && abi::ioc_reads(request) {
            let n = arg.len();
            arg.copy_from_slice(&a.bytes[..n]);
        }
        r
    }
}

impl Driver for GuestKfd {
    fn device_for_path(&self, path: &str) -> Option<DeviceFile> {
        if let Some(m) = path.strip_prefix("/dev/dri/renderD")
            && m.parse::<u32>().ok() == Some(self.guest_minor)
        {
            return Some(DeviceFile::Render {
                gpu: self.host_gpus.len(),
                minor: self.guest_minor,
            });
        }
        self.host.device_for_path(path)
    }

    fn sysfs_redirect(&self, path: &str) -> Option<PathBuf> {
        self.sysfs.redirect(path)
    }

    fn open(&self, dev: DeviceFile) -> Result<(), Errno> {
        if self.is_guest_dev(dev) {
            return Ok(());
        }
        self.host.open(dev)
    }

    fn ioctl(&self, dev: DeviceFile, request: u64, arg: &mut [u8]) -> Result<i32, Errno> {
        if self.is_guest_dev(dev) {
            return self.guest_drm(request, arg);
        }
        match dev {
            // Fields past a short argument read as 0 and writes to them are
            // dropped (`get`/`put`), as the kernel zero-extends.
            DeviceFile::Kfd if abi::ioc_type(request) == abi::KFD_TYPE => self.kfd(request, arg),
            _ => self.host.ioctl(dev, request, arg),
        }
    }

    fn mmap(&self, dev: DeviceFile, offset: u64, len: u64) -> Result<MapSource, Errno> {
        if self.is_guest_dev(dev) {
            // Guest memory is host memory: its pages come through the host's
            // render node.
            return self.host.mmap(self.host_device(), offset, len);
        }
        if dev == DeviceFile::Kfd {
            let kind = offset >> kfd::MMAP_TYPE_SHIFT;
            let gpu_id = ((offset >> kfd::MMAP_GPU_ID_SHIFT) & kfd::MMAP_GPU_ID_MASK) as u32;
            if gpu_id == self.guest_gpu_id && kind != kfd::MMAP_TYPE_EVENTS {
                if kind == kfd::MMAP_TYPE_DOORBELL {
                    return Err(self.refuse(
                        "mmap of the doorbells",
                        format!("offset 0x{offset:x}, {len} bytes"),
                    ));
                }
                let mask = kfd::MMAP_GPU_ID_MASK << kfd::MMAP_GPU_ID_SHIFT;
                let host =
                    (offset & !mask) | (u64::from(self.host_gpu_id()) << kfd::MMAP_GPU_ID_SHIFT);
                return self.host.mmap(dev, host, len);
            }
        }
        self.host.mmap(dev, offset, len)
    }

    fn release(&self) -> bool {
        self.host.release()
    }
}
