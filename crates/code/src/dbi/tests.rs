//! Unit tests of the instrumenter: the probe encoders against the gfx942
//! decoder (itself checked against LLVM 22), and instrumentation of code
//! objects built by clang-22: every block's first instruction branches to
//! a trampoline that decodes completely, ends by going back (or where the
//! displaced branch went), borrows only registers dead there, and the
//! refusals. Running instrumented kernels against the coverage plugin is
//! `crates/cli/tests/it/dbi.rs`.

use super::*;
use crate::analysis::liveness::Liveness;
use crate::tests::{TempDir, compile_cl, run};
use rocjitsu_isa::Target;

fn text(target: Target, words: &[u32]) -> Vec<String> {
    let b: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    rocjitsu_isa::disassemble(target, &b)
        .into_iter()
        .map(|l| l.inst.map_or("<invalid>".into(), |i| i.to_string()))
        .collect()
}

#[test]
fn probe_encoders_match_the_gfx942_decoder() {
    let mut w = vec![
        enc::sop1(enc::sop1::GETPC_B64, 4, 0),
        enc::sop1(enc::sop1::MOV_B64, 6, enc::int(1)),
        enc::sop1(enc::sop1::MOV_B32, 9, enc::int(-3)),
        enc::sop1(enc::sop1::MOV_B64, 10, enc::EXEC),
        enc::sop2(enc::sop2::CSELECT_B32, 12, enc::int(1), enc::int(0)),
        enc::sopc(enc::sopc::CMP_LG_U32, 12, enc::int(0)),
        enc::sopc(enc::sopc::CMP_EQ_U32, 13, enc::int(0)),
        enc::sop2(enc::sop2::ADD_U32, 4, 4, 9),
        enc::sop2(enc::sop2::ADDC_U32, 5, 5, enc::int(0)),
        enc::s_cbranch_scc0(3),
        enc::S_WAITCNT_LGKM0,
        enc::S_WAITCNT_VM0,
        enc::v_lshlrev_b32(7, 3, 7),
    ];
    w.extend(enc::smem(enc::smem::ATOMIC_ADD_X2, 6, 4, 0x1234, false));
    w.extend(enc::smem(enc::smem::ATOMIC_ADD, 8, 4, -16, true));
    w.extend(enc::smem(enc::smem::STORE_DWORDX2, 10, 4, 8, false));
    w.extend([enc::sop2(enc::sop2::AND_B32, 3, 8, enc::LITERAL), 0x41]);
    w.extend([enc::sop2(enc::sop2::MUL_I32, 3, 3, enc::LITERAL), 544]);
    w.extend([enc::sopc(enc::sopc::CMP_LT_U32, 3, enc::LITERAL), 4096]);
    w.extend([enc::sop2(enc::sop2::ADD_U32, 4, 4, enc::LITERAL), 0x10000]);
    w.extend(enc::lane_id(7));
    w.extend(enc::global_store(enc::global::STORE_DWORDX2, 7, 2, 4, 32));
    w.extend(enc::global_store(enc::global::STORE_DWORD, 7, 2, 4, -8));
    w.extend(enc::v_readlane(5, 3, 2));
    w.extend(enc::v_writelane(3, 5, 2));
    w.extend(memtrace::S_DCACHE_WB);
    let want = [
        "s_getpc_b64 s[4:5]",
        "s_mov_b64 s[6:7], 1",
        "s_mov_b32 s9, -3",
        "s_mov_b64 s[10:11], exec",
        "s_cselect_b32 s12, 1, 0",
        "s_cmp_lg_u32 s12, 0",
        "s_cmp_eq_u32 s13, 0",
        "s_add_u32 s4, s4, s9",
        "s_addc_u32 s5, s5, 0",
        "s_cbranch_scc0 3",
        "s_waitcnt lgkmcnt(0)",
        "s_waitcnt vmcnt(0)",
        "v_lshlrev_b32_e32 v7, 3, v7",
        "s_atomic_add_x2 s[6:7], s[4:5], 0x1234",
        "s_atomic_add s8, s[4:5], -0x10 glc",
        "s_store_dwordx2 s[10:11], s[4:5], 0x8",
        "s_and_b32 s3, s8, 0x41",
        "s_mul_i32 s3, s3, 0x220",
        "s_cmp_lt_u32 s3, 0x1000",
        "s_add_u32 s4, s4, 0x10000",
        "v_mbcnt_lo_u32_b32 v7, -1, 0",
        "v_mbcnt_hi_u32_b32 v7, -1, v7",
        "global_store_dwordx2 v7, v[2:3], s[4:5] offset:32",
        "global_store_dword v7, v2, s[4:5] offset:-8",
        "v_readlane_b32 s5, v3, 2",
        "v_writelane_b32 v3, s5, 2",
        "s_dcache_wb",
    ];
    let got = text(Target::Gfx942, &w);
    assert_eq!(got, want);
}

/// Loops, a conditional, a divergent branch and a callee.
pub(crate) const LOOPS_CL: &str = r#"
__attribute__((noinline)) int helper(int x) { return x * 3 + 1; }
__kernel void loops(__global int *a, int n) {
  int t = __builtin_amdgcn_workitem_id_x();
  int s = 0;
  for (int k = 0; k < n + (t & 3); k++) {
    if ((k ^ t) & 1) s += a[k & 63]; else s -= a[(k + t) & 63];
  }
  if (t < 17) s = helper(s);
  a[64 + t] = s;
}
"#;

/// The instrumented object, its manifest and the original's graph.
fn instrumented(cpu: &str, tool: &Tool) -> (CodeObject, Manifest, CodeObject, Report) {
    let d = TempDir::new(&format!("dbi-{cpu}-{}", tool.name()));
    let src = compile_cl(&d, LOOPS_CL, cpu, 5, &[]);
    let bytes = std::fs::read(&src).unwrap();
    let r = instrument(&bytes, tool).unwrap_or_else(|e| panic!("{cpu}: {e}"));
    let out = d.path("out.hsaco");
    std::fs::write(&out, &r.elf).unwrap();
    // LLVM reads the result: every section, every instruction.
    let objdump = run(
        "llvm-objdump-22",
        &["-d", &format!("--mcpu={cpu}"), out.to_str().unwrap()],
        &[],
    );
    assert!(objdump.contains(".text.dbi"), "{objdump}");
    assert!(
        !objdump.contains("<unknown>"),
        "llvm-objdump-22 finds undecodable words:\n{objdump}"
    );
    let co = CodeObject::parse("out", r.elf.clone()).unwrap();
    let m = Manifest::of(&co).unwrap().expect("a manifest");
    (co, m, CodeObject::parse("in", bytes).unwrap(), r.report)
}

#[test]
fn bbcount_sends_every_block_through_a_trampoline() {
    for (cpu, target) in [
        ("gfx90a", Target::Gfx90a),
        ("gfx942", Target::Gfx942),
        ("gfx950", Target::Gfx950),
    ] {
        let (co, m, orig, report) = instrumented(cpu, &Tool::BbCount);
        let cfg = graph(&orig).unwrap();
        let live = Liveness::of(&cfg).unwrap();
        assert!(cfg.blocks.len() >= 6, "{cpu}: {} blocks", cfg.blocks.len());
        assert_eq!(m.blocks.len(), cfg.blocks.len());
        assert_eq!(report.patch_points, cfg.blocks.len());
        assert!(m.blocks.iter().any(|b| b.function == "helper"));
        let dbi = co.elf().section(".text.dbi").unwrap();
        let data = co.elf().section(".data.dbi").unwrap();
        assert_eq!(data.addr, m.buffer);
        assert_eq!(m.buffer_bytes, 8 * cfg.blocks.len() as u64);
        for (i, b) in cfg.blocks.iter().enumerate() {
            assert_eq!(m.blocks[i].start, b.start);
            let site = &cfg.sites[b.insts.start];
            let patched = co.bytes_at(b.start, 4).unwrap();
            let br = rocjitsu_isa::decode(target, patched).unwrap();
            assert_eq!(br.mnemonic(), "s_branch", "{cpu}: block at 0x{:x}", b.start);
            let tramp = br.branch_target(b.start).unwrap();
            assert!((dbi.addr..dbi.addr + dbi.size).contains(&tramp));
            // The trampoline: wait, probe, wait, the displaced instruction
            // and a branch back.
            let code = co.bytes_at(tramp, 64).unwrap();
            let lines = rocjitsu_isa::disassemble(target, code);
            let names: Vec<String> = lines
                .iter()
                .take(6)
                .map(|l| l.inst.map(|i| i.to_string()).unwrap_or_default())
                .collect();
            assert_eq!(names[0], "s_waitcnt lgkmcnt(0)", "{cpu}: {names:?}");
            assert!(names[1].starts_with("s_getpc_b64 s["), "{names:?}");
            assert!(names[2].starts_with("s_mov_b64 s["), "{names:?}");
            assert!(names[3].starts_with("s_atomic_add_x2 s["), "{names:?}");
            assert_eq!(names[4], "s_waitcnt lgkmcnt(0)");
            // The counter the probe adds to is block i's.
            let i0 = lines[1].inst.unwrap();
            let getpc_next = tramp + 4 + 4;
            let off = ((lines[3].inst.unwrap().word(1) as i32) << 11) >> 11;
            assert_eq!(
                getpc_next.wrapping_add(off as i64 as u64),
                m.buffer + 8 * i as u64,
                "{cpu}: block {i}"
            );
            // Borrowed SGPRs are dead before the block's first instruction.
            let regs = i0.regs();
            for r in regs.writes().chain(lines[2].inst.unwrap().regs().writes()) {
                for u in r.units() {
                    assert!(
                        !live.live_in[b.insts.start].contains(u),
                        "{cpu}: block 0x{:x}: the probe writes live {}",
                        b.start,
                        u
                    );
                }
            }
            // The displaced instruction follows, the same bytes unless it
            // is PC-relative.
            let disp = lines[5].inst.unwrap();
            assert_eq!(disp.mnemonic(), site.inst.mnemonic());
            if let Some(t) = site.inst.branch_target(site.address) {
                let at = tramp + 4 * 5;
                assert_eq!(disp.branch_target(at), Some(t), "{cpu}: relocated branch");
            } else if site.inst.mnemonic() != "s_getpc_b64" {
                assert_eq!(&disp.bytes()[..disp.len()], &site.inst.encode()[..]);
            }
        }
    }
}

#[test]
fn refusals_name_the_cause() {
    let d = TempDir::new("dbi-refuse");
    let src = compile_cl(&d, LOOPS_CL, "gfx1100", 5, &[]);
    let e = instrument(&std::fs::read(&src).unwrap(), &Tool::BbCount).unwrap_err();
    assert!(e.to_string().contains("GFX9 targets"), "{e}");
    let src = compile_cl(&d, LOOPS_CL, "gfx942", 5, &[]);
    let once = instrument(&std::fs::read(&src).unwrap(), &Tool::BbCount).unwrap();
    let e = instrument(&once.elf, &Tool::BbCount).unwrap_err();
    assert!(e.to_string().contains("already instrumented"), "{e}");
    let o = memtrace::Options {
        pcs: vec![],
        mnemonics: vec!["buffer_load".into()],
        every: 1,
        records: 4,
    };
    let e = instrument(&std::fs::read(&src).unwrap(), &Tool::MemTrace(o)).unwrap_err();
    assert!(
        e.to_string().contains("no GLOBAL or FLAT instruction"),
        "{e}"
    );
}

#[test]
fn memtrace_probes_the_chosen_instructions() {
    let o = memtrace::Options {
        pcs: vec![],
        mnemonics: vec!["global_load".into()],
        every: 2,
        records: 16,
    };
    let (co, m, orig, report) = instrumented("gfx942", &Tool::MemTrace(o));
    let l = m.memtrace.as_ref().unwrap();
    let cfg = graph(&orig).unwrap();
    let loads: Vec<u64> = cfg
        .sites
        .iter()
        .filter(|s| s.inst.mnemonic().starts_with("global_load"))
        .map(|s| s.address)
        .collect();
    assert!(!loads.is_empty());
    assert_eq!(l.sites.iter().map(|s| s.address).collect::<Vec<_>>(), loads);
    assert_eq!(report.patch_points, loads.len());
    assert_eq!(m.buffer_bytes, l.first_record + 16 * memtrace::RECORD_BYTES);
    for a in loads {
        let b = co.bytes_at(a, 4).unwrap();
        let i = rocjitsu_isa::decode(Target::Gfx942, b).unwrap();
        assert_eq!(i.mnemonic(), "s_branch");
    }
}
