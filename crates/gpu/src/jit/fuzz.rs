//! Differential fuzzing of the translation tier against the interpreter:
//! random straight-line sequences of scalar and vector ALU instructions
//! (every SOP1/SOP2/SOPC/SOPK/VOP1/VOP2/VOPC/VOP3 opcode of the target, with
//! random operand fields: registers, inline constants, literals, VCC, EXEC,
//! M0, modifiers), run from the same random wave state (registers, EXEC,
//! SCC, MODE) on both tiers; every register, SCC, the PC, MODE and the
//! fault must agree.
//!
//! [`check_seed`] is the bounded run of `cargo test` (`jit::fuzz::tests`);
//! [`check_bytes`] is the libFuzzer entry (`crates/gpu/fuzz`, `make
//! fuzz-jit`), which takes its random stream from the fuzzer's input.

use super::ExecMode;
use crate::exec::engine::{Program, Stop};
use crate::exec::op::{Ctx, Env, Fault};
use crate::exec::wave::{MODE_DEFAULT, VREGS, Wave, sreg};
use crate::mem::{Tlb, Vm};
use rocjitsu_isa::Target;
use rocjitsu_isa::gfx9::Encoding;
use rocjitsu_isa::gfx9::opcodes::Opcode;

/// A stream of random numbers: SplitMix64 from a seed, or the bytes of a
/// fuzzer input (zeros once they run out).
pub enum Rng<'a> {
    Seed(u64),
    Bytes(&'a [u8]),
}

impl Rng<'_> {
    pub fn word(&mut self) -> u64 {
        match self {
            Rng::Seed(s) => {
                *s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let mut z = *s;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                z ^ (z >> 31)
            }
            Rng::Bytes(b) => {
                let n = b.len().min(8);
                let mut w = [0u8; 8];
                w[..n].copy_from_slice(&b[..n]);
                *b = &b[n..];
                u64::from_le_bytes(w)
            }
        }
    }

    /// A number below `n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.word() % n.max(1)
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }
}

/// The opcode rows the generator draws from: the ALU encodings.
fn alu_opcodes(target: Target) -> Vec<Opcode> {
    rocjitsu_isa::opcodes(target)
        .into_iter()
        .filter(|o| {
            matches!(
                o.encoding,
                Encoding::Sop1
                    | Encoding::Sop2
                    | Encoding::Sopc
                    | Encoding::Sopk
                    | Encoding::Vop1
                    | Encoding::Vop2
                    | Encoding::Vopc
                    | Encoding::Vop3
            )
        })
        .filter(|o| !excluded(&o.mnemonic))
        .collect()
}

/// Instructions left out of sequences: control flow (a sequence is
/// straight-line) and reads of the clock.
fn excluded(name: &str) -> bool {
    name.starts_with("s_cbranch")
        || name.starts_with("s_setpc")
        || name.starts_with("s_swappc")
        || name.starts_with("s_call")
        || name.starts_with("s_rfe")
        || name.starts_with("s_getreg")
        || name.contains("memtime")
        || name.contains("memrealtime")
}

/// A scalar source field (8 bits): mostly s0..s15 and constants.
fn ssrc(r: &mut Rng) -> u32 {
    match r.below(20) {
        0..=7 => r.below(16) as u32,
        8 => r.pick(&[106, 107]),
        9 => r.pick(&[126, 127]),
        10 => 124,
        11..=14 => 128 + r.below(81) as u32,
        15..=16 => 240 + r.below(9) as u32,
        17 => 255,
        18 => r.pick(&[235, 236, 237, 238, 239, 251, 252, 253]),
        _ => r.below(256) as u32,
    }
}

/// A vector source field (9 bits): also v0..v15.
fn vsrc(r: &mut Rng) -> u32 {
    if r.chance(45) {
        256 + r.below(16) as u32
    } else {
        ssrc(r)
    }
}

/// A scalar destination field (7 bits).
fn sdst(r: &mut Rng) -> u32 {
    match r.below(16) {
        0..=11 => r.below(16) as u32,
        12 => r.pick(&[106, 107]),
        13 => r.pick(&[126, 127]),
        14 => r.pick(&[124, 125]),
        _ => r.below(128) as u32,
    }
}

fn vreg(r: &mut Rng) -> u32 {
    r.below(16) as u32
}

/// One instruction of `o`'s opcode with random operand fields, as its
/// words (the decoder decides how many it uses).
fn instance(r: &mut Rng, o: &Opcode) -> [u32; 4] {
    let mut w = o.words;
    let lit = r.word() as u32;
    let lit = if r.chance(30) {
        r.pick(&[
            0,
            1,
            0x8000_0000,
            0x7f80_0000,
            0x3f80_0000,
            0xffff_ffff,
            0x0000_ffff,
        ])
    } else {
        lit
    };
    match o.encoding {
        Encoding::Sop2 => {
            w[0] = (w[0] & 0xff80_0000) | sdst(r) << 16 | ssrc(r) << 8 | ssrc(r);
            w[1] = lit;
        }
        Encoding::Sop1 => {
            w[0] = (w[0] & 0xff80_ff00) | sdst(r) << 16 | ssrc(r);
            w[1] = lit;
        }
        Encoding::Sopc => {
            w[0] = (w[0] & 0xffff_0000) | ssrc(r) << 8 | ssrc(r);
            w[1] = lit;
        }
        Encoding::Sopk => {
            let imm = if r.chance(50) {
                r.below(0x1_0000) as u32
            } else {
                r.pick(&[0, 1, 0x7fff, 0x8000, 0xffff, 31, 32])
            };
            w[0] = (w[0] & 0xff80_0000) | sdst(r) << 16 | imm;
            w[1] = lit;
        }
        Encoding::Vop2 => {
            w[0] = (w[0] & 0xfe00_0000) | vreg(r) << 17 | vreg(r) << 9 | vsrc(r);
            w[1] = lit;
        }
        Encoding::Vop1 => {
            w[0] = (w[0] & 0xfe01_fe00) | vreg(r) << 17 | vsrc(r);
            w[1] = lit;
        }
        Encoding::Vopc => {
            w[0] = (w[0] & 0xfffe_0000) | vreg(r) << 9 | vsrc(r);
            w[1] = lit;
        }
        Encoding::Vop3 => {
            // Keep the opcode; clamp, op_sel/abs (or the VOP3b SDST) and
            // the destination are random, as are neg, omod and sources.
            let mods = if r.chance(25) {
                r.below(0x100) as u32
            } else {
                0
            };
            let clamp = u32::from(r.chance(10));
            let dst = if r.chance(70) { vreg(r) } else { sdst(r) };
            w[0] = (w[0] & 0xffff_0000) | clamp << 15 | mods << 8 | dst;
            let neg = if r.chance(20) { r.below(8) as u32 } else { 0 };
            let omod = if r.chance(10) { r.below(4) as u32 } else { 0 };
            w[1] = neg << 29 | omod << 27 | vsrc(r) << 18 | vsrc(r) << 9 | vsrc(r);
            w[2] = lit;
        }
        _ => {}
    }
    w
}

/// A random straight-line sequence of `n` ALU instructions for `target`,
/// ending with `s_endpgm`.
pub fn sequence(r: &mut Rng, target: Target, n: usize) -> Vec<u8> {
    thread_local! {
        static OPS: std::cell::RefCell<Vec<(Target, Vec<Opcode>)>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    OPS.with(|ops| {
        let mut ops = ops.borrow_mut();
        if !ops.iter().any(|(t, _)| *t == target) {
            ops.push((target, alu_opcodes(target)));
        }
        let list = &ops
            .iter()
            .find(|(t, _)| *t == target)
            .expect("just added")
            .1;
        let mut code = Vec::new();
        let mut tries = 0;
        while code.len() < n * 16 && tries < n * 8 && list_len(&code, target) < n {
            tries += 1;
            let o = &list[r.below(list.len() as u64) as usize];
            let w = instance(r, o);
            let bytes: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
            let Ok(inst) = rocjitsu_isa::decode(target, &bytes) else {
                continue;
            };
            let name = inst.mnemonic();
            if excluded(name) || name.starts_with("s_endpgm") {
                continue;
            }
            code.extend_from_slice(&bytes[..inst.len()]);
        }
        code.extend_from_slice(&0xbf81_0000u32.to_le_bytes());
        code
    })
}

fn list_len(code: &[u8], target: Target) -> usize {
    rocjitsu_isa::disassemble(target, code).len()
}

/// A random 32-bit lane value: integers near the edges, special floats
/// (zeros, infinities, quiet and signaling NaNs, denormals), halves, or
/// any bits.
fn value(r: &mut Rng) -> u32 {
    match r.below(10) {
        0 => r.below(70) as u32,
        1 => (r.below(70) as u32).wrapping_neg(),
        2 => r.pick(&[
            0x0000_0000,
            0x8000_0000,
            0x7f80_0000,
            0xff80_0000,
            0x7fc0_0000,
            0x7f80_0001,
            0xffc0_1234,
            0x0000_0001,
            0x807f_ffff,
            0x3f80_0000,
            0xbf80_0000,
            0x7f7f_ffff,
        ]),
        3 => {
            // An f32 of modest magnitude.
            let e = 100 + r.below(56) as u32;
            (r.below(2) as u32) << 31 | e << 23 | (r.word() as u32 & 0x7f_ffff)
        }
        4 => {
            // Two halves.
            let h = |r: &mut Rng| {
                r.pick(&[0x0000, 0x8000, 0x7c00, 0x7e00, 0x3c00, 0x0001, 0x7bff]) as u32
            };
            h(r) | h(r) << 16
        }
        5 => 1 << r.below(32),
        _ => r.word() as u32,
    }
}

/// A random wave: s0..s15, VCC, M0, EXEC, SCC, MODE and v0..v15.
pub fn wave(r: &mut Rng) -> Wave {
    let mut w = Wave::new(VREGS);
    for i in 0..16 {
        w.s[i] = value(r);
    }
    w.set_vcc(r.word());
    w.s[usize::from(sreg::M0)] = value(r);
    let exec = match r.below(6) {
        0..=2 => u64::MAX,
        3 => r.word(),
        4 => r.word() & r.word(),
        _ => 1 << r.below(64),
    };
    w.set_exec(exec);
    w.scc = r.chance(50);
    w.mode = if r.chance(60) {
        MODE_DEFAULT | 0x300
    } else {
        r.below(0x400) as u32
    };
    for v in 0..16 {
        for l in 0..64 {
            w.v[v][l] = value(r);
        }
    }
    w
}

/// Runs `code` from `base` on `w` on the tier `mode` names.
fn run_on(
    target: Target,
    prog: &Program,
    mut w: Wave,
    mode: ExecMode,
) -> (Wave, Result<(), (Fault, u64)>) {
    let vm = Vm::new();
    let mut lds = vec![0u8; 1024];
    let mut env = Env::new(target);
    env.lds_size = 1024;
    let mut tlb = Tlb::default();
    w.pc = prog.base();
    let mut ctx = Ctx {
        wave: &mut w,
        lds: &mut lds,
        vm: &vm,
        tlb: &mut tlb,
        env: &env,
    };
    let r = loop {
        match super::run(&mut ctx, prog, 10_000, mode) {
            Ok(Stop::Ended) => break Ok(()),
            Ok(Stop::Barrier) => ctx.wave.state = crate::exec::WaveState::Running,
            Ok(Stop::Quantum) => break Err((Fault::Invalid("did not end".into()), ctx.wave.pc)),
            Err(e) => break Err(e),
        }
    };
    (w, r)
}

/// Runs one case on both tiers; the first difference, with the
/// disassembly, if any.
pub fn check(target: Target, code: &[u8], w: &Wave) -> Result<(), String> {
    const BASE: u64 = 0x10_0000;
    let a = run_on(
        target,
        &Program::new(target, BASE, code.to_vec()),
        w.clone(),
        ExecMode::Interp,
    );
    let b = run_on(
        target,
        &Program::new(target, BASE, code.to_vec()),
        w.clone(),
        ExecMode::Jit,
    );
    let d = if a.1 != b.1 {
        Some(format!("interpreter {:?}, translated {:?}", a.1, b.1))
    } else {
        super::diff_waves(&a.0, &b.0)
    };
    match d {
        None => Ok(()),
        Some(d) => {
            let text: Vec<String> = rocjitsu_isa::disassemble(target, code)
                .iter()
                .map(|l| match &l.inst {
                    Some(i) => format!("  {:4x}: {i}", l.offset),
                    None => format!("  {:4x}: <invalid>", l.offset),
                })
                .collect();
            Err(format!(
                "{target}: {d}\n  EXEC 0x{:x}, SCC {}, MODE 0x{:x}\n{}",
                w.exec(),
                w.scc,
                w.mode,
                text.join("\n")
            ))
        }
    }
}

/// The case `seed` makes: a sequence of up to `n` instructions and a
/// wave, checked on both tiers.
pub fn check_seed(target: Target, seed: u64, n: usize) -> Result<(), String> {
    let mut r = Rng::Seed(seed);
    let code = sequence(&mut r, target, n);
    let w = wave(&mut r);
    check(target, &code, &w).map_err(|e| format!("seed {seed}: {e}"))
}

/// The fuzzer's entry: the input chooses the target, the sequence and
/// the wave. Panics on a difference.
pub fn check_bytes(data: &[u8]) {
    if super::translate::isa().is_none() {
        return;
    }
    let mut r = Rng::Bytes(data);
    let target = Target::ALL[r.below(Target::ALL.len() as u64) as usize];
    let n = 1 + r.below(24) as usize;
    let code = sequence(&mut r, target, n);
    let w = wave(&mut r);
    if let Err(e) = check(target, &code, &w) {
        panic!("{e}");
    }
}

#[cfg(test)]
mod tests {
    /// Random sequences per target: `ROCJITSU_JIT_FUZZ_CASES` (default 600)
    /// from seed `ROCJITSU_JIT_FUZZ_SEED` (default 1).
    #[test]
    fn random_sequences_match_the_interpreter() {
        if super::super::translate::isa().is_none() {
            return;
        }
        let cases: u64 = std::env::var("ROCJITSU_JIT_FUZZ_CASES")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(600);
        let seed: u64 = std::env::var("ROCJITSU_JIT_FUZZ_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(1);
        let mut failures = Vec::new();
        for t in rocjitsu_isa::Target::ALL {
            for k in 0..cases {
                if let Err(e) =
                    super::check_seed(t, seed.wrapping_mul(1_000_003).wrapping_add(k), 16)
                {
                    failures.push(e);
                }
            }
        }
        let n = failures.len();
        for f in failures.iter().take(5) {
            eprintln!("{f}\n");
        }
        assert_eq!(n, 0, "{n} of {} cases differ", cases * 3);
    }
}
