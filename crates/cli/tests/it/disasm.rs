//! End-to-end tests of `rocjitsu disasm`: the built binary against
//! `llvm-objdump-22 -d` on the compiled corpus and on a HIP fat object, plus
//! `--hex`, `--kernel`, `--json` and bad inputs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn rocjitsu(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocjitsu"))
        .args(args)
        .output()
        .expect("running rocjitsu")
}

fn rocjitsu_stdin(args: &[&str], input: &str) -> Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_rocjitsu"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("running rocjitsu");
    // rocjitsu may exit (on a usage error) before reading its input.
    let _ = child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes());
    child.wait_with_output().expect("waiting for rocjitsu")
}

fn objdump(args: &[&str]) -> String {
    let out = Command::new("llvm-objdump-22")
        .args(args)
        .output()
        .expect("running llvm-objdump-22 (install LLVM 22: scripts/setup.sh)");
    assert!(out.status.success(), "llvm-objdump-22 {args:?} failed");
    String::from_utf8(out.stdout).expect("utf-8")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A fresh scratch directory for one test, removed when dropped.
struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch(name: &str) -> Scratch {
    let d = std::env::temp_dir().join(format!("rocjitsu-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("creating a scratch directory");
    Scratch(d)
}

/// Instruction lines (those starting with a tab), whitespace-normalized.
fn insn_lines(s: &str) -> Vec<String> {
    s.lines()
        .filter(|l| l.starts_with('\t'))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

/// Every line that is not an instruction: headers, labels, data dumps.
fn layout_lines(s: &str) -> Vec<String> {
    s.lines()
        .filter(|l| !l.starts_with('\t'))
        .map(str::to_string)
        .collect()
}

/// Compares two listings line by line; returns the number of differing
/// lines and appends the first ones to `report`.
fn compare(file: &str, ours: &[String], llvm: &[String], report: &mut Vec<String>) -> usize {
    let mut bad = 0;
    for i in 0..ours.len().max(llvm.len()) {
        let a = ours.get(i).map_or("<missing>", String::as_str);
        let b = llvm.get(i).map_or("<missing>", String::as_str);
        if a != b {
            bad += 1;
            if report.len() < 30 {
                report.push(format!("{file}:{}: ours `{a}` | llvm `{b}`", i + 1));
            }
        }
    }
    bad
}

/// The address in an instruction line's `// ADDR:` comment.
fn line_addr(l: &str) -> Option<u64> {
    let c = l.rsplit_once("// ")?.1;
    u64::from_str_radix(c.split(':').next()?, 16).ok()
}

/// Compares instruction lines by address (so that one misdecoded length
/// does not shift every later line): each of llvm's lines must appear at
/// its address in ours, and ours must have no other lines. Returns the
/// number of differences and appends the first ones to `report`.
fn compare_insns(file: &str, ours: &[String], llvm: &[String], report: &mut Vec<String>) -> usize {
    let by_addr: std::collections::HashMap<u64, &String> = ours
        .iter()
        .filter_map(|l| Some((line_addr(l)?, l)))
        .collect();
    let mut bad = 0;
    for b in llvm {
        let a = line_addr(b).and_then(|x| by_addr.get(&x));
        if a.is_none_or(|a| *a != b) {
            bad += 1;
            if report.len() < 30 {
                let a = a.map_or("<no line at this address>", |a| a.as_str());
                report.push(format!("{file}: ours `{a}` | llvm `{b}`"));
            }
        }
    }
    let llvm_addrs: std::collections::HashSet<u64> =
        llvm.iter().filter_map(|l| line_addr(l)).collect();
    let extra = ours
        .iter()
        .filter(|l| line_addr(l).is_none_or(|a| !llvm_addrs.contains(&a)))
        .count();
    bad + extra
}

/// The corpus code objects, or a panic telling how to build them.
fn corpus() -> Vec<PathBuf> {
    let dir = root().join("build/corpus");
    let mut files = Vec::new();
    for t in [
        "gfx908", "gfx90a", "gfx942", "gfx950", "gfx1010", "gfx1030", "gfx1100", "gfx1151",
    ] {
        let Ok(rd) = std::fs::read_dir(dir.join(t)) else {
            panic!(
                "{} is missing: run `make corpus` first",
                dir.join(t).display()
            );
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "hsaco") {
                files.push(p);
            }
        }
    }
    files.sort();
    assert!(
        !files.is_empty(),
        "no code objects under {}: run `make corpus` first",
        dir.display()
    );
    files
}

const FLAGS: [&str; 2] = ["--no-show-raw-insn", "--no-leading-addr"];

/// llvm-objdump's `-d`, with `--mattr=+wavefrontsize64` for a wave64 RDNA
/// code object of the corpus (corpus.py marks its listing from the kernels'
/// metadata; rocjitsu reads the kernel descriptors).
fn objdump_d(path: &Path) -> Vec<&'static str> {
    let listing = std::fs::read_to_string(path.with_extension("objdump")).unwrap_or_default();
    if listing.starts_with("; rocjitsu-corpus: wavefront-size 64") {
        vec!["-d", "--mattr=+wavefrontsize64"]
    } else {
        vec!["-d"]
    }
}

fn disasm_vs_objdump(path: &Path) -> (String, String) {
    let p = path.to_str().expect("utf-8 path");
    let ours = rocjitsu(&["disasm", FLAGS[0], FLAGS[1], p]);
    assert!(
        ours.status.success(),
        "rocjitsu disasm {p} failed: {}",
        stderr(&ours)
    );
    let llvm = objdump(&[objdump_d(path), FLAGS.to_vec(), vec![p]].concat());
    (stdout(&ours), llvm)
}

/// The instruction lines of every corpus code object equal llvm-objdump's
/// (needs every encoding's decoder).
#[test]
fn corpus_instructions_match_objdump() {
    let files = corpus();
    let mut report = Vec::new();
    let (mut lines, mut bad_lines, mut bad_files, mut exact) = (0, 0, 0, 0);
    for f in &files {
        let (ours, llvm) = disasm_vs_objdump(f);
        let (a, b) = (insn_lines(&ours), insn_lines(&llvm));
        lines += b.len();
        let bad = compare_insns(&f.display().to_string(), &a, &b, &mut report);
        bad_lines += bad;
        bad_files += usize::from(bad > 0);
        exact += usize::from(ours == llvm);
    }
    println!(
        "{} code objects: {} with identical instruction lines, {exact} with identical output; \
         {bad_lines} of {lines} instruction lines differ",
        files.len(),
        files.len() - bad_files
    );
    assert!(
        bad_lines == 0 && exact == files.len(),
        "rocjitsu disasm differs from llvm-objdump-22 -d in {bad_files} files \
         ({bad_lines} of {lines} instruction lines); first differences:\n{}",
        report.join("\n")
    );
}

/// gfx1201's corpus code objects with `--real-true16` print as
/// `llvm-objdump-22 -d --mattr=+real-true16` prints them (the mode of
/// Triton's gfx1201 code, whose 16-bit words LLVM's default reading shows
/// as `.long`).
#[test]
fn gfx1201_real_true16_matches_objdump() {
    let dir = root().join("build/corpus/gfx1201");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|_| panic!("{} is missing: run `make corpus` first", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "hsaco"))
        .collect();
    files.sort();
    assert!(
        !files.is_empty(),
        "no gfx1201 code objects: run `make corpus`"
    );
    let mut report = Vec::new();
    let (mut lines, mut bad_lines, mut halves) = (0, 0, 0);
    for f in &files {
        let p = f.to_str().expect("utf-8 path");
        let ours = rocjitsu(&["disasm", "--real-true16", FLAGS[0], FLAGS[1], p]);
        assert!(
            ours.status.success(),
            "rocjitsu disasm {p}: {}",
            stderr(&ours)
        );
        let mattr = if objdump_d(f).len() == 2 {
            "--mattr=+real-true16,+wavefrontsize64"
        } else {
            "--mattr=+real-true16"
        };
        let llvm = objdump(&["-d", mattr, FLAGS[0], FLAGS[1], p]);
        let ours = stdout(&ours);
        let (a, b) = (insn_lines(&ours), insn_lines(&llvm));
        lines += b.len();
        halves += b
            .iter()
            .filter(|l| l.contains(".h,") || l.contains(".l,"))
            .count();
        bad_lines += compare_insns(p, &a, &b, &mut report);
    }
    println!(
        "gfx1201 real-true16: {} code objects, {bad_lines} of {lines} instruction lines differ \
         ({halves} lines name a VGPR half)",
        files.len()
    );
    assert!(
        halves > 0,
        "no VGPR halves in the gfx1201 corpus: run `make corpus`"
    );
    assert!(
        bad_lines == 0,
        "rocjitsu disasm --real-true16 differs from llvm-objdump-22 --mattr=+real-true16:\n{}",
        report.join("\n")
    );
}

/// Headers, symbol labels and data dumps of every corpus code object equal
/// llvm-objdump's, with and without `--no-show-raw-insn --no-leading-addr`.
#[test]
fn corpus_layout_matches_objdump() {
    let files = corpus();
    let mut report = Vec::new();
    let mut bad = 0;
    for f in &files {
        let (ours, llvm) = disasm_vs_objdump(f);
        bad += compare(
            &f.display().to_string(),
            &layout_lines(&ours),
            &layout_lines(&llvm),
            &mut report,
        );
        // Default flags: labels carry their addresses.
        let p = f.to_str().expect("utf-8 path");
        let ours = stdout(&rocjitsu(&["disasm", p]));
        let llvm = objdump(&[objdump_d(f), vec![p]].concat());
        bad += compare(p, &layout_lines(&ours), &layout_lines(&llvm), &mut report);
    }
    assert!(
        bad == 0,
        "{bad} header/label lines differ:\n{}",
        report.join("\n")
    );
}

/// Compiles `examples/saxpy.hip` into a fat object for `archs`.
fn hip_object(dir: &Path, archs: &[&str]) -> PathBuf {
    let src = root().join("examples/saxpy.hip");
    let obj = dir.join("k.o");
    let mut cmd = Command::new("clang++-22");
    cmd.args(["-x", "hip"]);
    for a in archs {
        cmd.arg(format!("--offload-arch={a}"));
    }
    cmd.args(["-nogpulib", "-nogpuinc", "-O2", "-c"])
        .arg(&src)
        .arg("-o")
        .arg(&obj);
    let out = cmd
        .output()
        .expect("running clang++-22 (install LLVM 22: scripts/setup.sh)");
    assert!(out.status.success(), "clang++-22 failed: {}", stderr(&out));
    obj
}

/// Extracts one target's code object from a fat object.
fn unbundle(obj: &Path, arch: &str) -> PathBuf {
    let fatbin = obj.with_extension("fatbin");
    let out = Command::new("llvm-objcopy-22")
        .arg(format!("--dump-section=.hip_fatbin={}", fatbin.display()))
        .arg(obj)
        .output()
        .expect("running llvm-objcopy-22");
    assert!(
        out.status.success(),
        "llvm-objcopy-22 failed: {}",
        stderr(&out)
    );
    let out_path = obj.with_extension(format!("{arch}.hsaco"));
    let out = Command::new("clang-offload-bundler-22")
        .args(["--unbundle", "--type=o"])
        .arg(format!("--targets=hipv4-amdgcn-amd-amdhsa--{arch}"))
        .arg(format!("--input={}", fatbin.display()))
        .arg(format!("--output={}", out_path.display()))
        .output()
        .expect("running clang-offload-bundler-22");
    assert!(
        out.status.success(),
        "clang-offload-bundler-22 failed: {}",
        stderr(&out)
    );
    out_path
}

const ARCHS: [&str; 4] = ["gfx90a", "gfx942", "gfx950", "gfx1100"];

/// `--mcpu` picks each target of a HIP fat object: the labels are those of
/// the extracted code object, and the listing is introduced by its target.
#[test]
fn hip_fat_object_selects_each_target() {
    let dir = scratch("fat-select");
    let obj = hip_object(&dir, &ARCHS);
    let o = obj.to_str().expect("utf-8");
    for arch in ARCHS {
        let co = unbundle(&obj, arch);
        let out = rocjitsu(&["disasm", "--mcpu", arch, o]);
        assert!(out.status.success(), "{}", stderr(&out));
        let text = stdout(&out);
        let first = text.lines().next().unwrap_or("");
        assert!(
            first.contains(&format!("target {arch}")),
            "header `{first}`"
        );
        let labels = |s: &str| -> Vec<String> {
            s.lines()
                .filter(|l| l.ends_with(">:"))
                .map(str::to_string)
                .collect()
        };
        let llvm = objdump(&["-d", co.to_str().expect("utf-8")]);
        assert_eq!(labels(&text), labels(&llvm), "{arch}");
        assert!(labels(&text).iter().any(|l| l.contains("<saxpy>")));
        assert!(labels(&text).iter().any(|l| l.contains("<reduce_sum>")));
    }
    // Without --mcpu every code object is listed, each under a header.
    let all = stdout(&rocjitsu(&["disasm", o]));
    for k in 1..=ARCHS.len() {
        assert!(
            all.contains(&format!(
                "; code object {k} of {} in {o}: target ",
                ARCHS.len()
            )),
            "{all}"
        );
    }
    for arch in ARCHS {
        assert!(
            all.contains(&format!(" of {} in {o}: target {arch} ", ARCHS.len())),
            "{all}"
        );
    }
    // A target the file does not hold: the error lists the ones it does.
    let dir1 = scratch("fat-one");
    let one = hip_object(&dir1, &["gfx942"]);
    let out = rocjitsu(&["disasm", "--mcpu", "gfx90a", one.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(1));
    let e = stderr(&out);
    assert!(
        e.contains("no code object for --mcpu gfx90a") && e.contains("available targets: gfx942"),
        "{e}"
    );
}

/// The instruction lines of each target of a HIP fat object equal
/// llvm-objdump's on the extracted code object (needs every encoding's
/// decoder).
#[test]
fn hip_fat_object_instructions_match_objdump() {
    let dir = scratch("fat-insn");
    let obj = hip_object(&dir, &ARCHS);
    let mut report = Vec::new();
    let mut bad = 0;
    for arch in ARCHS {
        let co = unbundle(&obj, arch);
        let out = rocjitsu(&["disasm", "--mcpu", arch, obj.to_str().expect("utf-8")]);
        assert!(out.status.success(), "{}", stderr(&out));
        let llvm = objdump(&["-d", co.to_str().expect("utf-8")]);
        bad += compare_insns(
            arch,
            &insn_lines(&stdout(&out)),
            &insn_lines(&llvm),
            &mut report,
        );
    }
    assert!(bad == 0, "{bad} lines differ:\n{}", report.join("\n"));
}

#[test]
fn hex_known_bytes() {
    let cases = [
        ("gfx942", "0x00 0x00 0x80 0xbf", "s_nop 0"),
        ("gfx942", "0x03 0x03 0x08 0x7e", "v_mov_b32_e32 v4, v3"),
        (
            "gfx90a",
            "0xc1,0x08,0x82,0x7d",
            "v_cmp_lt_i32_e32 vcc, -1, v4",
        ),
        (
            "gfx950",
            "0x6a 0x20 0x80 0xbe # comment",
            "s_and_saveexec_b64 s[0:1], vcc",
        ),
        ("gfx942", "ff ff ff ff", "<invalid>"),
        (
            "gfx908",
            "0x01 0x87 0x16 0xd4",
            "v_interp_mov_f32_e32 v5, p20, attr33.w",
        ),
        (
            "gfx908",
            "0x0f,0x14,0x00,0xc4,0x00,0x01,0x02,0x03",
            "exp mrt0 v0, v0, v1, v1 compr vm",
        ),
        (
            "gfx1100",
            "0xc1,0x08,0x82,0x7c",
            "v_cmp_lt_i32_e32 vcc_lo, -1, v4",
        ),
        (
            "gfx1151",
            "0x02,0x07,0x02,0x02",
            "v_cndmask_b32_e32 v1, v2, v3, vcc_lo",
        ),
        (
            "gfx1100",
            "0x00,0x40,0x40,0xcc,0x08,0x21,0x02,0x1c",
            "v_wmma_f32_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[0:7]",
        ),
        (
            "gfx1201",
            "0x02,0x01,0xf0,0xf5,0x10,0x00,0x00,0x07",
            "s_load_b32 s4, s[4:5], s3 offset:0x10 scale_offset th:TH_LOAD_BYPASS scope:SCOPE_SYS nv",
        ),
        (
            "gfx1201",
            "0xc1,0x08,0x82,0x7c",
            "v_cmp_lt_i32_e32 vcc_lo, -1, v4",
        ),
        ("gfx1030", "0x7c 0x03 0x80 0xbe", "s_mov_b32 s0, m0"),
        (
            "gfx1010",
            "0xf9,0x0c,0x0a,0x06,0x02,0x26,0x16,0x16",
            "v_add_f32_sdwa v5, -v2, -v6 clamp dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:DWORD src1_sel:DWORD",
        ),
    ];
    // The same bytes for 64-lane waves (texts from llvm-mc-22
    // -mattr=+wavefrontsize64).
    let wave64 = [
        (
            "gfx1100",
            "0xc1,0x08,0x82,0x7c",
            "v_cmp_lt_i32_e32 vcc, -1, v4",
        ),
        (
            "gfx1151",
            "0x02,0x07,0x02,0x02",
            "v_cndmask_b32_e32 v1, v2, v3, vcc",
        ),
        (
            "gfx1201",
            "0xc1,0x08,0x82,0x7c",
            "v_cmp_lt_i32_e32 vcc, -1, v4",
        ),
        (
            "gfx1030",
            "0xf9,0x0c,0x0a,0x7c,0x02,0x84,0x06,0x06",
            "v_cmp_lg_f32_sdwa s[4:5], v2, v6 src0_sel:DWORD src1_sel:DWORD",
        ),
        (
            "gfx1100",
            "0x00,0x40,0x40,0xcc,0x08,0x21,0x02,0x1c",
            "v_wmma_f32_16x16x16_f16 v[0:3], v[8:15], v[16:23], v[0:3]",
        ),
    ];
    for (cpu, hex, want) in cases {
        let out = rocjitsu_stdin(&["disasm", "--mcpu", cpu, "--hex"], hex);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(stdout(&out).trim(), want, "{cpu} {hex}");
    }
    for (cpu, hex, want) in wave64 {
        let out = rocjitsu_stdin(&["disasm", "--mcpu", cpu, "--wave64", "--hex"], hex);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(stdout(&out).trim(), want, "{cpu} {hex} wave64");
    }
    let out = rocjitsu_stdin(
        &["disasm", "--mcpu", "gfx942", "--wave32", "--hex"],
        "0 0 0x80 0xbf",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("gfx942 runs 64-lane waves only"),
        "{}",
        stderr(&out)
    );

    let out = rocjitsu_stdin(&["disasm", "--hex"], "0x00");
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("--hex needs --mcpu"));
    let out = rocjitsu_stdin(&["disasm", "--mcpu", "gfx942", "--hex"], "0x100");
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("`0x100` is not a byte"));
}

/// A corpus code object with several functions (`call.hsaco`).
fn call_object() -> PathBuf {
    let p = root().join("build/corpus/gfx942/call.hsaco");
    assert!(p.exists(), "{} is missing: run `make corpus`", p.display());
    p
}

#[test]
fn kernel_filter() {
    let p = call_object();
    let p = p.to_str().expect("utf-8");
    let out = rocjitsu(&["disasm", "--kernel", "call_poly", p]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let labels: Vec<&str> = text.lines().filter(|l| l.ends_with(">:")).collect();
    assert_eq!(labels, ["0000000000001b00 <call_poly>:"]);
    // The block is the one objdump prints for that symbol, cut at the
    // symbol's size (objdump goes on through the padding to the next symbol).
    let llvm = objdump(&["-d", "--disassemble-symbols=call_poly", p]);
    assert_eq!(layout_lines(&text), layout_lines(&llvm));
    let (ours, theirs) = (insn_lines(&text), insn_lines(&llvm));
    assert!(!ours.is_empty() && ours.len() <= theirs.len());
    assert_eq!(ours[..], theirs[..ours.len()]);
    assert!(
        ours.last().is_some_and(|l| l.contains("s_endpgm")),
        "{ours:?}"
    );

    let out = rocjitsu(&["disasm", "--kernel", "nope", p]);
    assert_eq!(out.status.code(), Some(1));
    let e = stderr(&out);
    assert!(
        e.contains("no kernel or function named `nope`") && e.contains("call_poly"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "{e}");
}

#[test]
fn json_lines() {
    let p = call_object();
    let out = rocjitsu(&[
        "disasm",
        "--json",
        "--kernel",
        "poly",
        p.to_str().expect("utf-8"),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let rows: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON object per line"))
        .collect();
    assert!(rows.len() > 10);
    let first = &rows[0];
    assert_eq!(first["target"], "gfx942");
    assert_eq!(first["function"], "poly");
    assert_eq!(first["address"], 0x1900);
    assert_eq!(first["bytes"], "00008cbf");
    assert_eq!(first["text"], "s_waitcnt vmcnt(0) expcnt(0) lgkmcnt(0)");
    assert_eq!(first["mnemonic"], "s_waitcnt");
    let mov = &rows[1];
    assert_eq!(mov["text"], "v_mov_b32_e32 v4, v3");
    assert_eq!(mov["operands"], serde_json::json!(["v4", "v3"]));
    assert_eq!(mov["modifiers"], serde_json::json!([]));
    // The branch at 0x1920 goes to poly+0x6c.
    let br = rows
        .iter()
        .find(|r| r["address"] == 0x1920)
        .expect("row at 0x1920");
    assert_eq!(br["mnemonic"], "s_cbranch_execz");
    assert_eq!(br["branch_target"], 0x196c);
    for r in &rows {
        assert!(r["function"] == "poly", "{r}");
    }
}

/// Writes `bytes` to a scratch file and returns the error of disassembling
/// it.
fn bad_input(name: &str, bytes: &[u8]) -> (String, String) {
    let dir = scratch(name);
    let p = dir.join(name);
    std::fs::write(&p, bytes).expect("writing a test input");
    let ps = p.to_str().expect("utf-8").to_string();
    let out = rocjitsu(&["disasm", &ps]);
    assert_eq!(out.status.code(), Some(1), "{name}: {}", stdout(&out));
    let e = stderr(&out);
    assert_eq!(e.lines().count(), 1, "one line: {e}");
    assert!(e.contains(&ps), "names the file: {e}");
    assert!(!e.contains("panicked"), "{e}");
    (ps, e)
}

#[test]
fn bad_inputs() {
    let good = std::fs::read(call_object()).expect("reading call.hsaco");

    let (_, e) = bad_input("empty.hsaco", &[]);
    assert!(e.contains("unrecognized format"), "{e}");

    let (_, e) = bad_input("truncated.hsaco", &good[..40]);
    assert!(e.contains("truncated") && e.contains("offset"), "{e}");

    // Section headers cut off.
    let (_, e) = bad_input("cut.hsaco", &good[..good.len() / 2]);
    assert!(e.contains("offset") && e.contains("truncated"), "{e}");

    let mut x86 = good.clone();
    x86[18] = 62;
    x86[19] = 0;
    let (_, e) = bad_input("x86.o", &x86);
    assert!(e.contains("e_machine 62") || e.contains("machine"), "{e}");

    // EF_AMDGPU_MACH of gfx1102 (0x047), a target rocjitsu does not know.
    let mut rdna = good.clone();
    rdna[48] = 0x47;
    rdna[49] = 0;
    let (_, e) = bad_input("gfx1102.hsaco", &rdna);
    assert!(e.contains("gfx1102") && e.contains("gfx942"), "{e}");

    // No executable section: clear SHF_EXECINSTR in every section header.
    let mut nocode = good.clone();
    let u = |b: &[u8], o: usize, n: usize| {
        b[o..o + n]
            .iter()
            .rev()
            .fold(0usize, |a, &x| (a << 8) | usize::from(x))
    };
    let (shoff, shnum) = (u(&good, 40, 8), u(&good, 60, 2));
    for i in 0..shnum {
        nocode[shoff + 64 * i + 8] &= !4;
    }
    let (_, e) = bad_input("nocode.hsaco", &nocode);
    assert!(
        e.contains("no executable section (.text)") && e.contains(&format!("0x{shoff:x}")),
        "{e}"
    );

    let random: Vec<u8> = (0u32..4096)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let (_, e) = bad_input("random.bin", &random);
    assert!(e.contains("unrecognized format"), "{e}");

    let out = rocjitsu(&["disasm", "/nonexistent/k.hsaco"]);
    assert_eq!(out.status.code(), Some(1));
    let e = stderr(&out);
    assert!(
        e.contains("/nonexistent/k.hsaco") && e.contains("No such file"),
        "{e}"
    );
}

/// The `.hip_fatbin` section of a fat object, written to its own file (a
/// plain or compressed clang offload bundle).
fn dump_fatbin(obj: &Path) -> PathBuf {
    let fatbin = obj.with_extension("fatbin");
    let out = Command::new("llvm-objcopy-22")
        .arg(format!("--dump-section=.hip_fatbin={}", fatbin.display()))
        .arg(obj)
        .output()
        .expect("running llvm-objcopy-22");
    assert!(out.status.success(), "{}", stderr(&out));
    fatbin
}

/// Offload bundles, plain and compressed, on their own or inside a host
/// object: `--list-targets` names their code objects and `--mcpu` lists the
/// same code as from the code object itself.
#[test]
fn offload_bundles_plain_and_compressed() {
    let dir = scratch("bundles");
    let obj = hip_object(&dir, &["gfx942", "gfx950"]);
    let plain = dump_fatbin(&obj);
    let reference = stdout(&rocjitsu(&[
        "disasm",
        "--mcpu",
        "gfx950",
        obj.to_str().expect("utf-8"),
    ]));
    assert!(insn_lines(&reference).len() > 20);

    let cdir = scratch("bundles-compressed");
    let src = root().join("examples/saxpy.hip");
    let cobj = cdir.join("kc.o");
    let out = Command::new("clang++-22")
        .args([
            "-x",
            "hip",
            "--offload-arch=gfx942",
            "--offload-arch=gfx950",
        ])
        .args(["--offload-compress", "-nogpulib", "-nogpuinc", "-O2", "-c"])
        .arg(&src)
        .arg("-o")
        .arg(&cobj)
        .output()
        .expect("running clang++-22");
    assert!(out.status.success(), "{}", stderr(&out));
    let compressed = dump_fatbin(&cobj);
    let magic = std::fs::read(&compressed).expect("reading the bundle");
    assert!(magic.starts_with(b"CCOB"), "a compressed bundle");

    for f in [&plain, &cobj, &compressed] {
        let f = f.to_str().expect("utf-8");
        let list = rocjitsu(&["disasm", "--list-targets", f]);
        assert!(list.status.success(), "{}", stderr(&list));
        let list = stdout(&list);
        let rows: Vec<&str> = list.lines().collect();
        assert_eq!(rows.len(), 2, "{list}");
        assert!(rows[0].starts_with("gfx942 ") && rows[0].contains("saxpy, reduce_sum"));
        assert!(
            rows[1].starts_with("gfx950 ") && rows[1].contains("hipv4-amdgcn-amd-amdhsa--gfx950")
        );
        let out = stdout(&rocjitsu(&["disasm", "--mcpu", "gfx950", f]));
        assert_eq!(insn_lines(&out), insn_lines(&reference), "{f}");
    }
}

/// Assembles `src` for gfx942 with llvm-mc-22 into a relocatable object.
fn assemble(dir: &Path, name: &str, src: &str) -> PathBuf {
    let s = dir.join(format!("{name}.s"));
    let o = dir.join(format!("{name}.o"));
    std::fs::write(&s, src).expect("writing assembly");
    let out = Command::new("llvm-mc-22")
        .args([
            "-triple",
            "amdgcn-amd-amdhsa",
            "-mcpu=gfx942",
            "-filetype=obj",
        ])
        .arg(&s)
        .arg("-o")
        .arg(&o)
        .output()
        .expect("running llvm-mc-22");
    assert!(out.status.success(), "llvm-mc-22: {}", stderr(&out));
    o
}

/// Hand-written objects that exercise objdump's layout rules: code before
/// the first symbol, several symbols at one address, data symbols in the
/// code section, branches to labels (printed by name) and elsewhere
/// (annotated), undecodable words and a short tail. The whole output must
/// equal llvm-objdump's.
#[test]
fn layout_edge_cases_match_objdump() {
    let dir = scratch("layout");
    let sources = [
        (
            "leading",
            "s_nop 0\ns_nop 1\n.globl f\n.type f,@function\nf:\ns_nop 2\nlab:\n\
             s_branch lab\ns_branch 0xffff\ns_branch g\n.long 0xffffffff\n\
             .type obj,@object\nobj:\n.long 0x12345678\n.size obj, 4\ng:\n\
             s_cbranch_scc0 3\ns_call_b64 s[0:1], 0xffff\n.long 0xfc000000\n\
             .byte 0xbf, 0x80\n",
        ),
        (
            "data",
            ".globl f\n.type f,@function\nf:\na1:\ns_nop 2\ns_call_b64 s[0:1], 1\n\
             s_cbranch_execz 1\ns_nop 0\n.type o1,@object\no1:\n\
             .long 0x41424344, 0x45464748, 0x01020304, 0x55\n.byte 0x41\n.size o1, 17\n\
             .type o2,@object\no2:\n.long 0x41424344, 0x45464748\n.size o2, 8\n\
             b1:\ns_branch 0xfff0\ns_branch 0xffff\ns_branch 0\n",
        ),
        (
            "aliases",
            ".type b,@function\nz:\nb:\ns_nop 0\n.type a,@function\na:\ny:\ns_nop 1\n\
             .globl c\nc:\n.type d,@function\nd:\ns_nop 2\n.type e,@object\ne:\n\
             .globl w\nw:\ns_nop 3\ns_branch 0xfffb\ns_branch 0xfffb\ns_branch 0xfffb\n",
        ),
        (
            "calls",
            "g:\ns_call_b64 s[0:1], 0\nf:\ns_cbranch_i_fork s[0:1], 0xfffe\ns_nop 0\n",
        ),
    ];
    let mut report = Vec::new();
    for (name, body) in sources {
        let src = format!(".amdgcn_target \"amdgcn-amd-amdhsa--gfx942\"\n.text\n{body}");
        let o = assemble(&dir, name, &src);
        let o = o.to_str().expect("utf-8");
        for flags in [&[][..], &["--no-leading-addr"][..]] {
            let mut args = vec!["disasm"];
            args.extend_from_slice(flags);
            args.push(o);
            let ours = stdout(&rocjitsu(&args));
            let mut oargs = vec!["-d"];
            oargs.extend_from_slice(flags);
            oargs.push(o);
            let llvm = objdump(&oargs);
            let lines = |s: &str| s.lines().map(str::to_string).collect::<Vec<_>>();
            compare(
                &format!("{name} {flags:?}"),
                &lines(&ours),
                &lines(&llvm),
                &mut report,
            );
        }
    }
    assert!(report.is_empty(), "{}", report.join("\n"));
}

/// A host executable linked from two HIP translation units holds two
/// gfx942 code objects: both are listed, and `--kernel` picks the one
/// holding the kernel.
#[test]
fn hip_executable_with_two_translation_units() {
    let dir = scratch("exe");
    let k1 = hip_object(&dir, &["gfx942"]);
    let src2 = dir.join("scale.hip");
    std::fs::write(
        &src2,
        "#define __global__ __attribute__((global))\n\
         struct dim3 { unsigned x, y, z; };\n\
         typedef struct ihipStream_t *hipStream_t;\n\
         extern \"C\" int hipLaunchKernel(const void *, dim3, dim3, void **, unsigned long, \
         hipStream_t);\n\
         extern \"C\" __global__ void scale(float *p, float s) \
         { p[__builtin_amdgcn_workitem_id_x()] *= s; }\n",
    )
    .expect("writing scale.hip");
    let k2 = dir.join("scale.o");
    let main = dir.join("main.cpp");
    std::fs::write(&main, "int main() { return 0; }\n").expect("writing main.cpp");
    let exe = dir.join("app");
    let run = |cmd: &mut Command| {
        let out = cmd.output().expect("running clang++-22");
        assert!(out.status.success(), "{cmd:?}: {}", stderr(&out));
    };
    run(Command::new("clang++-22")
        .args([
            "-x",
            "hip",
            "--offload-arch=gfx942",
            "-nogpulib",
            "-nogpuinc",
            "-O2",
            "-c",
        ])
        .arg(&src2)
        .arg("-o")
        .arg(&k2));
    // The HIP runtime is not linked: its symbols stay unresolved.
    run(Command::new("clang++-22")
        .arg(&main)
        .arg(&k1)
        .arg(&k2)
        .arg("-Wl,--unresolved-symbols=ignore-all")
        .arg("-o")
        .arg(&exe));
    let e = exe.to_str().expect("utf-8");
    let list = stdout(&rocjitsu(&["disasm", "--list-targets", e]));
    let rows: Vec<&str> = list.lines().collect();
    assert_eq!(rows.len(), 2, "{list}");
    assert!(
        rows[0].contains("saxpy, reduce_sum") && rows[1].contains("scale"),
        "{list}"
    );

    let all = stdout(&rocjitsu(&["disasm", "--mcpu", "gfx942", e]));
    assert!(all.contains("; code object 2 of 2 in"), "{all}");
    let one = rocjitsu(&["disasm", "--mcpu", "gfx942", "--kernel", "scale", e]);
    assert!(one.status.success(), "{}", stderr(&one));
    let one = stdout(&one);
    let labels: Vec<&str> = one.lines().filter(|l| l.ends_with(">:")).collect();
    assert_eq!(labels.len(), 1, "{one}");
    assert!(labels[0].ends_with("<scale>:"), "{one}");
    assert!(one.starts_with("; code object 2 of 2 in"), "{one}");
}

/// A stripped code object (no `.symtab`) is split at its `.dynsym`
/// symbols, as objdump does.
#[test]
fn stripped_code_object_layout_matches_objdump() {
    let dir = scratch("stripped");
    let stripped = dir.join("call.hsaco");
    let out = Command::new("llvm-strip-22")
        .arg("-o")
        .arg(&stripped)
        .arg(call_object())
        .output()
        .expect("running llvm-strip-22");
    assert!(out.status.success(), "{}", stderr(&out));
    let s = stripped.to_str().expect("utf-8");
    let ours = stdout(&rocjitsu(&["disasm", s]));
    let llvm = objdump(&["-d", s]);
    assert!(!ours.contains("<poly>"), "poly is a .symtab-only symbol");
    assert_eq!(layout_lines(&ours), layout_lines(&llvm));
    // Branch annotations name the nearest .dynsym symbol.
    let ann = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| l.contains("s_cbranch") || l.contains("s_branch"))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(ann(&ours), ann(&llvm));
}
