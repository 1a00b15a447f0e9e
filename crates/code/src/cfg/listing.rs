//! A text listing of a [`Cfg`]: per function its blocks, each block's
//! instructions (optionally with the registers live before each) and its
//! edges or exit, then what the graph does not follow.
//!
//! ```text
//! function call_poly (kernel), entry 0x1b00, 7 blocks
//!   block 0x1b00..0x1b74 (preds: -)
//!     0x1b00  s_load_dwordx2 s[4:5], s[0:1], 0x10    ; live: s[0:1] exec
//!     ...
//!     -> 0x1b78 after-call
//!     -> 0x1900 call poly
//! ```

use super::{Cfg, Exit};
use crate::analysis::liveness::Liveness;
use std::fmt::Write as _;

/// What to print.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options<'a> {
    /// Only the function with this name.
    pub only: Option<&'a str>,
    /// The registers live before each instruction, and after each block.
    pub liveness: Option<&'a Liveness>,
}

/// The listing of `cfg` as text.
pub fn listing(cfg: &Cfg, opts: &Options) -> String {
    let mut s = String::new();
    let name_of = |b: usize| -> String {
        let a = cfg.blocks[b].start;
        match cfg.function_at(a) {
            Some(f) => format!("0x{a:x} {}", cfg.functions[f].name),
            None => format!("0x{a:x}"),
        }
    };
    for f in &cfg.functions {
        if opts.only.is_some_and(|o| o != f.name) {
            continue;
        }
        let _ = writeln!(
            s,
            "function {} ({}), entry 0x{:x}, {} blocks",
            f.name,
            if f.is_kernel { "kernel" } else { "function" },
            f.entry,
            f.blocks.len()
        );
        for &b in &f.blocks {
            let blk = &cfg.blocks[b];
            let preds: Vec<String> = blk
                .preds
                .iter()
                .map(|&p| format!("0x{:x}", cfg.blocks[p].start))
                .collect();
            let _ = writeln!(
                s,
                "  block 0x{:x}..0x{:x} (preds: {})",
                blk.start,
                blk.end,
                if preds.is_empty() {
                    "-".to_string()
                } else {
                    preds.join(" ")
                }
            );
            for k in blk.insts.clone() {
                let site = &cfg.sites[k];
                let text = site.inst.to_string();
                match opts.liveness {
                    Some(l) => {
                        let _ = writeln!(
                            s,
                            "    0x{:x}  {text:<48} ; live: {}",
                            site.address,
                            l.live_in[k].names(cfg.target.family())
                        );
                    }
                    None => {
                        let _ = writeln!(s, "    0x{:x}  {text}", site.address);
                    }
                }
            }
            if let Some(l) = opts.liveness {
                let _ = writeln!(
                    s,
                    "    live after: {}",
                    l.live_out[blk.insts.end - 1].names(cfg.target.family())
                );
            }
            for e in &blk.succs {
                let _ = writeln!(s, "    -> {} {}", name_of(e.to), e.kind.name());
            }
            if let Some(x) = blk.exit {
                let _ = writeln!(s, "    exit: {}", x.name());
                if x == Exit::UnknownCall || x == Exit::UnknownJump {
                    let last = &cfg.sites[blk.insts.end - 1];
                    let _ = writeln!(s, "    (target of 0x{:x} not recovered)", last.address);
                }
            }
        }
    }
    // The issues of the functions listed.
    let issues: Vec<&super::Issue> = match opts.only.and_then(|o| cfg.function(o)) {
        Some(f) => cfg.issues_in(cfg.function_at(f.entry).unwrap_or(0)),
        None => cfg.issues.iter().collect(),
    };
    if issues.is_empty() {
        let _ = writeln!(s, "complete: every branch and call target is known");
    } else {
        let _ = writeln!(
            s,
            "incomplete: {} place(s) the graph does not follow:",
            issues.len()
        );
        for i in issues {
            let _ = writeln!(s, "  {i}");
        }
    }
    s
}
