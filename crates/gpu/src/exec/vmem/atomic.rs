//! Atomic read-modify-write operations shared by FLAT/GLOBAL, buffer and
//! DS atomics, and the vector-memory atomic instructions.
//!
//! Float atomics compute in IEEE arithmetic with round to nearest even and
//! keep denormals; min/max follow the ISA manual's pseudo-code
//! `(src < old) ? src : old` (a NaN operand leaves the memory value).

use super::addr::addrs;
use super::{rmw32, rmw64};
use crate::exec::op::{Ctx, Fault, Op};
use crate::exec::wave::Src;
use crate::float::{Rounding, bf16_to_f32, f16_to_f32, f32_to_bf16, f32_to_f16};

/// An atomic operation: 32-bit forms, then 64-bit forms.
#[repr(u8)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum AtomicOp {
    Add,
    Sub,
    /// `data - old`.
    Rsub,
    Smin,
    Umin,
    Smax,
    Umax,
    And,
    Or,
    Xor,
    /// `old >= data ? 0 : old + 1`.
    Inc,
    /// `old == 0 || old > data ? data : old - 1`.
    Dec,
    Swap,
    /// FLAT/buffer compare-and-swap: data0 the new value, data1 the compare
    /// value.
    CmpSwap,
    /// DS compare-and-store: data0 the compare value, data1 the new value.
    CmpSt,
    /// As `CmpSt` comparing as floats.
    CmpStF,
    /// `(old & !data0) | data1`.
    Mskor,
    /// `old >= data0 ? old - data0 : old + data1` (`ds_wrap_rtn_b32`).
    Wrap,
    FAdd,
    FMin,
    FMax,
    PkAddF16,
    PkAddBf16,
    /// `old >= data ? old - data : 0` (GFX11's clamped subtract).
    CSub,
    /// As `CmpSwap` comparing as floats (GFX11's `cmpswap_f32`).
    CmpSwapF,
    Add64,
    Sub64,
    Rsub64,
    Smin64,
    Umin64,
    Smax64,
    Umax64,
    And64,
    Or64,
    Xor64,
    Inc64,
    Dec64,
    Swap64,
    CmpSwap64,
    CmpSt64,
    CmpStF64,
    Mskor64,
    FAdd64,
    FMin64,
    FMax64,
}

const ALL: [AtomicOp; 45] = {
    use AtomicOp::*;
    [
        Add, Sub, Rsub, Smin, Umin, Smax, Umax, And, Or, Xor, Inc, Dec, Swap, CmpSwap, CmpSt,
        CmpStF, Mskor, Wrap, FAdd, FMin, FMax, PkAddF16, PkAddBf16, CSub, CmpSwapF, Add64, Sub64,
        Rsub64, Smin64, Umin64, Smax64, Umax64, And64, Or64, Xor64, Inc64, Dec64, Swap64,
        CmpSwap64, CmpSt64, CmpStF64, Mskor64, FAdd64, FMin64, FMax64,
    ]
};

impl AtomicOp {
    /// The op whose discriminant is `v` (the const parameter form).
    pub const fn from_u8(v: u8) -> AtomicOp {
        let i = v as usize;
        if i < ALL.len() { ALL[i] } else { AtomicOp::Add }
    }

    pub const fn is64(self) -> bool {
        self as u8 >= AtomicOp::Add64 as u8
    }

    /// Whether the op reads a second data operand.
    pub const fn two_data(self) -> bool {
        use AtomicOp::*;
        matches!(
            self,
            CmpSwap
                | CmpSwapF
                | CmpSt
                | CmpStF
                | Mskor
                | Wrap
                | CmpSwap64
                | CmpSt64
                | CmpStF64
                | Mskor64
        )
    }
}

fn pk16(old: u32, d: u32, dec: fn(u16) -> f32, enc: fn(f32) -> u16) -> u32 {
    let h = |v: u32, i: u32| dec((v >> (16 * i)) as u16);
    let lo = enc(h(old, 0) + h(d, 0));
    let hi = enc(h(old, 1) + h(d, 1));
    u32::from(lo) | (u32::from(hi) << 16)
}

/// The new dword of a 32-bit atomic, `None` to leave memory unchanged.
#[inline]
pub(crate) fn apply32(op: AtomicOp, old: u32, d0: u32, d1: u32) -> Option<u32> {
    use AtomicOp::*;
    let f = f32::from_bits;
    Some(match op {
        Add => old.wrapping_add(d0),
        Sub => old.wrapping_sub(d0),
        Rsub => d0.wrapping_sub(old),
        Smin => (old as i32).min(d0 as i32) as u32,
        Umin => old.min(d0),
        Smax => (old as i32).max(d0 as i32) as u32,
        Umax => old.max(d0),
        And => old & d0,
        Or => old | d0,
        Xor => old ^ d0,
        Inc => {
            if old >= d0 {
                0
            } else {
                old + 1
            }
        }
        Dec => {
            if old == 0 || old > d0 {
                d0
            } else {
                old - 1
            }
        }
        Swap => d0,
        CmpSwap => return (old == d1).then_some(d0),
        CmpSt => return (old == d0).then_some(d1),
        CmpStF => return (f(old) == f(d0)).then_some(d1),
        CmpSwapF => return (f(old) == f(d1)).then_some(d0),
        CSub => old.saturating_sub(d0),
        Mskor => (old & !d0) | d1,
        Wrap => {
            if old >= d0 {
                old - d0
            } else {
                old.wrapping_add(d1)
            }
        }
        FAdd => (f(old) + f(d0)).to_bits(),
        FMin => {
            if f(d0) < f(old) {
                d0
            } else {
                old
            }
        }
        FMax => {
            if f(d0) > f(old) {
                d0
            } else {
                old
            }
        }
        PkAddF16 => pk16(old, d0, f16_to_f32, |x| {
            f32_to_f16(x, Rounding::NearestEven)
        }),
        PkAddBf16 => pk16(old, d0, bf16_to_f32, |x| {
            f32_to_bf16(x, Rounding::NearestEven)
        }),
        _ => return None,
    })
}

/// The new qword of a 64-bit atomic, `None` to leave memory unchanged.
#[inline]
pub(crate) fn apply64(op: AtomicOp, old: u64, d0: u64, d1: u64) -> Option<u64> {
    use AtomicOp::*;
    let f = f64::from_bits;
    Some(match op {
        Add64 => old.wrapping_add(d0),
        Sub64 => old.wrapping_sub(d0),
        Rsub64 => d0.wrapping_sub(old),
        Smin64 => (old as i64).min(d0 as i64) as u64,
        Umin64 => old.min(d0),
        Smax64 => (old as i64).max(d0 as i64) as u64,
        Umax64 => old.max(d0),
        And64 => old & d0,
        Or64 => old | d0,
        Xor64 => old ^ d0,
        Inc64 => {
            if old >= d0 {
                0
            } else {
                old + 1
            }
        }
        Dec64 => {
            if old == 0 || old > d0 {
                d0
            } else {
                old - 1
            }
        }
        Swap64 => d0,
        CmpSwap64 => return (old == d1).then_some(d0),
        CmpSt64 => return (old == d0).then_some(d1),
        CmpStF64 => return (f(old) == f(d0)).then_some(d1),
        Mskor64 => (old & !d0) | d1,
        FAdd64 => (f(old) + f(d0)).to_bits(),
        FMin64 => {
            if f(d0) < f(old) {
                d0
            } else {
                old
            }
        }
        FMax64 => {
            if f(d0) > f(old) {
                d0
            } else {
                old
            }
        }
        _ => return None,
    })
}

/// A FLAT/GLOBAL/SCRATCH or buffer atomic: per active lane, applies `A` to
/// the dword (qword) at the lane's address with the data operand(s) from
/// `src[1]..` (for compare-and-swap the new value, then the compare
/// value); with `RTN` the pre-op value goes to `vdst`. Out-of-range buffer
/// lanes do nothing (and return 0).
pub(crate) fn atomic<const SEG: u8, const A: u8, const RTN: bool>(
    c: &mut Ctx,
    op: &Op,
) -> Result<(), Fault> {
    let a = AtomicOp::from_u8(A);
    let exec = c.wave.exec();
    if exec == 0 {
        return Ok(());
    }
    let ad = addrs::<SEG>(c, op);
    let Src::V(d) = op.src[1] else { return Ok(()) };
    let w = if a.is64() { 2u16 } else { 1 };
    let size = 4 * u64::from(w);
    let mut ret = [[0u32; 64]; 2];
    for l in 0..64 {
        if exec >> l & 1 == 0 || ad.limit[l] < size {
            continue;
        }
        let rd = |k: u16| c.wave.vreg(d.wrapping_add(k))[l];
        if a.is64() {
            let d0 = u64::from(rd(0)) | (u64::from(rd(1)) << 32);
            let d1 = u64::from(rd(2)) | (u64::from(rd(3)) << 32);
            let old = rmw64(c, ad.space, l, ad.a[l], |o| apply64(a, o, d0, d1))?;
            ret[0][l] = old as u32;
            ret[1][l] = (old >> 32) as u32;
        } else {
            let (d0, d1) = (rd(0), if a.two_data() { rd(1) } else { 0 });
            ret[0][l] = rmw32(c, ad.space, l, ad.a[l], |o| apply32(a, o, d0, d1))?;
        }
    }
    if RTN {
        for k in 0..w {
            c.wave
                .write_v(op.vdst.wrapping_add(k), &ret[usize::from(k)], exec);
        }
    }
    Ok(())
}
