//! The graph and liveness of small sequences assembled by llvm-mc-22 into
//! relocatable objects, against hand-checked expectations: diamonds,
//! loops, calls through `s_getpc_b64` and relocated constants, tail calls,
//! traps, unknown indirect jumps and calls, on GFX9, GFX11 and GFX12.

use super::{Cfg, Exit, Issue};
use crate::CodeObject;
use crate::analysis::liveness::{Def, DefUse, Liveness};
use crate::tests::{TempDir, run};

/// A function symbol `name` around `code`.
fn func(name: &str, code: &str) -> String {
    format!(
        "  .globl {name}\n  .p2align 2\n  .type {name},@function\n{name}:\n{code}\n.Lend_{name}:\n  \
         .size {name}, .Lend_{name}-{name}\n"
    )
}

/// Assembles `functions` for `cpu` with a kernel descriptor for each of
/// `kernels`, and parses the object.
fn assemble(cpu: &str, functions: &str, kernels: &[&str]) -> (TempDir, CodeObject) {
    let mut s = format!("  .amdgcn_target \"amdgcn-amd-amdhsa--{cpu}\"\n  .text\n{functions}");
    s.push_str("  .rodata\n");
    for k in kernels {
        s.push_str(&format!(
            "  .p2align 6\n  .amdhsa_kernel {k}\n    .amdhsa_next_free_vgpr 8\n    \
             .amdhsa_next_free_sgpr 16\n"
        ));
        if cpu.starts_with("gfx9") {
            s.push_str("    .amdhsa_accum_offset 4\n");
        }
        s.push_str("  .end_amdhsa_kernel\n");
    }
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = TempDir::new(&format!("cfg-{cpu}-{n}"));
    let src = dir.path("k.s");
    let obj = dir.path("k.o");
    std::fs::write(&src, &s).unwrap();
    let mcpu = format!("-mcpu={cpu}");
    run(
        "llvm-mc-22",
        &[
            "-triple",
            "amdgcn-amd-amdhsa",
            &mcpu,
            "--filetype=obj",
            src.to_str().unwrap(),
            "-o",
            obj.to_str().unwrap(),
        ],
        &[],
    );
    let co = CodeObject::parse("k.o", std::fs::read(&obj).unwrap()).unwrap();
    (dir, co)
}

/// The blocks as `start..end: edges` lines, edges as `kind 0xTARGET` or
/// the exit.
fn shape(cfg: &Cfg) -> Vec<String> {
    cfg.blocks
        .iter()
        .map(|b| {
            let mut parts: Vec<String> = b
                .succs
                .iter()
                .map(|e| format!("{} 0x{:x}", e.kind.name(), cfg.blocks[e.to].start))
                .collect();
            if let Some(x) = b.exit {
                parts.push(x.name().to_string());
            }
            format!("0x{:x}..0x{:x}: {}", b.start, b.end, parts.join(", "))
        })
        .collect()
}

/// What is live before the instruction at `addr`.
fn live_at(cfg: &Cfg, l: &Liveness, addr: u64) -> String {
    l.live_in[cfg.site_at(addr).expect("an instruction there")].to_string()
}

/// Checks what is live before each `(address, registers)`.
fn assert_live(cfg: &Cfg, l: &Liveness, want: &[(u64, &str)]) {
    for &(addr, regs) in want {
        assert_eq!(live_at(cfg, l, addr), regs, "live before 0x{addr:x}");
    }
}

fn graph(cpu: &str, functions: &str, kernels: &[&str]) -> Cfg {
    let (_dir, co) = assemble(cpu, functions, kernels);
    Cfg::of(&co).unwrap()
}

const DIAMOND: &str = "  s_cmp_eq_u32 s0, 0
  s_cbranch_scc1 .Lelse
  s_mov_b32 s1, 1
  s_branch .Ljoin
.Lelse:
  s_mov_b32 s1, 2
.Ljoin:
  s_add_u32 s2, s1, s0
  s_endpgm";

#[test]
fn diamond() {
    for cpu in [
        "gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1151", "gfx1201",
    ] {
        let cfg = graph(cpu, &func("k", DIAMOND), &["k"]);
        assert_eq!(
            shape(&cfg),
            [
                "0x0..0x8: taken 0x10, not-taken 0x8",
                "0x8..0x10: jump 0x14",
                "0x10..0x14: fallthrough 0x14",
                "0x14..0x1c: end-program",
            ],
            "{cpu}"
        );
        assert!(cfg.is_complete(), "{cpu}: {:?}", cfg.issues);
        assert_eq!(cfg.functions.len(), 1);
        assert!(cfg.functions[0].is_kernel);
        assert_eq!(cfg.blocks[3].preds, [1, 2]);
    }
    let cfg = graph("gfx942", &func("k", DIAMOND), &["k"]);
    let l = Liveness::of(&cfg).unwrap();
    // s1 is written on both paths before it is read; SCC by the compare.
    assert_live(
        &cfg,
        &l,
        &[
            (0x0, "s0"),
            (0x4, "s0 scc"),
            (0x8, "s0"),
            (0x10, "s0"),
            (0x14, "s[0:1]"),
            (0x18, ""),
        ],
    );
    // s_add_u32's sum and carry are never read.
    let add = cfg.site_at(0x14).unwrap();
    assert_eq!(l.dead_defs(add).to_string(), "s2 scc");
    // The use of s1 at the join comes from either side.
    let du = DefUse::of(&cfg, &l.effects);
    let s1 = du.reaching(add, 1).unwrap();
    assert_eq!(
        s1,
        [
            Def::Site(cfg.site_at(0x8).unwrap()),
            Def::Site(cfg.site_at(0x10).unwrap())
        ]
    );
    // s0 comes from the kernel's entry.
    assert_eq!(du.reaching(add, 0).unwrap(), [Def::Entry(0)]);
}

const LOOP: &str = "  s_mov_b32 s1, 0
  v_mov_b32 v1, 0
.Lloop:
  v_add_u32 v1, v1, v0
  s_add_u32 s1, s1, 1
  s_cmp_lt_u32 s1, s0
  s_cbranch_scc1 .Lloop
  global_store_dword v[2:3], v1, off
  s_endpgm";

#[test]
fn loop_liveness_and_masked_writes() {
    let cfg = graph("gfx942", &func("k", LOOP), &["k"]);
    assert_eq!(
        shape(&cfg),
        [
            "0x0..0x8: fallthrough 0x8",
            "0x8..0x18: taken 0x8, not-taken 0x18",
            "0x18..0x24: end-program",
        ]
    );
    let l = Liveness::of(&cfg).unwrap();
    // v1's write under EXEC does not kill it: lanes outside EXEC keep
    // the value from the entry. Every vector instruction reads EXEC.
    assert_live(
        &cfg,
        &l,
        &[
            (0x0, "s0 exec v[0:3]"),
            (0x4, "s[0:1] exec v[0:3]"),
            (0x8, "s[0:1] exec v[0:3]"),
            (0x14, "s[0:1] exec scc v[0:3]"),
            (0x18, "exec v[1:3]"),
            (0x20, ""),
        ],
    );
    // The compare's SCC is read; s1 is read around the loop.
    assert!(l.dead_defs(cfg.site_at(0x10).unwrap()).is_empty());
    // s_add_u32's carry is dead (the compare writes SCC first).
    assert_eq!(l.dead_defs(cfg.site_at(0xc).unwrap()).to_string(), "scc");
    let du = DefUse::of(&cfg, &l.effects);
    let add = cfg.site_at(0xc).unwrap();
    assert_eq!(du.reaching(add, 1).unwrap(), [Def::Site(0), Def::Site(add)]);
    // v1 at the loop's add: from the entry (masked writes do not kill),
    // the v_mov and the previous iteration.
    let vadd = cfg.site_at(0x8).unwrap();
    let v1 = rocjitsu_isa::gfx9::regs::VGPR0 + 1;
    assert_eq!(
        du.reaching(vadd, v1).unwrap(),
        [Def::Site(1), Def::Site(vadd), Def::Entry(0)]
    );
}

const CALL: &str = "  s_getpc_b64 s[4:5]
  s_add_u32 s4, s4, f@rel32@lo+4
  s_addc_u32 s5, s5, f@rel32@hi+12
  s_mov_b32 s6, 7
  s_swappc_b64 s[30:31], s[4:5]
  s_add_u32 s7, s6, 1
  s_endpgm";

const CALLEE: &str = "  v_mov_b32 v0, s6
  s_setpc_b64 s[30:31]";

#[test]
fn call_through_getpc_and_relocations() {
    let src = func("k", CALL) + &func("f", CALLEE);
    let cfg = graph("gfx942", &src, &["k"]);
    assert!(
        cfg.is_complete(),
        "{}",
        super::listing::listing(&cfg, &Default::default())
    );
    assert_eq!(cfg.resolved.get(&0x18), Some(&0x24));
    assert_eq!(
        shape(&cfg),
        [
            "0x0..0x1c: call 0x24, after-call 0x1c",
            "0x1c..0x24: end-program",
            "0x24..0x2c: return",
        ]
    );
    let k = cfg.function("k").unwrap();
    assert_eq!(k.calls, [(4, Some(1))]);
    let l = Liveness::of(&cfg).unwrap();
    // f reads s6, exec and its return address; k reads s6 after the call.
    assert_live(
        &cfg,
        &l,
        &[
            (0x24, "s6 s[30:31] exec"),
            (0x28, "s6 s[30:31]"),
            (0x18, "s[4:6] exec"),
            (0x14, "s[4:5] exec"),
            (0xc, "s[4:5] exec scc"),
            (0x4, "s[4:5] exec"),
            (0x0, "exec"),
            (0x1c, "s6"),
        ],
    );
}

#[test]
fn call_in_a_loop_with_the_address_hoisted() {
    // The address is computed once; the callee does not write s[4:5], so
    // it is still known at the second call.
    let k = "  s_getpc_b64 s[4:5]
  s_add_u32 s4, s4, f@rel32@lo+4
  s_addc_u32 s5, s5, f@rel32@hi+12
.Lloop:
  s_swappc_b64 s[30:31], s[4:5]
  s_sub_u32 s0, s0, 1
  s_cmp_lg_u32 s0, 0
  s_cbranch_scc1 .Lloop
  s_endpgm";
    let cfg = graph("gfx942", &(func("k", k) + &func("f", CALLEE)), &["k"]);
    assert!(
        cfg.is_complete(),
        "{}",
        super::listing::listing(&cfg, &Default::default())
    );
    // A callee that writes s4 makes the target unknown after the first
    // call: the graph says so instead of guessing.
    let clobber = "  s_mov_b32 s4, 0\n  s_setpc_b64 s[30:31]";
    let cfg = graph("gfx942", &(func("k", k) + &func("f", clobber)), &["k"]);
    assert!(!cfg.is_complete());
    assert_eq!(
        cfg.issues,
        [Issue::UnknownIndirect {
            address: 0x14,
            call: true,
            text: "s_swappc_b64 s[30:31], s[4:5]".into()
        }]
    );
    assert_eq!(
        cfg.blocks[cfg.block_at(0x14).unwrap()].exit,
        Some(Exit::UnknownCall)
    );
    // Everything is live at an unknown call.
    let l = Liveness::of(&cfg).unwrap();
    assert!(l.live_in[cfg.site_at(0x14).unwrap()].contains(rocjitsu_isa::gfx9::regs::AGPR0 + 255));
}

#[test]
fn rdna_calls() {
    // GFX12 sign-extends the PC's high half and names the adds _co_.
    let k = "  s_getpc_b64 s[4:5]
  s_sext_i32_i16 s5, s5
  s_add_co_u32 s4, s4, f@rel32@lo+8
  s_add_co_ci_u32 s5, s5, f@rel32@hi+16
  s_swappc_b64 s[30:31], s[4:5]
  s_endpgm";
    let f = func("f", "  v_mov_b32 v0, 1\n  s_setpc_b64 s[30:31]");
    let cfg = graph("gfx1201", &(func("k", k) + &f), &["k"]);
    assert!(
        cfg.is_complete(),
        "{}",
        super::listing::listing(&cfg, &Default::default())
    );
    assert_eq!(
        shape(&cfg),
        [
            "0x0..0x1c: call 0x20, after-call 0x1c",
            "0x1c..0x20: end-program",
            "0x20..0x28: return",
        ]
    );
    let k11 = k
        .replace("s_add_co_u32", "s_add_u32")
        .replace("s_add_co_ci_u32", "s_addc_u32");
    for cpu in ["gfx1100", "gfx1151"] {
        let cfg = graph(cpu, &(func("k", &k11) + &f), &["k"]);
        assert!(cfg.is_complete(), "{cpu}: {:?}", cfg.issues);
        assert_eq!(cfg.resolved.get(&0x18), Some(&0x20), "{cpu}");
    }
}

#[test]
fn tail_call_and_trap() {
    let g = "  s_getpc_b64 s[16:17]
  s_add_u32 s16, s16, f@rel32@lo+4
  s_addc_u32 s17, s17, f@rel32@hi+12
  s_setpc_b64 s[16:17]";
    let k = "  s_trap 2\n  s_endpgm";
    let src = func("k", k) + &func("g", g) + &func("f", CALLEE);
    let cfg = graph("gfx942", &src, &["k"]);
    assert!(
        cfg.is_complete(),
        "{}",
        super::listing::listing(&cfg, &Default::default())
    );
    assert_eq!(
        shape(&cfg),
        [
            "0x0..0x4: fallthrough 0x4",
            "0x4..0x8: end-program",
            "0x8..0x20: tail-call 0x20",
            "0x20..0x28: return",
        ]
    );
    assert_eq!(cfg.function("g").unwrap().tail_calls, [2]);
}

#[test]
fn unknown_indirect_jump_in_a_kernel() {
    let k = "  s_load_dwordx2 s[4:5], s[0:1], 0x0
  s_waitcnt lgkmcnt(0)
  s_setpc_b64 s[4:5]";
    let cfg = graph("gfx942", &func("k", k), &["k"]);
    assert!(!cfg.is_complete());
    assert_eq!(
        cfg.issues,
        [Issue::UnknownIndirect {
            address: 0xc,
            call: false,
            text: "s_setpc_b64 s[4:5]".into()
        }]
    );
    assert_eq!(shape(&cfg), ["0x0..0x10: unknown-indirect-jump"]);
    // The same jump of s[30:31] in a function (not a kernel) returns.
    let f = "  s_setpc_b64 s[30:31]";
    let cfg = graph("gfx942", &func("f", f), &[]);
    assert!(cfg.is_complete());
    assert_eq!(shape(&cfg), ["0x0..0x4: return"]);
    // Everything is live where control goes somewhere unknown.
    let cfg = graph("gfx942", &func("k", k), &["k"]);
    let l = Liveness::of(&cfg).unwrap();
    let all = crate::analysis::liveness::RegSet::all();
    let mut want = all;
    want.remove(4);
    want.remove(5);
    assert_eq!(l.live_in[cfg.site_at(0x0).unwrap()], want);
    assert_eq!(l.live_out[cfg.site_at(0xc).unwrap()], all);
}

#[test]
fn branches_out_of_the_code() {
    // A branch past the end of .text.
    let k = "  s_branch 100\n  s_endpgm";
    let cfg = graph("gfx942", &func("k", k), &["k"]);
    assert_eq!(
        cfg.issues,
        [Issue::OutsideCode {
            from: 0,
            target: 0x194
        }]
    );
    assert_eq!(shape(&cfg), ["0x0..0x4: broken"]);
}

#[test]
fn relative_addressing_reads_the_file_upward() {
    // s_movrels reads s[4 + M0]: every SGPR from s4 up is used; M0 too.
    let k = "  s_mov_b32 m0, s2
  s_movrels_b32 s0, s4
  s_endpgm";
    let cfg = graph("gfx942", &func("k", k), &["k"]);
    let l = Liveness::of(&cfg).unwrap();
    assert_eq!(
        live_at(&cfg, &l, 0x4),
        "s[4:101] flat_scratch xnack_mask m0"
    );
    assert_eq!(
        live_at(&cfg, &l, 0x0),
        "s2 s[4:101] flat_scratch xnack_mask"
    );
    // s_movreld writes s[0 + M0]: it kills nothing.
    let k = "  s_movreld_b32 s0, s1
  s_add_u32 s2, s0, 1
  s_endpgm";
    let cfg = graph("gfx942", &func("k", k), &["k"]);
    let l = Liveness::of(&cfg).unwrap();
    assert_eq!(live_at(&cfg, &l, 0x0), "s[0:1] m0");
    // In GPR index mode a VALU source is indexed by M0 as well.
    let k = "  s_set_gpr_idx_on s2, gpr_idx(SRC0)
  v_mov_b32 v0, v250
  s_set_gpr_idx_off
  global_store_dword v[2:3], v0, off
  s_endpgm";
    let cfg = graph("gfx942", &func("k", k), &["k"]);
    let l = Liveness::of(&cfg).unwrap();
    assert_live(
        &cfg,
        &l,
        &[
            (0x8, "exec v0 v[2:3]"),
            (0x4, "m0 exec v0 v[2:3] v[250:255]"),
            (0x0, "s2 m0 exec v0 v[2:3] v[250:255]"),
        ],
    );
}

#[test]
fn register_set_names() {
    use crate::analysis::liveness::RegSet;
    use rocjitsu_isa::Family;
    assert_eq!(
        RegSet::all_of(Family::Gfx9).names(Family::Gfx9),
        "s[0:101] flat_scratch xnack_mask vcc ttmp[0:15] m0 exec scc v[0:255] a[0:255]"
    );
    // GFX10+: s102..s105 are SGPRs; no AccVGPRs.
    assert_eq!(
        RegSet::all_of(Family::Gfx11).names(Family::Gfx11),
        "s[0:105] vcc ttmp[0:15] m0 exec scc v[0:255]"
    );
    let mut s = RegSet::empty();
    for u in [3, 4, 5, 103, 106, 126, 256, 258, 259] {
        s.insert(u);
    }
    assert_eq!(
        s.names(Family::Gfx9),
        "s[3:5] flat_scratch_hi vcc_lo exec_lo v0 v[2:3]"
    );
    assert_eq!(
        s.names(Family::Gfx12),
        "s[3:5] s103 vcc_lo exec_lo v0 v[2:3]"
    );
}
