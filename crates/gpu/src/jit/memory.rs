//! Global and flat loads and stores of whole dwords as inline code, for the
//! common case only: EXEC all ones, the 64 lanes' addresses one contiguous
//! range (lane `l` at `a0 + l * size`), every byte of it inside one mapped
//! region that allows the access (found in the [`RangeCache`] of the
//! wave's [`crate::mem::Tlb`], or filled there from
//! [`crate::mem::Vm::host_range`]), the host address 8-byte aligned, and
//! for FLAT the range clear of the LDS and private apertures. That is the
//! interpreter's coalesced path (`exec::vmem::ldst`), with the same
//! result.
//!
//! Anything else (partial EXEC, scattered or unaligned addresses, another
//! region, an unmapped or read-only range, the apertures, a mapping change
//! since the cache was filled) runs the interpreter's own semantic
//! function for the instruction instead, which checks every lane through
//! the [`crate::mem::Vm`] and reports a fault exactly as the interpreter
//! does.
//!
//! Bytes move in the order of the interpreter's [`crate::mem::Vm::load`]
//! and [`crate::mem::Vm::store`]: a load's from the highest address down
//! and a store's from the lowest up, in aligned 8-byte units. The
//! interpreter moves an aligned 16-byte unit at once, so here, unlike
//! there, another wave may see half of a lane's dwordx4 store.

use super::translate::Em;
use crate::exec::op::Op;
use crate::exec::wave::{Src, VREGS, sreg};
use crate::mem::{RANGE_ENTRIES, RANGE_READ, RANGE_WRITE, RangeCache, RangeEntry};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    AbiParam, Block, BlockArg, InstBuilder, MemFlagsData, Signature, Value, types,
};
use std::mem::offset_of;

/// How a lane's address is formed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Addr {
    /// GLOBAL with `saddr`: the SGPR pair + the 32-bit VGPR offset + imm.
    Saddr { s: u8, voff: u16 },
    /// A 64-bit VGPR pair + imm.
    Vaddr(u16),
}

/// A load or store the translator may emit inline.
#[derive(Clone, Debug)]
pub(crate) struct MOp {
    store: bool,
    /// Dwords per lane (1 to 4).
    n: u8,
    flat: bool,
    addr: Addr,
    imm: i64,
    /// The first destination (load) or data (store) register.
    data: u16,
}

/// The inline form of a FLAT or GLOBAL instruction, if it has one.
pub(super) fn lower(op: &Op, name: &str) -> Option<MOp> {
    use rocjitsu_isa::gfx9::Body;
    let Some(Body::Flat(f)) = op.gfx9().map(|i| i.body()) else {
        return None;
    };
    // Loads to LDS (the lds bit) and the scratch segment stay with the
    // interpreter.
    if f.lds || !matches!(f.seg, 0 | 2) {
        return None;
    }
    let (flat, rest) = match (f.seg, name) {
        (0, n) => (true, n.strip_prefix("flat_")?),
        (_, n) => (false, n.strip_prefix("global_")?),
    };
    let (store, t) = match rest.strip_prefix("load_") {
        Some(t) => (false, t),
        None => (true, rest.strip_prefix("store_")?),
    };
    let n = match t {
        "dword" => 1,
        "dwordx2" => 2,
        "dwordx3" => 3,
        "dwordx4" => 4,
        _ => return None,
    };
    let Src::V(v) = op.src[0] else { return None };
    // FLAT ignores the saddr field (LLVM fills it with 0).
    let addr = match op.src[2] {
        Src::S(s) if !flat => Addr::Saddr { s, voff: v },
        _ => Addr::Vaddr(v),
    };
    let data = if store {
        match op.src[1] {
            Src::V(d) => d,
            _ => return None,
        }
    } else {
        op.vdst
    };
    let vlast = match addr {
        Addr::Saddr { voff, .. } => usize::from(voff),
        Addr::Vaddr(v) => usize::from(v) + 1,
    };
    if vlast >= VREGS || usize::from(data) + usize::from(n) > VREGS {
        return None;
    }
    Some(MOp {
        store,
        n,
        flat,
        addr,
        imm: op.imm,
        data,
    })
}

/// Byte offsets of the range cache, as translated code reads it.
const ENTRY: i32 = std::mem::size_of::<RangeEntry>() as i32;
const E_START: i32 = offset_of!(RangeEntry, start) as i32;
const E_LEN: i32 = offset_of!(RangeEntry, len) as i32;
const E_HOST: i32 = offset_of!(RangeEntry, host) as i32;
const E_FLAGS: i32 = offset_of!(RangeEntry, flags) as i32;
const C_ENTRIES: i32 = offset_of!(RangeCache, entries) as i32;
const C_EPOCH: i32 = offset_of!(RangeCache, epoch) as i32;

/// Emits the inline form of `m`; control reaches `cont` after it, or
/// `slow` (where the caller runs the interpreter's semantic function) for
/// anything the inline form does not handle. Nothing is written before
/// the decision is made.
pub(super) fn emit(em: &mut Em, m: &MOp, slow: Block, cont: Block) {
    let total = 4 * i64::from(m.n);
    let len = 64 * total;
    // The scalar reads first: values the emitter caches must be defined
    // where they dominate the code after the instruction (which `slow`
    // reaches too).
    let exec = em.sget64(sreg::EXEC);
    let sbase = match m.addr {
        Addr::Saddr { s, .. } => Some(em.sget64(s)),
        Addr::Vaddr(_) => None,
    };
    // EXEC all ones.
    let full = em.b.ins().icmp_imm_s(IntCC::Equal, exec, -1);
    next_or(em, full, slow);

    // Contiguous addresses, lane l at lane 0's + l * total, without a
    // carry out of the 32-bit offsets.
    let vrow = match m.addr {
        Addr::Saddr { voff, .. } => voff,
        Addr::Vaddr(v) => v,
    };
    let off0 =
        em.b.ins()
            .load(types::I32, em.vfl, em.v_base, i32::from(vrow) * 256);
    let hi0 = match m.addr {
        Addr::Vaddr(v) => {
            Some(
                em.b.ins()
                    .load(types::I32, em.vfl, em.v_base, i32::from(v + 1) * 256),
            )
        }
        Addr::Saddr { .. } => None,
    };
    // A loop over the 16 four-lane chunks (the code stays small): lane
    // offsets minus lane 0's against 0, t, 2t, ... and, for a VGPR pair,
    // the high halves against lane 0's.
    let t = total as u32;
    let splat0 = em.b.ins().splat(types::I32X4, off0);
    let splat_hi = hi0.map(|h| em.b.ins().splat(types::I32X4, h));
    let step = em.vconst([4 * t; 4]);
    let (acc, want, at) = (
        em.b.declare_var(types::I32X4),
        em.b.declare_var(types::I32X4),
        em.b.declare_var(types::I64),
    );
    let ones = em.vconst([u32::MAX; 4]);
    let first = em.vconst([0, t, 2 * t, 3 * t]);
    let zero = em.iconst64(0);
    em.b.def_var(acc, ones);
    em.b.def_var(want, first);
    em.b.def_var(at, zero);
    let head = em.b.create_block();
    let after = em.b.create_block();
    em.b.ins().jump(head, &[]);
    em.b.switch_to_block(head);
    let i = em.b.use_var(at);
    let p = em.b.ins().iadd(em.v_base, i);
    let x = em.b.ins().load(types::I32X4, em.vfl, p, row_at(vrow, 0));
    let d = em.b.ins().isub(x, splat0);
    let w = em.b.use_var(want);
    let eq = em.b.ins().icmp(IntCC::Equal, d, w);
    let a = em.b.use_var(acc);
    let mut a = em.b.ins().band(a, eq);
    if let Some(sh) = splat_hi {
        let y =
            em.b.ins()
                .load(types::I32X4, em.vfl, p, row_at(vrow + 1, 0));
        let eq = em.b.ins().icmp(IntCC::Equal, y, sh);
        a = em.b.ins().band(a, eq);
    }
    em.b.def_var(acc, a);
    let w = em.b.ins().iadd(w, step);
    em.b.def_var(want, w);
    let i1 = em.b.ins().iadd_imm_s(i, 16);
    em.b.def_var(at, i1);
    let more = em.b.ins().icmp_imm_u(IntCC::UnsignedLessThan, i1, 256);
    em.b.ins().brif(more, head, &[], after, &[]);
    em.b.switch_to_block(after);
    let all = em.b.use_var(acc);
    let contiguous = em.b.ins().vall_true(all);
    let nowrap = em.b.ins().icmp_imm_u(
        IntCC::UnsignedLessThanOrEqual,
        off0,
        i64::from(u32::MAX) - 63 * total,
    );
    let ok = em.b.ins().band(contiguous, nowrap);
    let lo = match (m.addr, hi0) {
        (Addr::Saddr { .. }, _) => {
            let base = sbase.expect("read above");
            let base = em.b.ins().iadd_imm_s(base, m.imm);
            let off = em.b.ins().uextend(types::I64, off0);
            em.b.ins().iadd(base, off)
        }
        (_, Some(hi0)) => {
            let a = em.concat(off0, hi0);
            em.b.ins().iadd_imm_s(a, m.imm)
        }
        _ => unreachable!("a VGPR pair has its high half"),
    };
    next_or(em, ok, slow);

    if m.flat {
        // Every lane global: the range clear of both apertures.
        let hi = em.b.ins().iadd_imm_s(lo, len);
        let mut clear = None;
        for k in 0..2 {
            let (ap_lo, ap_hi) = em.aperture(k);
            let below = em.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, hi, ap_lo);
            let above =
                em.b.ins()
                    .icmp(IntCC::UnsignedGreaterThanOrEqual, lo, ap_hi);
            let c = em.b.ins().bor(below, above);
            clear = Some(match clear {
                None => c,
                Some(x) => em.b.ins().band(x, c),
            });
        }
        let clear = clear.expect("two apertures");
        next_or(em, clear, slow);
    }

    // The range cache: its epoch the Vm's, then an entry that holds the
    // whole range with the access's permission; else the fill.
    let need = if m.store { RANGE_WRITE } else { RANGE_READ };
    let found = em.b.create_block();
    let h = em.b.append_block_param(found, types::I64);
    let miss = em.b.create_block();
    em.b.set_cold_block(miss);
    let (ranges, epoch_ptr) = em.ranges();
    let fl = em.fl;
    let vm_epoch = em.b.ins().atomic_load(types::I64, fl, epoch_ptr);
    let c_epoch = em.b.ins().load(types::I64, fl, ranges, C_EPOCH);
    let same = em.b.ins().icmp(IntCC::Equal, vm_epoch, c_epoch);
    let probe = em.b.create_block();
    em.b.ins().brif(same, probe, &[], miss, &[]);
    em.b.switch_to_block(probe);
    for k in 0..RANGE_ENTRIES as i32 {
        let at = C_ENTRIES + k * ENTRY;
        let start = em.b.ins().load(types::I64, fl, ranges, at + E_START);
        let elen = em.b.ins().load(types::I64, fl, ranges, at + E_LEN);
        let flags = em.b.ins().load(types::I64, fl, ranges, at + E_FLAGS);
        let off = em.b.ins().isub(lo, start);
        let inside = em.b.ins().icmp(IntCC::UnsignedLessThan, off, elen);
        let rest = em.b.ins().isub(elen, off);
        let fits =
            em.b.ins()
                .icmp_imm_u(IntCC::UnsignedGreaterThanOrEqual, rest, len);
        let allowed = em.b.ins().band_imm_u(flags, need as i64);
        let allowed = em.b.ins().icmp_imm_u(IntCC::NotEqual, allowed, 0);
        let hit = em.b.ins().band(inside, fits);
        let hit = em.b.ins().band(hit, allowed);
        let take = em.b.create_block();
        let next = if k + 1 == RANGE_ENTRIES as i32 {
            miss
        } else {
            em.b.create_block()
        };
        em.b.ins().brif(hit, take, &[], next, &[]);
        em.b.switch_to_block(take);
        let host = em.b.ins().load(types::I64, fl, ranges, at + E_HOST);
        let p = em.b.ins().iadd(host, off);
        em.b.ins().jump(found, &[BlockArg::Value(p)]);
        if next != miss {
            em.b.switch_to_block(next);
        }
    }
    em.b.switch_to_block(miss);
    let mut sig = Signature::new(em.call_conv);
    for _ in 0..4 {
        sig.params.push(AbiParam::new(types::I64));
    }
    sig.returns.push(AbiParam::new(types::I64));
    let sig = em.b.import_signature(sig);
    let f = em.iconst64(super::range_miss as *const () as u64);
    let frame = em.frame;
    let lenv = em.iconst64(len as u64);
    let needv = em.iconst64(need);
    let call = em.b.ins().call_indirect(sig, f, &[frame, lo, lenv, needv]);
    let p = em.b.inst_results(call)[0];
    let got = em.b.ins().icmp_imm_u(IntCC::NotEqual, p, 0);
    em.b.ins()
        .brif(got, found, &[BlockArg::Value(p)], slow, &[]);

    // The host address 8-byte aligned, as the units of Vm::load/store
    // then are.
    em.b.switch_to_block(found);
    let low = em.b.ins().band_imm_u(h, 7);
    let aligned = em.b.ins().icmp_imm_u(IntCC::Equal, low, 0);
    next_or(em, aligned, slow);
    if m.store {
        store(em, m, h);
    } else {
        load(em, m, h);
    }
    em.b.ins().jump(cont, &[]);
}

/// Continues in a new block when `c`, else goes to `slow`.
fn next_or(em: &mut Em, c: Value, slow: Block) {
    let next = em.b.create_block();
    em.b.ins().brif(c, next, &[], slow, &[]);
    em.b.switch_to_block(next);
}

/// Byte offset of lanes `4c .. 4c + 4` of vector register `r` in the file.
fn row_at(r: u16, c: u32) -> i32 {
    i32::from(r) * 256 + 16 * c as i32
}

/// Where dword `g` of a pair of lanes' data (lanes `2i`, `2i + 1`, `n`
/// dwords each) lives in the register file, relative to lane `2i`'s slot
/// of the first data register: (register offset, lane offset).
fn dword_slot(g: i32, n: i32) -> (i32, i32) {
    (g % n, g / n)
}

/// The byte offset in the register file of dword `g` of the pair of lanes
/// at `2i` (the `i` part is added at run time).
fn slot_offset(m: &MOp, g: i32) -> i32 {
    let (k, l) = dword_slot(g, i32::from(m.n));
    (i32::from(m.data) + k) * 256 + 4 * l
}

/// A loop over the wave's 32 pairs of lanes, `i` from `first` by `step`
/// (the pair's index as an i64); `body` emits one pair's work.
fn pair_loop(em: &mut Em, down: bool, body: impl Fn(&mut Em, Value)) {
    let var = em.b.declare_var(types::I64);
    let first = em.iconst64(if down { 31 } else { 0 });
    em.b.def_var(var, first);
    let head = em.b.create_block();
    let after = em.b.create_block();
    em.b.ins().jump(head, &[]);
    em.b.switch_to_block(head);
    let i = em.b.use_var(var);
    body(em, i);
    let (next, more) = if down {
        let n = em.b.ins().iadd_imm_s(i, -1);
        (
            n,
            em.b.ins().icmp_imm_s(IntCC::SignedGreaterThanOrEqual, n, 0),
        )
    } else {
        let n = em.b.ins().iadd_imm_s(i, 1);
        (n, em.b.ins().icmp_imm_s(IntCC::SignedLessThan, n, 32))
    };
    em.b.def_var(var, next);
    em.b.ins().brif(more, head, &[], after, &[]);
    em.b.switch_to_block(after);
}

/// The loads: pairs of lanes from the last down, each pair's 8-byte units
/// from the highest down; each unit's two dwords to their registers.
fn load(em: &mut Em, m: &MOp, h: Value) {
    let n = i32::from(m.n);
    let vfl = em.vfl;
    let mfl = MemFlagsData::new().with_notrap();
    pair_loop(em, true, |em, i| {
        // Pair i: memory bytes [i * 8n, (i + 1) * 8n), register slots at
        // lane 2i (8 bytes per pair in a row).
        let mo = em.b.ins().imul_imm_s(i, 8 * i64::from(n));
        let src = em.b.ins().iadd(h, mo);
        let ro = em.b.ins().ishl_imm_u(i, 3);
        let dst = em.b.ins().iadd(em.v_base, ro);
        for u in (0..n).rev() {
            let x = em.b.ins().load(types::I64, mfl, src, 8 * u);
            let (g0, g1) = (2 * u, 2 * u + 1);
            let (o0, o1) = (slot_offset(m, g0), slot_offset(m, g1));
            if o1 == o0 + 4 {
                em.b.ins().store(vfl, x, dst, o0);
            } else {
                let (lo, hi) = em.split(x);
                em.b.ins().store(vfl, lo, dst, o0);
                em.b.ins().store(vfl, hi, dst, o1);
            }
        }
    });
}

/// The stores: pairs of lanes from the first up, each pair's 8-byte units
/// from the lowest up.
fn store(em: &mut Em, m: &MOp, h: Value) {
    let n = i32::from(m.n);
    let vfl = em.vfl;
    let mfl = MemFlagsData::new().with_notrap();
    pair_loop(em, false, |em, i| {
        let mo = em.b.ins().imul_imm_s(i, 8 * i64::from(n));
        let dst = em.b.ins().iadd(h, mo);
        let ro = em.b.ins().ishl_imm_u(i, 3);
        let src = em.b.ins().iadd(em.v_base, ro);
        for u in 0..n {
            let (g0, g1) = (2 * u, 2 * u + 1);
            let (o0, o1) = (slot_offset(m, g0), slot_offset(m, g1));
            let x = if o1 == o0 + 4 {
                em.b.ins().load(types::I64, vfl, src, o0)
            } else {
                let lo = em.b.ins().load(types::I32, vfl, src, o0);
                let hi = em.b.ins().load(types::I32, vfl, src, o1);
                em.concat(lo, hi)
            };
            em.b.ins().store(mfl, x, dst, 8 * u);
        }
    });
}
