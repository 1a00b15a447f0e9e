//! Helpers for the vector ALU tests: lane values with the interesting
//! cases, a partial EXEC, and lane-by-lane checks against a reference.

use crate::exec::testing::{Run, run};
use crate::exec::wave::{Lanes, Wave};
use rocjitsu_isa::Target;

/// Values that exercise carries, signs, shifts and field boundaries.
pub const EDGE: [u32; 20] = [
    0,
    1,
    2,
    31,
    32,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_ffff,
    0xffff_fffe,
    0xffff,
    0x1_0000,
    0x8000,
    0x7fff,
    0x00ff_ffff,
    0x0080_0000,
    0xdead_beef,
    0x0000_ff80,
    0x8080_0101,
    0x0f0f_1234,
    0xfedc_ba98,
];

/// An EXEC with lanes off in every row and bank.
pub const EXEC: u64 = 0xf7ef_dfbf_7ffe_fdfb;

/// A pseudo-random 32-bit value for (lane, k).
pub fn hash(l: usize, k: u32) -> u32 {
    let mut x = (l as u32).wrapping_mul(0x9e37_79b9) ^ k.wrapping_mul(0x85eb_ca6b) ^ 0x27d4_eb2f;
    x ^= x >> 15;
    x = x.wrapping_mul(0x2c1b_3c6d);
    x ^= x >> 12;
    x = x.wrapping_mul(0x297a_2d39);
    x ^ (x >> 15)
}

/// Lane values for source `k`: mostly edge values (combined differently
/// for each `k`), some random.
pub fn vals(k: u32) -> Lanes {
    std::array::from_fn(|l| {
        let h = hash(l, k);
        if h.is_multiple_of(4) {
            h
        } else {
            EDGE[(h as usize / 4) % EDGE.len()]
        }
    })
}

/// Runs `asm` after `setup`, panicking with the fault if it faults.
pub fn exec(target: Target, asm: &str, mut setup: impl FnMut(&mut Wave)) -> Run {
    match run(target, asm, |w, _| setup(w)) {
        Ok(r) => r,
        Err((f, pc)) => panic!("`{asm}` faulted at 0x{pc:x}: {f}"),
    }
}

/// Checks `got` against `want(l)` in the lanes of `exec` and against
/// `old` elsewhere.
pub fn check(what: &str, got: &Lanes, old: &Lanes, exec: u64, want: impl Fn(usize) -> u32) {
    for l in 0..64 {
        let w = if exec >> l & 1 != 0 { want(l) } else { old[l] };
        assert_eq!(
            got[l], w,
            "{what}: lane {l}: got 0x{:x}, want 0x{w:x}",
            got[l]
        );
    }
}

/// Runs a one-instruction test of an op writing `v3` from `v0`, `v1`,
/// `v2` (set to `vals(0..3)`; `v3` starts as `vals(3)`) under [`EXEC`],
/// and checks `v3` against `want(a, b, c)`.
pub fn op3(target: Target, asm: &str, want: impl Fn(u32, u32, u32) -> u32) {
    let (a, b, c, old) = (vals(0), vals(1), vals(2), vals(3));
    let r = exec(target, asm, |w| {
        w.v[0] = a;
        w.v[1] = b;
        w.v[2] = c;
        w.v[3] = old;
        w.set_exec(EXEC);
    });
    check(asm, &r.wave.v[3], &old, EXEC, |l| want(a[l], b[l], c[l]));
}

/// The 64-bit value of the pair `v[i:i+1]` in lane `l`.
pub fn pair(w: &Wave, i: usize, l: usize) -> u64 {
    u64::from(w.v[i][l]) | (u64::from(w.v[i + 1][l]) << 32)
}
