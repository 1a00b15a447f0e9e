//! Unit tests of the translator: the encoders against the gfx942 decoder
//! (itself checked against LLVM 22), translation of code objects built by
//! clang-22 (retargeting, descriptors, trampolines, checked with
//! llvm-readelf-22 / llvm-objdump-22) and fail-closed errors. The rewrites'
//! semantics are checked on the VM in `rocjitsu-gpu` (`exec::dbt_tests`).

use super::enc::{self, Seq, int, v, vop1, vop2, vop3};
use super::*;
use crate::tests::{TempDir, compile_cl, run};

fn host_text(seq: &Seq) -> Vec<String> {
    let b = seq.bytes();
    rocjitsu_isa::disassemble(Target::Gfx942, &b)
        .into_iter()
        .map(|l| l.inst.map_or("<invalid>".into(), |i| i.to_string()))
        .collect()
}

#[test]
fn encoders_match_the_gfx942_decoder() {
    let mut s = Seq::new();
    s.mov(1, v(2))
        .mov_lit(3, 0x0504_0100)
        .vop1(vop1::NOT_B32, 4, 0x02, None)
        .vop2(vop2::AND_B32, 5, enc::LITERAL, 6, Some(0xffff))
        .vop2(vop2::ASHRREV_I32, 7, int(31), 7, None)
        .vop2(vop2::SUB_U32, 8, int(0), 9, None)
        .vop3(vop3::BFI_B32, 10, [v(11), v(12), int(-1)])
        .vop3_mods(vop3::CVT_F16_F32, 13, [v(14), 0, 0], 1, 0, 0, false)
        .vop3(vop3::PERM_B32, 15, [v(16), v(17), v(18)])
        .vop3(vop3::LSHRREV_B32_E64, 19, [int(16), 3, 0])
        .vop3(vop3::WRITELANE_B32, 20, [enc::EXEC_LO, int(0), 0])
        .vop3(
            vop3::READLANE_B32,
            u32::from(enc::EXEC_HI),
            [v(20), int(1), 0],
        )
        .lane_id(21)
        .ds(enc::ds::BPERMUTE_B32, 22, 23, 24, 0, 16)
        .ds(enc::ds::READ_U8, 25, 26, 0, 0, 2368)
        .ds(enc::ds::WRITE_B128, 0, 27, 28, 0, 32)
        .raw(&[
            enc::S_WAITCNT_LGKM0,
            enc::S_WAITCNT_VM0,
            enc::S_MOV_B64_EXEC_ALL,
        ])
        .raw(&[enc::s_nop(4), enc::s_branch(-3)]);
    let want = [
        "v_mov_b32_e32 v1, v2",
        "v_mov_b32_e32 v3, 0x5040100",
        "v_not_b32_e32 v4, s2",
        "v_and_b32_e32 v5, 0xffff, v6",
        "v_ashrrev_i32_e32 v7, 31, v7",
        "v_sub_u32_e32 v8, 0, v9",
        "v_bfi_b32 v10, v11, v12, -1",
        "v_cvt_f16_f32_e64 v13, |v14|",
        "v_perm_b32 v15, v16, v17, v18",
        "v_lshrrev_b32_e64 v19, 16, s3",
        "v_writelane_b32 v20, exec_lo, 0",
        "v_readlane_b32 exec_hi, v20, 1",
        "v_mbcnt_lo_u32_b32 v21, -1, 0",
        "v_mbcnt_hi_u32_b32 v21, -1, v21",
        "ds_bpermute_b32 v22, v23, v24 offset:16",
        "ds_read_u8 v25, v26 offset:2368",
        "ds_write_b128 v27, v[28:31] offset:32",
        "s_waitcnt lgkmcnt(0)",
        "s_waitcnt vmcnt(0)",
        "s_mov_b64 exec, -1",
        "s_nop 4",
        "s_branch 65533",
    ];
    let got = host_text(&s);
    assert_eq!(got.len(), want.len(), "{got:#?}");
    for (g, w) in got.iter().zip(want) {
        assert_eq!(g, w);
    }
}

/// OpenCL kernels with gfx950-only instructions placed by inline assembly.
const CL: &str = r#"
__kernel void same(__global float *a) { a[__builtin_amdgcn_workitem_id_x()] *= 2.0f; }
__kernel void bitop(__global uint *a) {
    size_t i = __builtin_amdgcn_workitem_id_x();
    uint x = a[i], y = a[i + 64], z = a[i + 128], r;
    __asm__ volatile("v_bitop3_b32 %0, %1, %2, %3 bitop3:0x6c" : "=v"(r) : "v"(x), "v"(y), "v"(z));
    a[i] = r;
}
"#;

const CL_PRNG: &str = r#"
__kernel void prng(__global uint *a) {
    size_t i = __builtin_amdgcn_workitem_id_x();
    uint r;
    __asm__ volatile("v_cvt_sr_bf16_f32 %0, %1, %1" : "=v"(r) : "v"(a[i]));
    a[i] = r;
}
"#;

const CL_BIG_LDS: &str = r#"
__kernel void big_lds(__global float *a) {
    __local float l[20480];
    size_t i = __builtin_amdgcn_workitem_id_x();
    l[i * 64] = a[i];
    __builtin_amdgcn_s_barrier();
    a[i] = l[(i + 1) % 64];
}
"#;

fn opts() -> Options {
    Options::default()
}

#[test]
fn translation_retargets_and_branches_to_trampolines() {
    let dir = TempDir::new("dbt-tramp");
    let path = compile_cl(&dir, CL, "gfx950", 5, &[]);
    let input = std::fs::read(&path).unwrap();
    let t = translate(&input, &opts()).expect("translates");
    // The kernel and its `__clang_ocl_kern_imp_` copy each hold one.
    assert_eq!(t.report.rewritten_by_kind.get("v_bitop3_b32"), Some(&2));
    let out_path = dir.path("out.hsaco");
    std::fs::write(&out_path, &t.elf).unwrap();

    // The oracle reads it as a gfx942 object with the trampoline segment.
    let out_s = out_path.to_str().unwrap();
    let headers = run(
        "llvm-readelf-22",
        &["-h", "-l", "-S", "--notes", out_s],
        &[],
    );
    assert!(headers.contains("gfx942"), "{headers}");
    assert!(!headers.contains("gfx950"), "{headers}");
    assert!(headers.contains(".text.dbt"), "{headers}");
    let listing = run("llvm-objdump-22", &["-d", out_s], &[]);
    assert!(listing.contains("v_bfi_b32"), "{listing}");
    assert!(!listing.contains("v_bitop3"), "{listing}");

    // The site is an s_branch into the new segment, padded with s_nop; the
    // trampoline ends with an s_branch to the next instruction.
    let guest = CodeObject::parse("in", input).unwrap();
    let host = CodeObject::parse("out", t.elf.clone()).unwrap();
    assert_eq!(host.target(), Target::Gfx942);
    assert_eq!(
        host.metadata()
            .and_then(|m| m.target.clone())
            .unwrap_or_default(),
        guest
            .metadata()
            .and_then(|m| m.target.clone())
            .unwrap_or_default()
            .replace("gfx950", "gfx942")
    );
    let text = guest.text().unwrap();
    let site = rocjitsu_isa::disassemble(Target::Gfx950, text.bytes)
        .into_iter()
        .find(|l| l.inst.is_some_and(|i| i.mnemonic() == "v_bitop3_b32"))
        .expect("the bitop3 site");
    let at = text.address + site.offset as u64;
    let b = host.bytes_at(at, 8).unwrap();
    let br = rocjitsu_isa::decode(Target::Gfx942, b).unwrap();
    assert_eq!(br.mnemonic(), "s_branch");
    assert_eq!(
        rocjitsu_isa::decode(Target::Gfx942, &b[4..])
            .unwrap()
            .to_string(),
        "s_nop 0"
    );
    let tramp = br.branch_target(at).unwrap();
    let seg = host
        .elf()
        .segments
        .iter()
        .find(|p| p.kind == crate::elf::PT_LOAD && p.vaddr == tramp);
    let seg = seg.expect("the branch lands at the start of a new PT_LOAD segment");
    assert_eq!(seg.flags & crate::elf::PF_X, crate::elf::PF_X);
    let code = host.bytes_at(tramp, seg.filesz).unwrap();
    let lines = rocjitsu_isa::disassemble(Target::Gfx942, code);
    assert!(
        lines.iter().all(|l| l.inst.is_some()),
        "every trampoline word decodes on gfx942"
    );
    // The first trampoline is this site's: its first branch goes back.
    let first = lines
        .iter()
        .find(|l| l.inst.is_some_and(|i| i.mnemonic() == "s_branch"))
        .unwrap();
    let back = first
        .inst
        .unwrap()
        .branch_target(tramp + first.offset as u64)
        .unwrap();
    assert_eq!(back, at + 8);

    // Temporaries: the descriptors' ArchVGPRs grew by what the rewrite needs.
    for (g, h) in guest.kernels().iter().zip(host.kernels()) {
        assert!(h.descriptor.accum_offset() >= g.descriptor.accum_offset() + t.report.temp_vgprs);
        assert!(h.descriptor.vgpr_count(Target::Gfx942) >= h.descriptor.accum_offset());
        assert_eq!(h.entry, g.entry, "entry points stay where they were");
    }
    // The report names the kernel.
    let shown = t.report.to_string();
    assert!(
        shown.contains("kernel bitop") && shown.contains("v_bitop3_b32 x1"),
        "{shown}"
    );
}

#[test]
fn untranslatable_instruction_fails_closed_naming_kernel_pc_and_instruction() {
    let dir = TempDir::new("dbt-prng");
    let path = compile_cl(&dir, CL_PRNG, "gfx950", 5, &[]);
    let input = std::fs::read(&path).unwrap();
    let e = translate(&input, &opts()).expect_err("v_cvt_sr_bf16_f32 has no rewrite");
    let co = CodeObject::parse("in", input).unwrap();
    let f = co.functions().iter().find(|f| f.name == "prng").unwrap();
    let text = co.text().unwrap();
    let site = rocjitsu_isa::disassemble(Target::Gfx950, text.bytes)
        .into_iter()
        .find(|l| {
            l.inst
                .is_some_and(|i| i.mnemonic().starts_with("v_cvt_sr_bf16_f32"))
        })
        .unwrap();
    let pc = text.address + site.offset as u64 - f.address;
    assert_eq!(e.kernel.as_deref(), Some("prng"));
    assert_eq!(e.pc, Some(pc));
    let shown = e.to_string();
    assert!(shown.contains(&format!("prng+0x{pc:x}")), "{shown}");
    assert!(shown.contains("`v_cvt_sr_bf16_f32 v"), "{shown}");
}

#[test]
fn lds_beyond_the_host_fails_closed() {
    let dir = TempDir::new("dbt-lds");
    let path = compile_cl(&dir, CL_BIG_LDS, "gfx950", 5, &[]);
    let e = translate(&std::fs::read(&path).unwrap(), &opts()).expect_err("80 KiB of LDS");
    assert_eq!(e.kernel.as_deref(), Some("big_lds"));
    assert!(e.to_string().contains("81920 bytes of LDS"), "{e}");
}

#[test]
fn wrong_target_and_pair_are_errors() {
    let dir = TempDir::new("dbt-target");
    let src =
        "__kernel void same(__global float *a) { a[__builtin_amdgcn_workitem_id_x()] *= 2.0f; }";
    let path = compile_cl(&dir, src, "gfx942", 5, &[]);
    let e = translate(&std::fs::read(&path).unwrap(), &opts()).unwrap_err();
    assert!(e.to_string().contains("not the guest gfx950"), "{e}");
    let e = translate(
        &[],
        &Options {
            guest: Target::Gfx942,
            host: Target::Gfx950,
        },
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("--guest gfx950 --host gfx942"),
        "{e}"
    );
}

#[test]
fn code_without_guest_only_instructions_is_only_retargeted() {
    let dir = TempDir::new("dbt-same");
    let src =
        "__kernel void same(__global float *a) { a[__builtin_amdgcn_workitem_id_x()] *= 2.0f; }";
    let path = compile_cl(&dir, src, "gfx950", 5, &[]);
    let input = std::fs::read(&path).unwrap();
    let t = translate(&input, &opts()).unwrap();
    assert_eq!(t.report.rewritten, 0);
    assert_eq!(t.elf.len(), input.len(), "no segment appended");
    let diff: Vec<usize> = (0..input.len()).filter(|&i| input[i] != t.elf[i]).collect();
    // e_flags' machine byte and the target name in the note, nothing else.
    assert!(diff.contains(&48), "{diff:?}");
    assert!(diff.len() <= 1 + 2, "{diff:?}");
}

/// A gfx950 kernel whose ArchVGPRs fill v0..v255, every one written before
/// and read after a `v_prng_b32 v1, v2` except those of `unused`, assembled
/// by llvm-mc-22 and linked by ld.lld-22.
fn full_vgpr_kernel(dir: &TempDir, unused: std::ops::Range<u32>) -> Vec<u8> {
    let used = || (0..256u32).filter(|v| !unused.contains(v));
    let mut body = String::new();
    for v in used() {
        body.push_str(&format!("  v_mov_b32 v{v}, {}\n", v % 64));
    }
    body.push_str("  v_prng_b32 v1, v2\n");
    for v in used() {
        body.push_str(&format!("  v_add_u32 v0, v0, v{v}\n"));
    }
    body.push_str("  global_store_dword v[0:1], v0, off\n  s_endpgm\n");
    let src = format!(
        "  .amdgcn_target \"amdgcn-amd-amdhsa--gfx950\"\n  .text\n  .globl k\n  .p2align 8\n  \
         .type k,@function\nk:\n{body}.Lend:\n  .size k, .Lend-k\n  .rodata\n  .p2align 6\n  \
         .amdhsa_kernel k\n    .amdhsa_next_free_vgpr 256\n    .amdhsa_next_free_sgpr 8\n    \
         .amdhsa_accum_offset 256\n  .end_amdhsa_kernel\n"
    );
    let s = dir.path("k.s");
    let o = dir.path("k.o");
    let so = dir.path("k.hsaco");
    std::fs::write(&s, src).unwrap();
    let (s, o, so) = (
        s.to_str().unwrap(),
        o.to_str().unwrap(),
        so.to_str().unwrap(),
    );
    run(
        "llvm-mc-22",
        &[
            "-triple",
            "amdgcn-amd-amdhsa",
            "-mcpu=gfx950",
            "--filetype=obj",
            s,
            "-o",
            o,
        ],
        &[],
    );
    run("ld.lld-22", &["-shared", o, "-o", so], &[]);
    std::fs::read(so).unwrap()
}

#[test]
fn temporaries_go_to_free_vgprs_when_the_kernel_fills_v255() {
    // v8..v15 are never used: the rewrite's two temporaries go there, the
    // descriptor is unchanged.
    let dir = TempDir::new("dbt-full");
    let input = full_vgpr_kernel(&dir, 8..16);
    let t = translate(&input, &opts()).expect("v8..v15 are free");
    assert_eq!(t.report.rewritten, 1);
    assert_eq!(t.report.temps_in_free_vgprs, 1);
    assert_eq!(t.report.temp_vgprs, 0);
    let (g, h) = (
        CodeObject::parse("in", input).unwrap(),
        CodeObject::parse("out", t.elf.clone()).unwrap(),
    );
    assert_eq!(
        g.kernels()[0].descriptor.compute_pgm_rsrc1.raw,
        h.kernels()[0].descriptor.compute_pgm_rsrc1.raw
    );
    // The trampoline writes only the destination v1 and v8..v9, as
    // llvm-objdump-22 reads it.
    let out = dir.path("out.hsaco");
    std::fs::write(&out, &t.elf).unwrap();
    let listing = run("llvm-objdump-22", &["-d", out.to_str().unwrap()], &[]);
    let tramp = listing
        .split("Disassembly of section .text.dbt")
        .nth(1)
        .expect("a trampoline section");
    let written: std::collections::BTreeSet<&str> = tramp
        .lines()
        .filter_map(|l| l.trim().split_once(' '))
        .filter(|(m, _)| m.starts_with("v_"))
        .filter_map(|(_, ops)| ops.split(',').next())
        .map(str::trim)
        .collect();
    assert_eq!(written, ["v1", "v8", "v9"].into_iter().collect(), "{tramp}");

    // With every VGPR in use there is no room: the translation fails
    // closed naming the kernel, the PC and the instruction.
    let input = full_vgpr_kernel(&dir, 0..0);
    let e = translate(&input, &opts()).expect_err("no free VGPRs");
    assert_eq!(e.kernel.as_deref(), Some("k"));
    assert_eq!(e.pc, Some(256 * 4));
    assert_eq!(e.instruction.as_deref(), Some("v_prng_b32_e32 v1, v2"));
    assert!(e.message.contains("would pass v255"), "{e}");
}
