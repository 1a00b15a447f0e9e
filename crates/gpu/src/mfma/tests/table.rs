//! The instruction list against the VOP3P table that the isa crate
//! generates from LLVM 22's disassembler (mnemonics, targets and register
//! counts per operand).

use crate::mfma::{ALL, GFX90A, GFX908, GFX942, GFX950, lookup, lookup_for};
use rocjitsu_isa::Target;

/// (name, target bits, dst registers, source register counts) of the MFMA
/// and SMFMAC rows of the generated table.
fn llvm_rows() -> Vec<(String, u8, usize, Vec<usize>)> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../isa/src/gfx9/tables/vop3p.rs"
    );
    let text = std::fs::read_to_string(path).expect("isa VOP3P table");
    let field = |line: &str, key: &str| -> Option<String> {
        let at = line.find(key)? + key.len();
        let rest = &line[at..];
        let end = rest.find([',', ' ', '}']).unwrap_or(rest.len());
        Some(rest[..end].trim_matches('"').to_string())
    };
    text.lines()
        .filter(|l| l.contains("kind: Mfma"))
        .map(|l| {
            let name = field(l, "name: ").unwrap();
            // The executed targets' bits.
            let tg = field(l, "tg: ").unwrap().parse::<u8>().unwrap()
                & (GFX90A | GFX942 | GFX950 | GFX908);
            let dst = field(l, "dst: ").unwrap().parse().unwrap();
            let srcs = l
                .match_indices("PSrc { n: ")
                .map(|(at, s)| {
                    field(&l[at + s.len() - 3..], "n: ")
                        .unwrap()
                        .parse()
                        .unwrap()
                })
                .collect();
            (name, tg, dst, srcs)
        })
        .filter(|r: &(String, u8, usize, Vec<usize>)| r.1 != 0)
        .collect()
}

const TARGETS: [(u8, Target); 4] = [
    (GFX90A, Target::Gfx90a),
    (GFX942, Target::Gfx942),
    (GFX950, Target::Gfx950),
    (GFX908, Target::Gfx908),
];

#[test]
fn every_llvm_matrix_instruction_is_covered() {
    let rows = llvm_rows();
    assert!(rows.len() > 90, "{} rows", rows.len());
    for (name, _, dst, srcs) in &rows {
        // A mnemonic can have several rows (gfx908's AccVGPR form and
        // gfx90a's VGPR form of v_mfma_f32_32x32x1f32): its targets are
        // the union of theirs.
        let tg = rows
            .iter()
            .filter(|r| r.0 == *name)
            .fold(0, |bits, r| bits | r.1);
        for (bit, t) in TARGETS {
            let info = lookup_for(t, name);
            assert_eq!(info.is_some(), tg & bit != 0, "{name} on {t:?}");
            let Some(info) = info else { continue };
            assert_eq!(info.cd_dwords, *dst, "{name} D");
            assert_eq!(info.a_dwords, srcs[0], "{name} A");
            assert_eq!(info.b_dwords, srcs[1], "{name} B");
            let c = if info.sparse { 1 } else { info.cd_dwords };
            assert_eq!(c, srcs[2], "{name} C");
        }
    }
    // And nothing beyond them but the scaled pairs.
    for info in ALL {
        if let Some(base) = info.name.strip_prefix("v_mfma_scale_") {
            let plain = format!("v_mfma_{base}");
            assert!(lookup(&plain).is_some_and(|p| p.f8f6f4 && p.targets == info.targets));
            continue;
        }
        let bits = rows
            .iter()
            .filter(|r| r.0 == info.name)
            .fold(None, |bits, r| Some(bits.unwrap_or(0) | r.1));
        let bits = bits.unwrap_or_else(|| panic!("{} is not an LLVM mnemonic", info.name));
        assert_eq!(bits & info.targets, info.targets, "{}", info.name);
    }
}

#[test]
fn counts_per_target() {
    let count = |bit: u8| ALL.iter().filter(|i| i.targets & bit != 0).count();
    // gfx908: gfx90a's 27 less the five bf16_1k and two f64 forms; gfx90a: 27; gfx942: 22 shared + 2 xf32 + 8 fp8 + 14 smfmac; gfx950:
    // 22 shared + 8 fp8 + 14 smfmac + 6 dense + 4 f8f6f4 + 14 smfmac.
    assert_eq!(count(GFX908), 20);
    assert_eq!(count(GFX90A), 27);
    assert_eq!(count(GFX942), 46);
    assert_eq!(count(GFX950), 68);
}

#[test]
fn lookup_strips_e64() {
    let a = lookup("v_mfma_f32_32x32x8f16_e64").unwrap();
    assert_eq!(a.name, "v_mfma_f32_32x32x8f16");
    assert!(lookup("v_mfma_f32_1x1x1_f32").is_none());
}

#[test]
fn every_entry_has_a_valid_shape_and_bad_ones_are_errors() {
    assert!(ALL.iter().all(|i| i.shape_ok()));
    let mut bad = lookup("v_mfma_f32_16x16x16_f16").unwrap().clone();
    bad.n = 0;
    let r = vec![[0u32; 64]; 32];
    let mut d = r.clone();
    let mods = crate::mfma::MfmaMods::default();
    let e = crate::mfma::execute(&bad, &mods, &r, &r, &r, &mut d);
    assert_eq!(e, Err(crate::mfma::MfmaError::Shape(bad.name)));
    bad.n = 16;
    bad.blocks = 0;
    assert!(crate::mfma::execute(&bad, &mods, &r, &r, &r, &mut d).is_err());
}
