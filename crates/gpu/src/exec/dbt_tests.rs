//! The DBT rewrites (`rocjitsu_code::dbt`) against the VM, which executes
//! both targets: each gfx950 instruction (assembled by LLVM 22) runs
//! natively on gfx950, its gfx942 sequence on gfx942, from the same random
//! registers, LDS, memory and a partial EXEC; every architectural register
//! (VGPRs below the temporaries, SGPRs, EXEC, VCC, M0, SCC) and the LDS
//! must end equal. MFMA splits are compared with a tolerance (another
//! summation order), and bit for bit on integer data.

use super::engine::{self, Program, Stop};
use super::op::{Ctx, Env};
use super::testing::assemble_lines;
use super::wave::{VREGS, Wave, WaveState};
use crate::mem::{Perms, Tlb, Vm};
use rocjitsu_code::dbt::{Options, rewrite_one};
use rocjitsu_isa::Target;

/// Temporaries start here (above every register a test uses).
const TEMP: usize = 200;
const CODE: u64 = 0x1000;
const ENDPGM: [u8; 4] = [0x00, 0x00, 0x81, 0xbf];

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 16) as u32
    }
}

struct State {
    wave: Wave,
    lds: Vec<u8>,
    mem: Vec<u8>,
}

/// Runs `code` on one wave of `target` from `init`, with the global buffer
/// `mem` at `base`.
fn run_on(
    target: Target,
    code: &[u8],
    init: &Wave,
    lds: &[u8],
    base: u64,
    vm: &Vm,
    mem_len: u64,
) -> State {
    let mut code = code.to_vec();
    code.extend_from_slice(&ENDPGM);
    let prog = Program::new(target, CODE, code);
    let mut wave = init.clone();
    wave.pc = CODE;
    let mut lds = lds.to_vec();
    let mut env = Env::new(target);
    env.lds_size = lds.len() as u32;
    let mut tlb = Tlb::default();
    let mut ctx = Ctx {
        wave: &mut wave,
        lds: &mut lds,
        vm,
        tlb: &mut tlb,
        env: &env,
    };
    loop {
        match engine::run(&mut ctx, &prog, 100_000) {
            Ok(Stop::Ended) => break,
            Ok(Stop::Barrier) => ctx.wave.state = WaveState::Running,
            Ok(Stop::Quantum) => panic!("{target}: the sequence did not end"),
            Err((f, pc)) => panic!("{target}: fault at 0x{pc:x}: {f:?}"),
        }
    }
    let mem = vm.read_vec(base, mem_len).expect("read back");
    State { wave, lds, mem }
}

/// Checks `asm` (one gfx950 instruction) against its rewrite over `rounds`
/// random states; `setup` may shape the registers (v0..v15 random by
/// default), `close` compares VGPR `r` lane `l` with a tolerance when set.
fn check(asm: &str, setup: impl Fn(&mut Wave, &mut Rng, u64), close: Option<(&[usize], f32)>) {
    let guest = assemble_lines(Target::Gfx950, asm).concat();
    let opts = Options {
        guest: Target::Gfx950,
        host: Target::Gfx942,
    };
    let (_, host) = rewrite_one(&guest, &opts, TEMP as u32)
        .unwrap_or_else(|e| panic!("{asm}: {e}"))
        .unwrap_or_else(|| panic!("{asm}: not classified as gfx950-only"));
    compare(asm, &guest, &host, setup, close);
}

/// As [`check`] for a run of transposing loads sharing one trampoline.
fn check_run(asm: &str, setup: impl Fn(&mut Wave, &mut Rng, u64)) {
    let guest = assemble_lines(Target::Gfx950, asm).concat();
    let opts = Options {
        guest: Target::Gfx950,
        host: Target::Gfx942,
    };
    let host = rocjitsu_code::dbt::rewrite_tr_run(&guest, &opts, TEMP as u32)
        .unwrap_or_else(|e| panic!("{asm}: {e}"));
    compare(asm, &guest, &host, setup, None);
}

fn compare(
    asm: &str,
    guest: &[u8],
    host: &[u8],
    setup: impl Fn(&mut Wave, &mut Rng, u64),
    close: Option<(&[usize], f32)>,
) {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ asm.len() as u64);
    for round in 0..6 {
        let mut w = Wave::new(VREGS);
        for r in 0..48 {
            for l in 0..64 {
                w.v[r][l] = rng.next();
            }
        }
        for s in 0..16 {
            w.s[s] = rng.next();
        }
        let exec = match round {
            0 => u64::MAX,
            1 => 0x0000_ffff_ffff_0000,
            _ => u64::from(rng.next()) << 32 | u64::from(rng.next()),
        };
        w.set_exec(exec);
        let vm = Vm::new();
        let mem_len = 64 * 64;
        let base = vm.alloc(mem_len + 64, Perms::RW);
        let mem: Vec<u8> = (0..mem_len).map(|_| rng.next() as u8).collect();
        vm.fill(base, &mem).expect("fill");
        setup(&mut w, &mut rng, base);
        let lds: Vec<u8> = (0..65536).map(|_| rng.next() as u8).collect();
        let a = run_on(Target::Gfx950, guest, &w, &lds, base, &vm, mem_len);
        let vm2 = Vm::new();
        let base2 = vm2.alloc(mem_len + 64, Perms::RW);
        assert_eq!(base, base2, "both VMs place the buffer alike");
        vm2.fill(base2, &mem).expect("fill");
        let b = run_on(Target::Gfx942, host, &w, &lds, base2, &vm2, mem_len);
        for r in 0..TEMP {
            for l in 0..64 {
                let (x, y) = (a.wave.v[r][l], b.wave.v[r][l]);
                if let Some((regs, tol)) = close
                    && regs.contains(&r)
                {
                    let (fx, fy) = (f32::from_bits(x), f32::from_bits(y));
                    assert!(
                        (fx - fy).abs() <= tol * fx.abs().max(1.0),
                        "{asm} round {round}: v{r} lane {l}: native {fx}, translated {fy}"
                    );
                    continue;
                }
                assert_eq!(
                    x, y,
                    "{asm} round {round} exec {exec:016x}: v{r} lane {l}: native {x:08x}, translated {y:08x}"
                );
            }
        }
        for r in 256..512 {
            assert_eq!(
                a.wave.v[r],
                b.wave.v[r],
                "{asm} round {round}: a{}",
                r - 256
            );
        }
        assert_eq!(
            a.wave.s[..128],
            b.wave.s[..128],
            "{asm} round {round}: SGPRs / EXEC / VCC / M0"
        );
        assert_eq!(a.wave.scc, b.wave.scc, "{asm}: SCC");
        assert!(a.lds == b.lds, "{asm} round {round}: LDS differs");
        assert!(a.mem == b.mem, "{asm} round {round}: memory differs");
    }
}

fn none(_: &mut Wave, _: &mut Rng, _: u64) {}

#[test]
fn bitop3_b32_every_table() {
    for t in (0..256)
        .step_by(7)
        .chain([0x00, 0x01, 0x6c, 0x80, 0x96, 0xe8, 0xfe, 0xff])
    {
        check(
            &format!("v_bitop3_b32 v3, v0, v1, v2 bitop3:0x{t:x}"),
            none,
            None,
        );
    }
    check("v_bitop3_b32 v1, s2, v1, 5 bitop3:0xca", none, None);
    check("v_bitop3_b32 v2, v0, -1, v2 bitop3:0x1e", none, None);
}

#[test]
fn bitop3_b16_with_op_sel() {
    for t in [0x6c, 0xec, 0xc8, 0x01, 0xfe] {
        check(
            &format!("v_bitop3_b16 v3, v0, v1, v2 bitop3:0x{t:x}"),
            none,
            None,
        );
        check(
            &format!("v_bitop3_b16 v3, v0, v1, v2 bitop3:0x{t:x} op_sel:[1,0,1,1]"),
            none,
            None,
        );
        check(
            &format!("v_bitop3_b16 v3, v0, v1, v2 bitop3:0x{t:x} op_sel:[0,1,0,0]"),
            none,
            None,
        );
    }
    check("v_bitop3_b16 v6, v9, v6, 15 bitop3:0xec", none, None);
    check("v_bitop3_b16 v10, v10, 3, v11 bitop3:0xc8", none, None);
}

/// f32 values with the edge cases of a conversion: NaNs (quiet and
/// signalling, both signs), infinities, denormals, ties, overflow.
fn floats(w: &mut Wave, rng: &mut Rng, _: u64) {
    const EDGE: [u32; 14] = [
        0x7fc0_0000,
        0xffbf_ffff,
        0x7f80_0001,
        0x7f80_0000,
        0xff80_0000,
        0x0000_0001,
        0x8000_8000,
        0x3f80_8000,
        0x3f81_8000,
        0x477f_f000,
        0x477f_efff,
        0x3380_0000,
        0x0000_0000,
        0x8000_0000,
    ];
    for r in 0..4 {
        for l in 0..64 {
            let x = rng.next();
            w.v[r][l] = if x.is_multiple_of(3) {
                EDGE[(x as usize / 3) % EDGE.len()]
            } else {
                f32::to_bits((x as i32 as f32) / 65536.0 * if x & 1 == 0 { 1e-3 } else { 7.0 })
            };
        }
    }
    w.mode = 0xf0; // RNE, denormals kept
    w.s[3] = w.v[1][5];
}

#[test]
fn cvt_pk_f16_f32() {
    check("v_cvt_pk_f16_f32 v4, v0, v1", floats, None);
    check("v_cvt_pk_f16_f32 v0, -v0, |v1|", floats, None);
    check("v_cvt_pk_f16_f32 v4, v2, s3", floats, None);
}

#[test]
fn cvt_pk_bf16_f32() {
    check("v_cvt_pk_bf16_f32 v4, v0, v1", floats, None);
    check("v_cvt_pk_bf16_f32 v1, -|v0|, v1", floats, None);
    check("v_cvt_pk_bf16_f32 v2, v2, s3", floats, None);
}

#[test]
fn permlane_swaps() {
    check("v_permlane32_swap_b32 v1, v3", none, None);
    check("v_permlane16_swap_b32 v21, v22", none, None);
    check("v_permlane32_swap_b32 v6, v8", none, None);
    check(
        "v_permlane16_swap_b32_e64 v12, v11 bound_ctrl:1",
        none,
        None,
    );
    check(
        "v_permlane32_swap_b32_e64 v1, v2 bound_ctrl:1 fi:1",
        none,
        None,
    );
}

#[test]
fn prng() {
    check("v_prng_b32 v10, v0", none, None);
    check("v_prng_b32_e64 v1, s2", none, None);
    check("v_prng_b32 v1, 0x80001234", none, None);
}

/// LDS addresses in v17 (in range, aligned as the element size needs).
fn lds_addrs(w: &mut Wave, rng: &mut Rng, _: u64) {
    for l in 0..64 {
        w.v[17][l] = (rng.next() % 60000) & !7;
    }
}

#[test]
fn transposing_lds_loads() {
    check("ds_read_b64_tr_b16 v[2:3], v17 offset:16", lds_addrs, None);
    check("ds_read_b64_tr_b16 v[16:17], v17", lds_addrs, None);
    check(
        "ds_read_b64_tr_b8 v[46:47], v17 offset:2368",
        lds_addrs,
        None,
    );
    check("ds_read_b64_tr_b8 v[18:19], v17", lds_addrs, None);
    // Runs sharing one trampoline, a destination overlapping an address.
    check_run(
        "ds_read_b64_tr_b16 v[2:3], v17\nds_read_b64_tr_b16 v[4:5], v17 offset:64\n\
         ds_read_b64_tr_b16 v[16:17], v17 offset:2112\nds_read_b64_tr_b16 v[6:7], v19",
        |w, rng, b| {
            lds_addrs(w, rng, b);
            for l in 0..64 {
                w.v[19][l] = (rng.next() % 60000) & !7;
            }
        },
    );
    check_run(
        "ds_read_b64_tr_b8 v[46:47], v17\nds_read_b64_tr_b8 v[48:49], v17 offset:256\n\
         ds_read_b64_tr_b8 v[50:51], v17 offset:2112",
        lds_addrs,
    );
}

#[test]
fn global_load_lds_dwordx4() {
    let addrs = |w: &mut Wave, rng: &mut Rng, base: u64| {
        for l in 0..64 {
            let a = base + u64::from(rng.next() % 60) * 64;
            w.v[2][l] = a as u32;
            w.v[3][l] = (a >> 32) as u32;
            w.v[4][l] = (a - base) as u32;
        }
        w.s[6] = base as u32;
        w.s[7] = (base >> 32) as u32;
        w.s[124] = (rng.next() % 512) * 16; // M0
    };
    check("global_load_lds_dwordx4 v[2:3], off", addrs, None);
    check("global_load_lds_dwordx4 v[2:3], off offset:16", addrs, None);
    check("global_load_lds_dwordx4 v4, s[6:7] offset:32", addrs, None);
}

/// MFMA data: A and B (v0..v15) packed 16-bit values `elem(x)`, the
/// accumulators (v16..v47) f32 `acc(x)`.
fn mfma_data(w: &mut Wave, rng: &mut Rng, elem: impl Fn(u32) -> u32, acc: impl Fn(u32) -> f32) {
    for r in 0..48 {
        for l in 0..64 {
            w.v[r][l] = if r < 16 {
                elem(rng.next()) | elem(rng.next()) << 16
            } else {
                acc(rng.next()).to_bits()
            };
        }
    }
}

/// Small integers: every product and partial sum is exact in f32.
fn small(x: u32) -> f32 {
    (x % 9) as f32 - 4.0
}

/// Values in [-2, 2) with 16 fractional bits of variety.
fn frac(x: u32) -> f32 {
    (x % 4096) as f32 / 1024.0 - 2.0
}

fn f16_of(x: f32) -> u32 {
    u32::from(crate::float::f32_to_f16(
        x,
        crate::float::Rounding::NearestEven,
    ))
}

fn halves(w: &mut Wave, rng: &mut Rng, _: u64) {
    mfma_data(w, rng, |x| f16_of(small(x)), small);
}

fn bhalves(w: &mut Wave, rng: &mut Rng, _: u64) {
    mfma_data(w, rng, |x| small(x).to_bits() >> 16, small);
}

fn frac_halves(w: &mut Wave, rng: &mut Rng, _: u64) {
    mfma_data(w, rng, |x| f16_of(frac(x)), frac);
}

#[test]
fn mfma_split_k() {
    let acc: &[usize] = &[
        16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
    ];
    // Small integers: every partial sum is exact, so the split is bit-exact.
    check(
        "v_mfma_f32_32x32x16_f16 v[16:31], v[0:3], v[4:7], v[16:31]",
        halves,
        None,
    );
    check(
        "v_mfma_f32_16x16x32_f16 v[16:19], v[0:3], v[4:7], v[16:19]",
        halves,
        None,
    );
    check(
        "v_mfma_f32_32x32x16_bf16 v[16:31], v[0:3], v[4:7], v[32:47]",
        bhalves,
        None,
    );
    check(
        "v_mfma_f32_16x16x32_bf16 v[16:19], v[8:11], v[4:7], 0",
        bhalves,
        None,
    );
    check(
        "v_mfma_i32_32x32x32_i8 v[16:31], v[0:3], v[4:7], v[16:31]",
        none,
        None,
    );
    check(
        "v_mfma_i32_16x16x64_i8 v[16:19], v[0:3], v[4:7], v[20:23]",
        none,
        None,
    );
    check(
        "v_mfma_f32_32x32x16_f16 a[0:15], v[0:3], v[4:7], a[0:15]",
        halves,
        None,
    );
    // Random f16 data: another summation order, within rounding.
    check(
        "v_mfma_f32_32x32x16_f16 v[16:31], v[0:3], v[4:7], v[16:31]",
        frac_halves,
        Some((acc, 1e-5)),
    );
}

#[test]
fn instructions_without_a_rewrite_fail_closed() {
    let opts = Options {
        guest: Target::Gfx950,
        host: Target::Gfx942,
    };
    for asm in [
        "v_cvt_sr_bf16_f32 v1, v2, v3",
        "v_cvt_pk_fp8_f32 v1, v2, v3",
        "v_mfma_f32_32x32x64_f8f6f4 v[0:15], v[0:7], v[8:15], v[0:15]",
        "v_cvt_scalef32_f32_fp8 v1, v2, v3",
    ] {
        let guest = assemble_lines(Target::Gfx950, asm).concat();
        assert!(
            rewrite_one(&guest, &opts, TEMP as u32).is_err(),
            "{asm} must fail closed"
        );
    }
    // Same on both targets: no rewrite.
    let same = assemble_lines(Target::Gfx950, "v_add_f32 v1, v2, v3").concat();
    assert!(rewrite_one(&same, &opts, TEMP as u32).unwrap().is_none());
}
