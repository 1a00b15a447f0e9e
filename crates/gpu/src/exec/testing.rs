//! Test support: assemble a snippet with LLVM 22's assembler (the oracle
//! for encodings) and run it on one wave.
//!
//! ```ignore
//! let t = run(Target::Gfx942, "v_add_f32 v2, v0, v1", |w, _vm| {
//!     w.v[0] = [1.0f32.to_bits(); 64];
//!     w.v[1] = [2.0f32.to_bits(); 64];
//! }).unwrap();
//! assert_eq!(f32::from_bits(t.wave.v[2][0]), 3.0);
//! ```

use super::engine::{Program, Stop};
use super::op::{Ctx, Env, Fault};
use super::wave::{VREGS, Wave};
use crate::jit::ExecMode;
use crate::mem::{Tlb, Vm};
use rocjitsu_isa::{Target, True16, WaveSize};
use std::process::Command;

/// Assembles `asm` (one instruction per line) for `target` with
/// `llvm-mc-22` and returns the bytes.
pub fn assemble(target: Target, asm: &str) -> Vec<u8> {
    assemble_lines(target, asm).concat()
}

/// Assembles `asm` with one `llvm-mc-22` run and returns each
/// instruction's encoding.
pub fn assemble_lines(target: Target, asm: &str) -> Vec<Vec<u8>> {
    assemble_lines_in(target, WaveSize::default_for(target), asm)
}

/// [`assemble_lines`] for waves of `wave` lanes (RDNA: the lane-mask
/// operands' width).
pub fn assemble_lines_in(target: Target, wave: WaveSize, asm: &str) -> Vec<Vec<u8>> {
    assemble_lines_mode(target, wave, True16::LlvmDefault, asm)
}

/// [`assemble_lines_in`] in the 16-bit operand syntax `t16` (gfx1201's
/// `+real-true16`: `v1.l`, `v1.h`).
pub fn assemble_lines_mode(target: Target, wave: WaveSize, t16: True16, asm: &str) -> Vec<Vec<u8>> {
    let mut args = vec![
        "-arch=amdgcn".to_string(),
        format!("-mcpu={}", target.name()),
        "-show-encoding".to_string(),
    ];
    if target.family() != rocjitsu_isa::Family::Gfx9 {
        let t16 = t16.llvm_feature(target);
        let sep = if t16.is_empty() { "" } else { "," };
        args.push(format!("-mattr={}{sep}{t16}", wave.llvm_feature()));
    }
    let mut child = Command::new("llvm-mc-22")
        .args(&args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("llvm-mc-22 runs (scripts/setup.sh installs it)");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(asm.as_bytes()).expect("write asm");
    }
    let out = child.wait_with_output().expect("llvm-mc-22 finishes");
    assert!(
        out.status.success(),
        "llvm-mc-22 rejected:\n{asm}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .filter_map(|l| l.split("encoding: [").nth(1))
        .map(|e| {
            e.trim_end_matches(']')
                .split(',')
                .map(|b| {
                    u8::from_str_radix(b.trim().trim_start_matches("0x"), 16).expect("hex byte")
                })
                .collect()
        })
        .collect()
}

/// The state after a test run.
pub struct Run {
    pub wave: Wave,
    pub vm: Vm,
    pub lds: Vec<u8>,
}

/// Where test code is placed.
pub const CODE_BASE: u64 = 0x1000;

/// Runs `asm` (followed by `s_endpgm`) on one wave with EXEC all ones,
/// 64 KiB of LDS and 256 bytes of private memory per lane, after `setup`
/// prepares registers and memory. Gives up after a million instructions.
///
/// The snippet runs on the interpreter, then again from a fresh setup on
/// the translation tier (every block translated, [`crate::jit`]) where the
/// host has one: the two must end with the same fault or the same wave
/// state and LDS, else this panics naming the first difference. The
/// interpreter's run is returned.
pub fn run(
    target: Target,
    asm: &str,
    setup: impl FnMut(&mut Wave, &Vm),
) -> Result<Run, (Fault, u64)> {
    run_with(target, asm, &|_| {}, setup)
}

/// [`run`] on a GPU whose environment `tweak` changes (e.g. SRAM ECC off).
pub fn run_with(
    target: Target,
    asm: &str,
    tweak: &dyn Fn(&mut Env),
    mut setup: impl FnMut(&mut Wave, &Vm),
) -> Result<Run, (Fault, u64)> {
    let code = assemble(target, &format!("{asm}\ns_endpgm\n"));
    let prog = Program::new(target, CODE_BASE, code.clone());
    let interp = run_program_with(target, &prog, &mut setup, ExecMode::Interp, tweak);
    let prog = Program::new(target, CODE_BASE, code);
    if prog.jit().is_some() {
        let jit = run_program_with(target, &prog, &mut setup, ExecMode::Jit, tweak);
        if let Some(d) = diff_runs(&interp, &jit) {
            panic!("the translated run differs from the interpreter's on\n{asm}\n{d}");
        }
    }
    interp
}

/// [`run`] for an RDNA target in waves of `wave` lanes (a 32-lane wave has
/// EXEC_LO all ones). Only the interpreter runs it (the translation tier
/// is GFX9's).
pub fn run_in(
    target: Target,
    wave: WaveSize,
    asm: &str,
    setup: impl FnMut(&mut Wave, &Vm),
) -> Result<Run, (Fault, u64)> {
    run_in_mode(target, wave, True16::LlvmDefault, asm, setup)
}

/// [`run_in`] for a snippet in the 16-bit operand syntax `t16`.
pub fn run_in_mode(
    target: Target,
    wave: WaveSize,
    t16: True16,
    asm: &str,
    mut setup: impl FnMut(&mut Wave, &Vm),
) -> Result<Run, (Fault, u64)> {
    let code = assemble_lines_mode(target, wave, t16, &format!("{asm}\ns_endpgm\n")).concat();
    let prog = Program::new_in(target, wave, CODE_BASE, code);
    run_program(target, &prog, &mut setup, ExecMode::Interp)
}

/// [`run_in`] for a snippet that must not fault: a fault panics naming
/// the snippet and the fault's offset in it.
pub fn run_in_ok(
    target: Target,
    wave: WaveSize,
    asm: &str,
    setup: impl FnMut(&mut Wave, &Vm),
) -> Run {
    match run_in(target, wave, asm, setup) {
        Ok(r) => r,
        Err((f, pc)) => panic!("{asm}\nfaulted at 0x{:x}: {f}", pc - CODE_BASE),
    }
}

/// The first difference between two runs' outcomes (fault, wave state,
/// LDS, the memory the setup mapped), if any.
pub fn diff_runs(a: &Result<Run, (Fault, u64)>, b: &Result<Run, (Fault, u64)>) -> Option<String> {
    match (a, b) {
        (Err(x), Err(y)) if x == y => None,
        (Ok(x), Ok(y)) => crate::jit::diff_waves(&x.wave, &y.wave)
            .or_else(|| {
                let l = x.lds.iter().zip(&y.lds).position(|(p, q)| p != q)?;
                Some(format!(
                    "LDS byte {l}: 0x{:02x} vs 0x{:02x}",
                    x.lds[l], y.lds[l]
                ))
            })
            .or_else(|| diff_memory(&x.vm, &y.vm)),
        (x, y) => Some(format!(
            "interpreter: {:?}\ntranslated:  {:?}",
            x.as_ref().map(|_| "ended"),
            y.as_ref().map(|_| "ended")
        )),
    }
}

/// The first difference between the mapped memory of two runs' Vms (the
/// same setup maps the same ranges in both), if any.
fn diff_memory(a: &Vm, b: &Vm) -> Option<String> {
    let (ra, rb) = (a.regions(), b.regions());
    let key = |r: &crate::mem::RegionInfo| (r.start, r.len);
    if ra.iter().map(key).ne(rb.iter().map(key)) {
        return Some("the runs mapped different memory".into());
    }
    for r in ra.iter().filter(|r| r.perms.read) {
        let (x, y) = (a.read_vec(r.start, r.len), b.read_vec(r.start, r.len));
        let (Ok(x), Ok(y)) = (x, y) else {
            return Some(format!("memory at 0x{:x} cannot be read", r.start));
        };
        if let Some(i) = x.iter().zip(&y).position(|(p, q)| p != q) {
            return Some(format!(
                "memory at 0x{:x}: 0x{:02x} vs 0x{:02x}",
                r.start + i as u64,
                x[i],
                y[i]
            ));
        }
    }
    None
}

/// Runs `prog` from its first instruction on one wave on the tier `mode`
/// names.
pub fn run_program(
    target: Target,
    prog: &Program,
    setup: &mut impl FnMut(&mut Wave, &Vm),
    mode: ExecMode,
) -> Result<Run, (Fault, u64)> {
    run_program_with(target, prog, setup, mode, &|_| {})
}

/// [`run_program`] in an environment `tweak` changes.
pub fn run_program_with(
    target: Target,
    prog: &Program,
    setup: &mut impl FnMut(&mut Wave, &Vm),
    mode: ExecMode,
    tweak: &dyn Fn(&mut Env),
) -> Result<Run, (Fault, u64)> {
    let vm = Vm::new();
    let mut wave = Wave::new(VREGS);
    wave.wave32 = prog.wave == WaveSize::Wave32;
    wave.set_exec(wave.lane_mask());
    wave.pc = prog.base();
    wave.lane_bytes = 256;
    wave.scratch = vec![0; 256 * 64];
    setup(&mut wave, &vm);
    let mut lds = vec![0u8; 65536];
    let mut env = Env::new(target);
    env.lds_size = 65536;
    tweak(&mut env);
    let mut tlb = Tlb::default();
    let mut ctx = Ctx {
        wave: &mut wave,
        lds: &mut lds,
        vm: &vm,
        tlb: &mut tlb,
        env: &env,
    };
    loop {
        match crate::jit::run(&mut ctx, prog, 1_000_000, mode)? {
            Stop::Ended => break,
            // A lone wave passes barriers at once.
            Stop::Barrier => ctx.wave.state = super::wave::WaveState::Running,
            Stop::Quantum => return Err((Fault::Invalid("test did not end".into()), ctx.wave.pc)),
        }
    }
    Ok(Run { wave, vm, lds })
}

/// Lane numbers 0..64, the usual VGPR contents of the RDNA snippet tests.
pub(crate) fn iota() -> [u32; 64] {
    std::array::from_fn(|l| l as u32)
}

/// Kernel-argument set-up of the RDNA buffer snippet tests: a 4 KiB buffer
/// holding `words` dwords 1, 2, ..., its address at byte 8 of a kernarg
/// segment whose address is in s[0:1], and the lane numbers in v0.
/// Returns the buffer's address.
pub(crate) fn buffer_at_kernarg_8(
    w: &mut crate::exec::Wave,
    vm: &crate::mem::Vm,
    words: u32,
) -> u64 {
    let buf = vm.alloc(4096, crate::mem::Perms::RW);
    let args = vm.alloc(64, crate::mem::Perms::RW);
    vm.fill(args + 8, &buf.to_le_bytes()).unwrap();
    let data: Vec<u8> = (0..words).flat_map(|i| (i + 1).to_le_bytes()).collect();
    vm.fill(buf, &data).unwrap();
    w.s[0] = args as u32;
    w.s[1] = (args >> 32) as u32;
    w.v[0] = iota();
    buf
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::Perms;

    #[test]
    fn saxpy_like_snippet_runs() {
        let mut buf = 0;
        let r = run(
            Target::Gfx942,
            "s_mov_b32 s4, 2.0\n\
             global_load_dword v1, v[2:3], off\n\
             v_fma_f32 v1, s4, v1, 1.0\n\
             v_add_co_u32 v4, vcc, v2, 4\n\
             v_addc_co_u32 v5, vcc, 0, v3, vcc\n\
             global_store_dword v[4:5], v1, off",
            |w, vm| {
                buf = vm.alloc(4 * 65, Perms::RW);
                for l in 0..64 {
                    let a = buf + 4 * l as u64;
                    vm.fill(a, &(l as f32).to_bits().to_le_bytes()).unwrap();
                    w.v[2][l] = a as u32;
                    w.v[3][l] = (a >> 32) as u32;
                }
            },
        )
        .unwrap();
        let out = r.vm.read_vec(buf + 4, 256).unwrap();
        for l in 0..64 {
            let v = f32::from_le_bytes(out[l * 4..l * 4 + 4].try_into().unwrap());
            assert_eq!(v, 2.0 * l as f32 + 1.0, "lane {l}");
        }
        assert!(r.wave.insts >= 7);
    }

    #[test]
    fn memory_fault_reports_address_and_pc() {
        let (f, pc) = run(
            Target::Gfx942,
            "s_nop 0\nglobal_load_dword v1, v[2:3], off offset:16",
            |w, _| {
                w.v[2] = [0x40; 64];
            },
        )
        .err()
        .expect("unmapped address faults");
        assert_eq!(pc, CODE_BASE + 4);
        match f {
            Fault::Memory(m) => assert_eq!(m.addr, 0x50),
            f => panic!("unexpected fault {f:?}"),
        }
    }
}
