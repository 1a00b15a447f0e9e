//! The shape of the virtual machine built from a [`GpuConfig`]: GPUs → XCDs
//! → shader engines → CUs.
//!
//! Every level is stored once in a flat array and refers to its children by
//! a contiguous index range, so building the topology allocates four vectors
//! in total (one per level) and walking it allocates nothing. Ids are global
//! indices into those arrays; each element also records its index within
//! its parent.

use std::ops::Range;

use rocjitsu_config::{GpuConfig, GpuSpec};

/// Global index of a GPU (its KFD GPU node order).
pub type GpuId = u32;
/// Global index of an XCD across all GPUs.
pub type XcdId = u32;
/// Global index of a shader engine across all GPUs.
pub type SeId = u32;
/// Global index of a CU across all GPUs.
pub type CuId = u32;

/// One GPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gpu {
    pub id: GpuId,
    /// Index of the GPU's spec in [`GpuConfig::gpus`].
    pub spec: usize,
    xcds: Range<XcdId>,
    ses: Range<SeId>,
    cus: Range<CuId>,
}

/// One XCD (accelerator complex die; one XCC).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Xcd {
    pub id: XcdId,
    pub gpu: GpuId,
    /// Index within its GPU (the XCC id).
    pub index: u32,
    ses: Range<SeId>,
    cus: Range<CuId>,
}

/// One shader engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShaderEngine {
    pub id: SeId,
    pub gpu: GpuId,
    pub xcd: XcdId,
    /// Index within its XCD.
    pub index: u32,
    cus: Range<CuId>,
}

/// One compute unit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComputeUnit {
    pub id: CuId,
    pub gpu: GpuId,
    pub xcd: XcdId,
    pub se: SeId,
    /// Index within its shader engine.
    pub index: u32,
    /// Index within its GPU (0 .. total_cus).
    pub index_in_gpu: u32,
    /// LDS size in bytes.
    pub lds_bytes: u32,
    /// SIMDs in the CU.
    pub simds: u32,
    /// Wave slots per SIMD.
    pub wave_slots_per_simd: u32,
}

impl ComputeUnit {
    /// Wave slots of the whole CU.
    pub fn wave_slots(&self) -> u32 {
        self.simds * self.wave_slots_per_simd
    }
}

/// GPUs, XCDs, shader engines and CUs of a configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topology {
    gpus: Vec<Gpu>,
    xcds: Vec<Xcd>,
    ses: Vec<ShaderEngine>,
    cus: Vec<ComputeUnit>,
}

fn items<'a, T>(all: &'a [T], r: &Range<u32>) -> &'a [T] {
    all.get(r.start as usize..r.end as usize).unwrap_or(&[])
}

impl Topology {
    /// Builds the topology of a (validated) configuration.
    pub fn new(config: &GpuConfig) -> Topology {
        let specs = &config.gpus;
        let n_xcd: usize = specs.iter().map(|g| g.soc.xcds as usize).sum();
        let n_se: usize = specs
            .iter()
            .map(|g| g.soc.xcds as usize * g.soc.cus_per_shader_engine.len())
            .sum();
        let n_cu: usize = specs
            .iter()
            .map(|g| g.soc.xcds as usize * g.cus_per_xcd() as usize)
            .sum();
        let mut t = Topology {
            gpus: Vec::with_capacity(specs.len()),
            xcds: Vec::with_capacity(n_xcd),
            ses: Vec::with_capacity(n_se),
            cus: Vec::with_capacity(n_cu),
        };
        for (spec_index, spec) in specs.iter().enumerate() {
            t.push_gpu(spec_index, spec);
        }
        t
    }

    fn push_gpu(&mut self, spec_index: usize, spec: &GpuSpec) {
        let gpu = self.gpus.len() as GpuId;
        let (x0, s0, c0) = (self.xcd_count(), self.se_count(), self.cu_count());
        for xi in 0..spec.soc.xcds {
            let xcd = self.xcd_count();
            let (xs0, xc0) = (self.se_count(), self.cu_count());
            for (si, &n) in spec.soc.cus_per_shader_engine.iter().enumerate() {
                let se = self.se_count();
                let sc0 = self.cu_count();
                for ci in 0..n {
                    let id = self.cu_count();
                    self.cus.push(ComputeUnit {
                        id,
                        gpu,
                        xcd,
                        se,
                        index: ci,
                        index_in_gpu: id - c0,
                        lds_bytes: spec.cu.lds_bytes,
                        simds: spec.cu.simds,
                        wave_slots_per_simd: spec.cu.wave_slots_per_simd,
                    });
                }
                self.ses.push(ShaderEngine {
                    id: se,
                    gpu,
                    xcd,
                    index: si as u32,
                    cus: sc0..self.cu_count(),
                });
            }
            self.xcds.push(Xcd {
                id: xcd,
                gpu,
                index: xi,
                ses: xs0..self.se_count(),
                cus: xc0..self.cu_count(),
            });
        }
        self.gpus.push(Gpu {
            id: gpu,
            spec: spec_index,
            xcds: x0..self.xcd_count(),
            ses: s0..self.se_count(),
            cus: c0..self.cu_count(),
        });
    }

    pub fn gpu_count(&self) -> u32 {
        self.gpus.len() as u32
    }
    pub fn xcd_count(&self) -> u32 {
        self.xcds.len() as u32
    }
    pub fn se_count(&self) -> u32 {
        self.ses.len() as u32
    }
    pub fn cu_count(&self) -> u32 {
        self.cus.len() as u32
    }

    /// All GPUs.
    pub fn gpus(&self) -> &[Gpu] {
        &self.gpus
    }
    /// All XCDs of all GPUs.
    pub fn all_xcds(&self) -> &[Xcd] {
        &self.xcds
    }
    /// All shader engines of all GPUs.
    pub fn all_shader_engines(&self) -> &[ShaderEngine] {
        &self.ses
    }
    /// All CUs of all GPUs.
    pub fn all_cus(&self) -> &[ComputeUnit] {
        &self.cus
    }

    pub fn gpu(&self, id: GpuId) -> Option<&Gpu> {
        self.gpus.get(id as usize)
    }
    pub fn xcd(&self, id: XcdId) -> Option<&Xcd> {
        self.xcds.get(id as usize)
    }
    pub fn shader_engine(&self, id: SeId) -> Option<&ShaderEngine> {
        self.ses.get(id as usize)
    }
    pub fn cu(&self, id: CuId) -> Option<&ComputeUnit> {
        self.cus.get(id as usize)
    }

    /// The XCDs of a GPU.
    pub fn xcds_of(&self, gpu: &Gpu) -> &[Xcd] {
        items(&self.xcds, &gpu.xcds)
    }
    /// The shader engines of a GPU.
    pub fn shader_engines_of_gpu(&self, gpu: &Gpu) -> &[ShaderEngine] {
        items(&self.ses, &gpu.ses)
    }
    /// The CUs of a GPU, in `index_in_gpu` order.
    pub fn cus_of_gpu(&self, gpu: &Gpu) -> &[ComputeUnit] {
        items(&self.cus, &gpu.cus)
    }
    /// The shader engines of an XCD.
    pub fn shader_engines_of(&self, xcd: &Xcd) -> &[ShaderEngine] {
        items(&self.ses, &xcd.ses)
    }
    /// The CUs of an XCD.
    pub fn cus_of_xcd(&self, xcd: &Xcd) -> &[ComputeUnit] {
        items(&self.cus, &xcd.cus)
    }
    /// The CUs of a shader engine.
    pub fn cus_of(&self, se: &ShaderEngine) -> &[ComputeUnit] {
        items(&self.cus, &se.cus)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocjitsu_config::testing::shipped;

    #[test]
    fn counts_match_config() {
        for (name, cfg) in shipped() {
            let t = Topology::new(&cfg);
            assert_eq!(t.gpu_count() as usize, cfg.gpus.len(), "{name}");
            for gpu in t.gpus() {
                let spec = &cfg.gpus[gpu.spec];
                let xcds = t.xcds_of(gpu);
                assert_eq!(xcds.len() as u32, spec.soc.xcds, "{name}");
                assert_eq!(
                    t.shader_engines_of_gpu(gpu).len() as u32,
                    spec.shader_engines(),
                    "{name}"
                );
                assert_eq!(t.cus_of_gpu(gpu).len() as u32, spec.soc.total_cus, "{name}");
                let mut walked = 0;
                for (xi, xcd) in xcds.iter().enumerate() {
                    assert_eq!(xcd.index as usize, xi);
                    assert_eq!(xcd.gpu, gpu.id);
                    let ses = t.shader_engines_of(xcd);
                    assert_eq!(ses.len() as u32, spec.soc.shader_engines_per_xcd);
                    assert_eq!(t.cus_of_xcd(xcd).len() as u32, spec.cus_per_xcd());
                    for (si, se) in ses.iter().enumerate() {
                        assert_eq!(se.index as usize, si);
                        assert_eq!(se.xcd, xcd.id);
                        let cus = t.cus_of(se);
                        assert_eq!(cus.len() as u32, spec.soc.cus_per_shader_engine[si]);
                        for (ci, cu) in cus.iter().enumerate() {
                            assert_eq!(cu.index as usize, ci);
                            assert_eq!((cu.gpu, cu.xcd, cu.se), (gpu.id, xcd.id, se.id));
                            assert_eq!(cu.index_in_gpu, walked);
                            assert_eq!(cu.lds_bytes, spec.cu.lds_bytes);
                            assert_eq!(
                                cu.wave_slots(),
                                spec.cu.simds * spec.cu.wave_slots_per_simd,
                                "{name}"
                            );
                            assert_eq!(t.cu(cu.id), Some(cu));
                            walked += 1;
                        }
                    }
                }
                assert_eq!(walked, spec.soc.total_cus);
                let slots: u64 = t
                    .cus_of_gpu(gpu)
                    .iter()
                    .map(|c| u64::from(c.wave_slots()))
                    .sum();
                assert_eq!(slots, spec.wave_slots(), "{name}");
            }
        }
    }

    #[test]
    fn known_shapes() {
        let want = [
            ("gfx90a_cdna2_kmd.json", 1, 8, 104, 64),
            ("gfx942_cdna3_kmd.json", 8, 32, 304, 64),
            ("gfx950_cdna4_kmd.json", 8, 32, 256, 160),
        ];
        let all = shipped();
        for (file, xcds, ses, cus, lds_kib) in want {
            let cfg = &all.iter().find(|(n, _)| n == file).expect(file).1;
            let t = Topology::new(cfg);
            assert_eq!(
                (t.xcd_count(), t.se_count(), t.cu_count()),
                (xcds, ses, cus),
                "{file}"
            );
            assert!(t.all_cus().iter().all(|c| c.lds_bytes == lds_kib * 1024));
        }
    }

    #[test]
    fn multi_gpu_ids_are_global() {
        let (_, one) = shipped()
            .into_iter()
            .find(|(n, _)| n == "gfx942_cdna3_kmd.json")
            .unwrap();
        let mut cfg = one.clone();
        cfg.gpus.push(one.gpus[0].clone());
        let t = Topology::new(&cfg);
        assert_eq!(t.gpu_count(), 2);
        assert_eq!(t.cu_count(), 608);
        let g1 = t.gpu(1).unwrap();
        let first = &t.cus_of_gpu(g1)[0];
        assert_eq!((first.id, first.index_in_gpu, first.gpu), (304, 0, 1));
        assert_eq!(t.xcds_of(g1)[0].id, 8);
        assert_eq!(t.xcds_of(g1)[0].index, 0);
        assert!(t.gpu(2).is_none() && t.cu(608).is_none());
    }

    #[test]
    fn mi300x_builds_fast_and_small() {
        let (_, cfg) = shipped()
            .into_iter()
            .find(|(n, _)| n == "gfx942_cdna3_kmd.json")
            .unwrap();
        let start = std::time::Instant::now();
        let t = Topology::new(&cfg);
        let took = start.elapsed();
        // Generous bound: debug builds on a shared machine.
        assert!(took.as_millis() < 10, "took {took:?}");
        let bytes = std::mem::size_of_val(t.all_cus())
            + std::mem::size_of_val(t.all_shader_engines())
            + std::mem::size_of_val(t.all_xcds());
        assert!(bytes < 64 * 1024, "{bytes} bytes");
    }
}
