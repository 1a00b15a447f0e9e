//! Where a rewrite's temporary VGPRs go: a block of VGPRs that no path
//! needs at the rewritten instruction (register liveness over the guest's
//! control-flow graph, `analysis::liveness`), else above every kernel's
//! ArchVGPRs (the descriptors grow).
//!
//! A VGPR is free at an instruction when it is not live before or after
//! it, the instruction neither reads nor writes it, it lies below the
//! ArchVGPR count (`accum_offset`) of every kernel of the object (above
//! it are AccVGPRs, and a function may run under any kernel), and no
//! memory or matrix instruction of the object names it: those read their
//! sources and write their results after they issue (a load's write, a
//! store's data, an MFMA's accumulator), so a temporary there could be
//! overwritten by, or overwrite, a value still in flight, which liveness
//! (at issue) does not see. A block is 4-aligned, as the rewrites'
//! register tuples need.

use crate::analysis::liveness::{Liveness, RegSet};
use crate::cfg::Cfg;
use crate::object::CodeObject;
use rocjitsu_isa::gfx9::regs::VGPR0;

/// Free VGPRs per instruction of the guest object.
pub(crate) struct Temps {
    cfg: Option<Cfg>,
    live: Option<Liveness>,
    /// VGPRs no memory or matrix instruction names, below every kernel's
    /// ArchVGPRs.
    candidates: RegSet,
}

/// Whether the hardware reads or writes the instruction's VGPRs after it
/// issues.
fn asynchronous(name: &str) -> bool {
    [
        "global_", "flat_", "scratch_", "buffer_", "tbuffer_", "ds_", "image_", "v_mfma",
        "v_smfmac",
    ]
    .iter()
    .any(|p| name.starts_with(p))
}

impl Temps {
    /// The liveness of `co`'s code; without a graph (an object the graph
    /// cannot be built for) every rewrite takes the fallback.
    pub fn of(co: &CodeObject) -> Temps {
        let cfg = Cfg::of(co).ok();
        let live = cfg.as_ref().and_then(|c| Liveness::of(c).ok());
        let arch = co
            .kernels()
            .iter()
            .map(|k| k.descriptor.accum_offset())
            .min()
            .unwrap_or(0);
        let mut candidates = RegSet::empty();
        for v in 0..arch.min(256) {
            candidates.insert(VGPR0 + v as u16);
        }
        if let Some(c) = &cfg {
            for s in &c.sites {
                if !asynchronous(s.inst.mnemonic()) {
                    continue;
                }
                let Some(g) = s.inst.regs() else { continue };
                for r in g.reads().chain(g.writes()).filter(|r| r.is_vector()) {
                    for u in r.units() {
                        candidates.remove(u);
                    }
                }
            }
        }
        Temps {
            cfg,
            live,
            candidates,
        }
    }

    /// The first VGPR of a 4-aligned block of `n` VGPRs free across the
    /// instructions at `addresses` (consecutive ones replaced together);
    /// `None` when there is none (or an instruction is not in the graph).
    pub fn free_block(&self, addresses: &[u64], n: u32) -> Option<u32> {
        let (cfg, live) = (self.cfg.as_ref()?, self.live.as_ref()?);
        if n == 0 {
            return Some(0);
        }
        let mut busy = RegSet::empty();
        for &a in addresses {
            let k = cfg.site_at(a)?;
            busy.union_with(&live.live_in[k]);
            busy.union_with(&live.live_out[k]);
            busy.union_with(&live.effects[k].defs);
            busy.union_with(&live.effects[k].uses);
        }
        let free = |v: u32| {
            let u = VGPR0 + v as u16;
            self.candidates.contains(u) && !busy.contains(u)
        };
        (0..256u32)
            .step_by(4)
            .take_while(|b| b + n <= 256)
            .find(|&b| (b..b + n).all(free))
    }
}
