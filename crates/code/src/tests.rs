//! Tests against LLVM 22: code objects, bundles and HIP fat binaries are
//! built with clang-22 in a temporary directory, parsed here, and compared
//! with what llvm-readelf-22, llvm-objdump-22 and clang-offload-bundler-22
//! print for the same files.

use crate::elf::SymbolTable;
use crate::msgpack::Value;
use crate::*;
use rocjitsu_isa::Target;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A directory under the system temp dir, removed on drop.
pub(crate) struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!("rocjitsu-code-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&p);
        fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// Runs an LLVM tool and returns its stdout; a missing tool fails the test
/// with the fix.
pub(crate) fn run(tool: &str, args: &[&str], env: &[(&str, &str)]) -> String {
    let mut c = Command::new(tool);
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap_or_else(|e| {
        panic!("cannot run {tool} ({e}): run scripts/setup.sh to install LLVM 22")
    });
    assert!(
        out.status.success(),
        "{tool} {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// An OpenCL source with a callee, pointer/by-value/local arguments
/// (`dynamic_shared_pointer`), static LDS and an empty kernel.
pub(crate) const KERNELS_CL: &str = r#"
__attribute__((noinline)) float helper(float x) { return x * x + 1.0f; }
__kernel void add(__global float *a, __global const float *b, float s, __local float *l) {
  int t = __builtin_amdgcn_workitem_id_x();
  int i = __builtin_amdgcn_workgroup_id_x() * 64 + t;
  l[t] = b[i];
  __builtin_amdgcn_s_barrier();
  a[i] = helper(l[t ^ 1]) * s;
}
__kernel void lds(__global int *a, int n) {
  __local int t[256];
  t[__builtin_amdgcn_workitem_id_y()] = n;
  __builtin_amdgcn_s_barrier();
  a[__builtin_amdgcn_workgroup_id_z()] = t[3];
}
__kernel void empty() {}
"#;

/// Compiles OpenCL to a code object.
pub(crate) fn compile_cl(dir: &TempDir, src: &str, cpu: &str, cov: u32, extra: &[&str]) -> PathBuf {
    let cl = dir.path("k.cl");
    fs::write(&cl, src).unwrap();
    let out = dir.path(&format!("k-{cpu}-v{cov}-{}.hsaco", extra.len()));
    let mcpu = format!("-mcpu={cpu}");
    let cov_arg = format!("-mcode-object-version={cov}");
    let mut args = vec![
        "-x",
        "cl",
        "-target",
        "amdgcn-amd-amdhsa",
        &mcpu,
        "-nogpulib",
        "-O2",
        &cov_arg,
        "-w",
    ];
    args.extend_from_slice(extra);
    let (cl_s, out_s) = (cl.to_str().unwrap(), out.to_str().unwrap());
    args.extend_from_slice(&[cl_s, "-o", out_s]);
    run("clang-22", &args, &[]);
    out
}

/// A YAML node of the subset llvm-readelf prints for the metadata note.
#[derive(Clone, Debug, PartialEq)]
enum Yaml {
    Scalar(String),
    Seq(Vec<Yaml>),
    Map(BTreeMap<String, Yaml>),
}

fn unquote(s: &str) -> String {
    let s = s.trim();
    if s.len() >= 2 && s.starts_with('\'') && s.ends_with('\'') {
        s[1..s.len() - 1].replace("''", "'")
    } else if s.len() >= 2 && s.starts_with('"') && s.ends_with('"') {
        s[1..s.len() - 1].to_string()
    } else {
        s.to_string()
    }
}

fn yaml_scalar(v: &str) -> Yaml {
    match v.trim() {
        "[]" => Yaml::Seq(vec![]),
        "{}" => Yaml::Map(BTreeMap::new()),
        s => Yaml::Scalar(unquote(s)),
    }
}

/// Parses block-style YAML lines (`key: value`, `- item`) at `indent`.
fn yaml_block(lines: &mut Vec<(usize, String)>, i: &mut usize, indent: usize) -> Yaml {
    if *i < lines.len() && lines[*i].1.starts_with("- ") {
        let mut items = Vec::new();
        while *i < lines.len() && lines[*i].0 == indent && lines[*i].1.starts_with("- ") {
            let rest = lines[*i].1[2..].trim_start().to_string();
            if !rest.contains(": ") && !rest.ends_with(':') {
                items.push(yaml_scalar(&rest));
                *i += 1;
                continue;
            }
            lines[*i] = (indent + 2, rest);
            items.push(yaml_block(lines, i, indent + 2));
        }
        return Yaml::Seq(items);
    }
    let mut map = BTreeMap::new();
    while *i < lines.len() && lines[*i].0 == indent && !lines[*i].1.starts_with("- ") {
        let line = lines[*i].1.clone();
        *i += 1;
        let (k, v) = match line.split_once(": ") {
            Some((k, v)) => (k.to_string(), v.to_string()),
            None => (line.trim_end_matches(':').to_string(), String::new()),
        };
        let node = if v.trim().is_empty() {
            let child = lines.get(*i).map_or(0, |l| l.0);
            yaml_block(lines, i, child)
        } else {
            yaml_scalar(&v)
        };
        map.insert(unquote(&k), node);
    }
    Yaml::Map(map)
}

fn to_yaml(v: &Value) -> Yaml {
    match v {
        Value::Str(s) => Yaml::Scalar(s.clone()),
        Value::Int(i) => Yaml::Scalar(i.to_string()),
        Value::UInt(u) => Yaml::Scalar(u.to_string()),
        Value::Bool(b) => Yaml::Scalar(b.to_string()),
        Value::Array(a) => Yaml::Seq(a.iter().map(to_yaml).collect()),
        Value::Map(m) => Yaml::Map(
            m.iter()
                .map(|(k, v)| (k.as_str().unwrap_or("?").to_string(), to_yaml(v)))
                .collect(),
        ),
        other => Yaml::Scalar(format!("{other:?}")),
    }
}

/// The metadata document llvm-readelf prints under `AMDGPU Metadata:`.
fn readelf_metadata(path: &Path) -> Yaml {
    let out = run("llvm-readelf-22", &["--notes", path.to_str().unwrap()], &[]);
    let start = out
        .find("---\n")
        .expect("no metadata document in readelf output")
        + 4;
    let end = out[start..].find("\n...").map_or(out.len(), |e| start + e);
    let mut lines: Vec<(usize, String)> = out[start..end]
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| (l.len() - l.trim_start().len(), l.trim().to_string()))
        .collect();
    let mut i = 0;
    yaml_block(&mut lines, &mut i, 0)
}

/// `.amdhsa_*` directives per descriptor symbol, from llvm-objdump's
/// kernel descriptor disassembly.
fn objdump_descriptors(path: &Path, section: &str) -> BTreeMap<String, Vec<(String, u64)>> {
    let out = run(
        "llvm-objdump-22",
        &["-D", "-j", section, path.to_str().unwrap()],
        &[],
    );
    let mut map = BTreeMap::new();
    let mut cur: Option<String> = None;
    for line in out.lines() {
        if let Some(sym) = line
            .split_once(" <")
            .and_then(|(_, r)| r.strip_suffix(">:"))
        {
            cur = Some(sym.to_string());
            map.insert(sym.to_string(), Vec::new());
        } else if let (Some(c), Some((k, v))) = (
            &cur,
            line.trim()
                .strip_prefix(".amdhsa_")
                .and_then(|d| d.split_once(' '))
                .filter(|(k, _)| *k != "kernel"),
        ) {
            let v = v.trim();
            let n = v
                .strip_prefix("0x")
                .map_or_else(|| v.parse().ok(), |h| u64::from_str_radix(h, 16).ok())
                .unwrap_or_else(|| panic!("directive value {v}"));
            map.get_mut(c).unwrap().push((k.to_string(), n));
        }
    }
    map
}

fn vis_name(v: u8) -> &'static str {
    ["DEFAULT", "INTERNAL", "HIDDEN", "PROTECTED"][usize::from(v & 3)]
}

/// Compares headers, sections, symbols, metadata and descriptors of a
/// parsed code object with LLVM's tools; returns how many kernel
/// descriptors LLVM decoded and were compared.
pub(crate) fn check_against_llvm(path: &Path, co: &CodeObject) -> usize {
    let p = path.to_str().unwrap();
    let elf = co.elf();

    // File header: e_flags value and processor, ABI version.
    let h = run("llvm-readelf-22", &["-h", p], &[]);
    let flags_line = h.lines().find(|l| l.trim().starts_with("Flags:")).unwrap();
    let mut toks = flags_line
        .trim()
        .trim_start_matches("Flags:")
        .split(',')
        .map(str::trim);
    let hex = toks.next().unwrap().trim_start_matches("0x");
    assert_eq!(
        u32::from_str_radix(hex, 16).unwrap(),
        elf.header.flags,
        "{p}"
    );
    assert_eq!(Some(toks.next().unwrap()), co.flags().processor(), "{p}");
    let abi = h
        .lines()
        .find(|l| l.trim().starts_with("ABI Version:"))
        .unwrap();
    assert_eq!(
        abi.split(':').nth(1).unwrap().trim(),
        elf.header.abi_version.to_string(),
        "{p}"
    );

    // Section headers.
    let s = run("llvm-readelf-22", &["-S", "-W", p], &[]);
    let mut n = 0;
    for line in s.lines() {
        let Some((idx, rest)) = line
            .trim()
            .strip_prefix('[')
            .and_then(|l| l.split_once(']'))
        else {
            continue;
        };
        let Ok(idx) = idx.trim().parse::<usize>() else {
            continue;
        };
        if idx == 0 {
            continue;
        }
        let t: Vec<&str> = rest.split_whitespace().collect();
        let ours = &elf.sections[idx];
        assert_eq!(ours.name, t[0], "{p} section {idx}");
        assert_eq!(format!("{:016x}", ours.addr), t[2], "{p} {}", ours.name);
        assert_eq!(format!("{:06x}", ours.offset), t[3], "{p} {}", ours.name);
        assert_eq!(format!("{:06x}", ours.size), t[4], "{p} {}", ours.name);
        n += 1;
    }
    assert_eq!(n + 1, elf.sections.len(), "{p}: section count");

    // Symbols, table by table, entry by entry.
    let out = run("llvm-readelf-22", &["--symbols", "-W", p], &[]);
    let mut table = None;
    let mut checked = 0;
    for line in out.lines() {
        if line.starts_with("Symbol table '.dynsym'") {
            table = Some(SymbolTable::Dynsym);
            continue;
        }
        if line.starts_with("Symbol table '.symtab'") {
            table = Some(SymbolTable::Symtab);
            continue;
        }
        let t: Vec<&str> = line.split_whitespace().collect();
        let Some(idx) = t
            .first()
            .and_then(|x| x.strip_suffix(':'))
            .and_then(|x| x.parse::<u32>().ok())
        else {
            continue;
        };
        if idx == 0 {
            continue;
        }
        let sym = elf
            .symbols
            .iter()
            .find(|s| Some(s.table) == table && s.index == idx)
            .unwrap_or_else(|| panic!("{p}: no symbol {idx} in {table:?}"));
        let ndx = match sym.shndx {
            0 => "UND".to_string(),
            0xfff1 => "ABS".to_string(),
            n => n.to_string(),
        };
        let name = t.get(7).copied().unwrap_or("");
        assert_eq!(
            (
                format!("{:016x}", sym.value),
                sym.size.to_string(),
                sym.kind.readelf_name(),
                sym.binding.readelf_name(),
                vis_name(sym.visibility),
                ndx,
                sym.name.as_str()
            ),
            (
                t[1].to_string(),
                t[2].to_string(),
                t[3].to_string(),
                t[4].to_string(),
                t[5],
                t[6].to_string(),
                name
            ),
            "{p}: symbol {line}"
        );
        checked += 1;
    }
    assert_eq!(checked, elf.symbols.len(), "{p}: symbol count");

    // The whole metadata document.
    let md = co.metadata().expect("code object without metadata");
    let theirs = readelf_metadata(path);
    let Yaml::Map(top) = &theirs else {
        panic!("{p}: metadata is not a map: {theirs:?}")
    };
    assert!(
        matches!(top.get("amdhsa.kernels"), Some(Yaml::Seq(k)) if k.len() == co.kernels().len()),
        "{p}: {theirs:?}"
    );
    assert_eq!(to_yaml(&md.raw), theirs, "{p}: metadata");
    // clang writes the target ID of e_flags; other producers (Triton) may not.
    let clang_target = md
        .target
        .as_deref()
        .is_some_and(|t| t.starts_with("amdgcn-"));
    assert!(
        !clang_target
            || md.target.as_deref()
                == Some(format!("amdgcn-amd-amdhsa--{}", co.target_id()).as_str()),
        "{p}: {:?}",
        md.target
    );

    // Kernel descriptors: every directive LLVM prints has our value.
    let kd_section = &elf.sections[usize::from(
        elf.symbols
            .iter()
            .find(|s| s.name.ends_with(".kd"))
            .unwrap()
            .shndx,
    )]
    .name;
    let llvm = objdump_descriptors(path, kd_section);
    assert_eq!(llvm.len(), co.kernels().len(), "{p}: kernel count");
    let mut compared = 0;
    for k in co.kernels() {
        let ours: BTreeMap<&str, u64> = k.descriptor.directives(co.target()).into_iter().collect();
        let theirs = &llvm[&k.descriptor_symbol];
        // llvm-objdump declines some descriptors ("; error decoding X.kd:
        // kernel descriptor must be 64-byte aligned" for the last one of a
        // .rodata with trailing strings); those have no directives to compare.
        assert!(theirs.len() > 5 || theirs.is_empty(), "{p}: {theirs:?}");
        // `Descriptor::directives` reads the fields in their GFX9 layout (the
        // executed targets'); the GFX10+ fields of COMPUTE_PGM_RSRC1/3 (WGP
        // mode, memory ordering, forward progress, instruction prefetch) and
        // the wave32 VGPR granule are not modelled yet, so descriptors of
        // decode-only targets are not compared.
        if co.target().executes() {
            compared += usize::from(!theirs.is_empty());
            for (name, v) in theirs {
                assert_eq!(
                    ours.get(name.as_str()),
                    Some(v),
                    "{p}: {} .amdhsa_{name}",
                    k.name
                );
            }
        }
        // Metadata and descriptor agree, and the code is the kernel's symbol.
        let m = k.metadata.as_ref().expect("kernel without metadata");
        assert_eq!(m.name, k.name);
        assert_eq!(
            m.kernarg_segment_size,
            Some(u64::from(k.descriptor.kernarg_size))
        );
        assert_eq!(
            m.group_segment_fixed_size,
            Some(u64::from(k.descriptor.group_segment_fixed_size))
        );
        let f = elf
            .symbols
            .iter()
            .find(|s| s.name == k.name && s.kind == elf::SymbolType::Func)
            .unwrap();
        assert_eq!((k.entry, k.code_size), (f.value, f.size), "{p}: {}", k.name);
        assert!(
            co.functions()
                .iter()
                .any(|f| f.name == k.name && f.is_kernel)
        );
        assert_eq!(
            co.symbol_at(k.entry).map(|s| s.name.as_str()),
            Some(k.name.as_str())
        );
    }
    compared
}

/// The instructions of one function as llvm-objdump prints them.
fn objdump_function(path: &Path, name: &str) -> Vec<String> {
    let sym = format!("--disassemble-symbols={name}");
    run(
        "llvm-objdump-22",
        &["-d", &sym, path.to_str().unwrap()],
        &[],
    )
    .lines()
    .filter(|l| l.starts_with('\t'))
    .map(|l| l.split("//").next().unwrap_or("").trim().to_string())
    .collect()
}

/// `add` reads its arguments through the kernarg pointer and scales the
/// workgroup ID: the SGPRs its code uses are the ones the layout names.
fn check_add_sgprs(path: &Path, co: &CodeObject) {
    use crate::descriptor::SgprUse;
    let d = &co.kernel("add").unwrap().descriptor;
    let k = d.sgpr_of(SgprUse::KernargSegmentPtr).unwrap();
    let w = d.sgpr_of(SgprUse::WorkgroupIdX).unwrap();
    let code = objdump_function(path, "add");
    assert!(
        code[0].ends_with(&format!(", s[{k}:{}], 0x0", k + 1)),
        "{code:?}"
    );
    // The workgroup ID SGPR scaled and added to the X work-item ID in v0
    // (the destination register is the allocator's choice per target).
    let wg = format!(", s{w}, 6, v0");
    assert!(
        code.iter()
            .take(4)
            .any(|l| l.starts_with("v_lshl_add_u32 v") && l.ends_with(&wg)),
        "{wg}: {code:?}"
    );
    assert_eq!(
        d.workitem_ids_packed(co.target()),
        co.target() != Target::Gfx908
    );
}

#[test]
fn opencl_code_objects_match_llvm_for_all_targets_and_versions() {
    let dir = TempDir::new("cl");
    for target in Target::ALL {
        for cov in [4, 5, 6] {
            let path = compile_cl(&dir, KERNELS_CL, target.name(), cov, &[]);
            let bytes = fs::read(&path).unwrap();
            let co = CodeObject::parse(path.to_str().unwrap(), bytes.clone()).unwrap();
            assert_eq!(co.target(), target);
            assert_eq!(co.code_object_version(), cov);
            assert_eq!(check_against_llvm(&path, &co), 3);
            check_add_sgprs(&path, &co);

            let names: Vec<&str> = co.kernels().iter().map(|k| k.name.as_str()).collect();
            assert_eq!(names, ["add", "lds", "empty"]);
            let add = co.kernel("add").unwrap();
            let kinds: Vec<&ValueKind> = add
                .metadata
                .as_ref()
                .unwrap()
                .args
                .iter()
                .map(|a| &a.value_kind)
                .collect();
            assert_eq!(
                &kinds[..4],
                [
                    &ValueKind::GlobalBuffer,
                    &ValueKind::GlobalBuffer,
                    &ValueKind::ByValue,
                    &ValueKind::DynamicSharedPointer
                ]
            );
            assert_eq!(
                co.kernel("lds")
                    .unwrap()
                    .descriptor
                    .group_segment_fixed_size,
                1024
            );
            // Kernels serialize for JSON output.
            let j = serde_json::to_value(add).unwrap();
            assert_eq!(j["descriptor"]["kernarg_size"], 24);
            assert_eq!(
                j["metadata"]["args"][3]["value_kind"],
                "dynamic_shared_pointer"
            );
            assert_eq!(j["metadata"]["raw"][".name"], "add");
            // The callee is a function but not a kernel, and functions are sorted.
            let helper = co.functions().iter().find(|f| f.name == "helper").unwrap();
            assert!(!helper.is_kernel);
            assert!(
                co.functions()
                    .windows(2)
                    .all(|w| w[0].address <= w[1].address)
            );
            let text = co.text().unwrap();
            assert!(text.bytes.len() as u64 >= add.code_size);
            assert!(add.code_range().start >= text.address);
            assert!(add.code_range().end <= text.address + text.bytes.len() as u64);
            assert_eq!(co.function_at(add.entry + 4).unwrap().name, "add");
            // Reading by address: the descriptor and the first code bytes.
            let kd = co.bytes_at(add.descriptor_address, 64).unwrap();
            assert_eq!(kd, add.descriptor.to_bytes());
            let off = (add.entry - text.address) as usize;
            assert_eq!(
                co.bytes_at(add.entry, 8).unwrap(),
                &text.bytes[off..off + 8]
            );
            let kd_sym = co
                .elf()
                .symbols
                .iter()
                .find(|s| s.name == "add.kd")
                .unwrap();
            assert_eq!(co.elf().symbol_section(kd_sym).unwrap().name, ".rodata");

            // A bare code object is a container of one.
            let c = Container::parse("k.hsaco", &bytes).unwrap();
            assert_eq!(c.kind, ContainerKind::CodeObject);
            assert_eq!(c.select(target).unwrap().kernels().len(), 3);
        }
    }
}

#[test]
fn kernarg_preload_matches_llvm() {
    let dir = TempDir::new("preload");
    for target in [Target::Gfx90a, Target::Gfx942, Target::Gfx950] {
        let path = compile_cl(
            &dir,
            KERNELS_CL,
            target.name(),
            5,
            &["-mllvm", "-amdgpu-kernarg-preload-count=2"],
        );
        let co = CodeObject::parse(path.to_str().unwrap(), fs::read(&path).unwrap()).unwrap();
        assert!(check_against_llvm(&path, &co) > 0);
        let kd = &co.kernel("lds").unwrap().descriptor;
        // Pointer (2 SGPRs) and int (1 SGPR).
        assert_eq!(kd.kernarg_preload_spec_length, 3, "{target}");
        // The kernel's compatibility prologue loads the preloaded SGPRs from
        // the kernarg segment.
        use crate::descriptor::SgprUse;
        let k = kd.sgpr_of(SgprUse::KernargSegmentPtr).unwrap();
        let p = kd.sgpr_of(SgprUse::PreloadedKernargs).unwrap();
        let code = objdump_function(&path, "lds");
        assert_eq!(
            code[0],
            format!("s_load_dwordx2 s[{p}:{}], s[{k}:{}], 0x0", p + 1, k + 1),
            "{target}"
        );
        assert_eq!(
            kd.user_sgpr_count(),
            kd.kernel_code_properties.user_sgprs() + kd.kernarg_preload_spec_length,
            "{target}"
        );
    }
}

#[test]
fn hip_fat_binaries_and_bundles_match_the_bundler() {
    let dir = TempDir::new("hip");
    let src = dir.path("h.hip");
    fs::write(
        &src,
        r#"
typedef struct { unsigned x, y, z; } dim3;
extern "C" int hipLaunchKernel(const void*, dim3, dim3, void**, unsigned long, void*);
extern "C" __attribute__((global)) void scale(float *a, float s) { a[__builtin_amdgcn_workitem_id_x()] *= s; }
extern __attribute__((shared)) float dyn[];
extern "C" __attribute__((global)) void dynlds(float *a) {
  dyn[__builtin_amdgcn_workitem_id_x()] = 1;
  a[0] = dyn[1] + ((int *)__builtin_amdgcn_implicitarg_ptr())[0];
}
"#,
    )
    .unwrap();
    let s = src.to_str().unwrap();
    let base = [
        "-x",
        "hip",
        "--offload-arch=gfx90a",
        "--offload-arch=gfx942",
        "-nogpulib",
        "-nogpuinc",
        "-O2",
    ];
    let mut cases: Vec<(PathBuf, ContainerKind)> = Vec::new();
    for (out, extra, kind, env) in [
        ("h.o", &["-c"][..], ContainerKind::HipFatBinary, None),
        (
            "hc.o",
            &["-c", "--offload-compress"][..],
            ContainerKind::HipFatBinary,
            None,
        ),
        (
            "h.bundle",
            &["--cuda-device-only"][..],
            ContainerKind::OffloadBundle,
            None,
        ),
        (
            "hc2.bundle",
            &["--cuda-device-only", "--offload-compress"][..],
            ContainerKind::CompressedBundle,
            Some("2"),
        ),
        (
            "hc3.bundle",
            &["--cuda-device-only", "--offload-compress"][..],
            ContainerKind::CompressedBundle,
            Some("3"),
        ),
    ] {
        let o = dir.path(out);
        let mut args: Vec<&str> = base.to_vec();
        args.extend_from_slice(extra);
        args.extend_from_slice(&[s, "-o", o.to_str().unwrap()]);
        let env: Vec<(&str, &str)> = env
            .map(|v| vec![("COMPRESSED_BUNDLE_FORMAT_VERSION", v)])
            .unwrap_or_default();
        run("clang++-22", &args, &env);
        cases.push((o, kind));
    }
    for (path, kind) in cases {
        let p = path.to_str().unwrap();
        let bytes = fs::read(&path).unwrap();
        let c = Container::parse(p, &bytes).unwrap();
        assert_eq!(c.kind, kind, "{p}");
        // The bundler lists the same entries; for a host object, list the
        // bundle in its .hip_fatbin section.
        let bundle = if kind == ContainerKind::HipFatBinary {
            let fb = dir.path("fatbin.bin");
            run(
                "llvm-objcopy-22",
                &[
                    "--dump-section",
                    &format!(".hip_fatbin={}", fb.to_str().unwrap()),
                    p,
                    "/dev/null",
                ],
                &[],
            );
            fb
        } else {
            path.clone()
        };
        let b = bundle.to_str().unwrap();
        let listed = run(
            "clang-offload-bundler-22",
            &["--list", "--type=o", &format!("--input={b}")],
            &[],
        );
        let mut theirs: Vec<&str> = listed.lines().collect();
        let mut ours: Vec<&str> = c.entries.iter().map(|e| e.id.id.as_str()).collect();
        theirs.sort();
        ours.sort();
        assert_eq!(ours, theirs, "{p}");
        assert_eq!(c.targets(), ["gfx90a", "gfx942"], "{p}");
        for target in [Target::Gfx90a, Target::Gfx942] {
            let id = format!("hipv4-amdgcn-amd-amdhsa--{}", target.name());
            let x = dir.path("x.co");
            run(
                "clang-offload-bundler-22",
                &[
                    "--unbundle",
                    "--type=o",
                    &format!("--input={b}"),
                    &format!("--targets={id}"),
                    &format!("--output={}", x.to_str().unwrap()),
                ],
                &[],
            );
            let entry = c.code_objects().find(|e| e.id.id == id).unwrap();
            assert_eq!(entry.bytes, fs::read(&x).unwrap(), "{p}: {id}");
            let co = c.select(target).unwrap();
            assert_eq!(co.target(), target);
            assert_eq!(c.select_id(target.name()).unwrap().bytes(), co.bytes());
            assert!(check_against_llvm(&x, &co) > 0);
            let dynlds = co.kernel("dynlds").unwrap().metadata.clone().unwrap();
            // One explicit argument, then the code object v5 hidden ones.
            assert_eq!(dynlds.explicit_args().count(), 1);
            let kinds: Vec<&ValueKind> = dynlds.args.iter().map(|a| &a.value_kind).collect();
            assert_eq!(kinds[1], &ValueKind::HiddenBlockCountX, "{p}");
            assert_eq!(kinds.last(), Some(&&ValueKind::HiddenDynamicLdsSize), "{p}");
            assert!(
                !kinds.iter().any(|k| matches!(k, ValueKind::Other(_))),
                "{p}: {kinds:?}"
            );
        }
        let e = c.select(Target::Gfx950).unwrap_err();
        assert_eq!(
            e.kind,
            ErrorKind::NoMatchingTarget {
                wanted: "gfx950".into(),
                available: vec!["gfx90a".into(), "gfx942".into()]
            }
        );
        assert!(e.to_string().contains("available: gfx90a, gfx942"), "{e}");
    }
}

#[test]
fn unknown_targets_and_wrong_machines_are_named() {
    let dir = TempDir::new("unknown");
    let path = compile_cl(&dir, KERNELS_CL, "gfx1102", 5, &[]);
    let p = path.to_str().unwrap();
    let e = CodeObject::parse(p, fs::read(&path).unwrap()).unwrap_err();
    assert_eq!(
        e.kind,
        ErrorKind::UnknownTarget {
            mach: 0x47,
            name: Some("gfx1102")
        }
    );
    assert!(e.to_string().starts_with(p), "{e}");
    assert!(
        e.to_string().contains("EF_AMDGPU_MACH 0x047 (gfx1102)"),
        "{e}"
    );

    // The xnack/sramecc bits of a v4+ target ID.
    let path = compile_cl(&dir, KERNELS_CL, "gfx90a:xnack+:sramecc-", 5, &[]);
    let co = CodeObject::parse("x", fs::read(&path).unwrap()).unwrap();
    assert_eq!(co.flags().xnack, FeatureState::On);
    assert_eq!(co.flags().sramecc, FeatureState::Off);
    assert_eq!(co.target_id(), "gfx90a:sramecc-:xnack+");
    assert!(check_against_llvm(&path, &co) > 0);

    // A host object without a fat binary.
    let host = dir.path("host.o");
    fs::write(dir.path("h.c"), "int f(void) { return 1; }").unwrap();
    run(
        "clang-22",
        &[
            "-c",
            dir.path("h.c").to_str().unwrap(),
            "-o",
            host.to_str().unwrap(),
        ],
        &[],
    );
    let bytes = fs::read(&host).unwrap();
    let e = CodeObject::parse("host.o", bytes.clone()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::WrongMachine(62));
    assert_eq!(e.offset, 18);
    let e = Container::parse("host.o", &bytes).unwrap_err();
    assert!(
        e.to_string().contains("without a .hip_fatbin section"),
        "{e}"
    );
}

#[test]
fn generic_targets_carry_their_version() {
    let dir = TempDir::new("generic");
    let path = compile_cl(&dir, KERNELS_CL, "gfx9-4-generic", 6, &[]);
    let bytes = fs::read(&path).unwrap();
    let e = CodeObject::parse("g", bytes.clone()).unwrap_err();
    assert_eq!(
        e.kind,
        ErrorKind::UnknownTarget {
            mach: 0x5f,
            name: Some("gfx9-4-generic")
        }
    );
    let elf = elf::Elf::parse("g", &bytes).unwrap();
    assert!(elf.amdgpu_flags().generic_version >= 1);
    let h = run("llvm-readelf-22", &["-h", path.to_str().unwrap()], &[]);
    assert!(
        h.contains(&format!("generic_v{}", elf.amdgpu_flags().generic_version)),
        "{h}"
    );
}

/// A deterministic xorshift64* generator for the mutation test.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Calls every accessor of everything a container holds, as a disassembler
/// or loader would.
pub(crate) fn exercise(name: &str, bytes: &[u8]) -> Result<usize> {
    let c = Container::parse(name, bytes)?;
    let _ = c.targets();
    let mut n = 0;
    for e in c.code_objects() {
        let co = match CodeObject::parse(&e.name, e.bytes.clone()) {
            Ok(co) => co,
            Err(err) => {
                assert!(err.to_string().starts_with(&e.name), "{err}");
                continue;
            }
        };
        for k in co.kernels() {
            let _ = k.descriptor.directives(co.target());
            let _ = (
                k.descriptor.vgpr_count(co.target()),
                k.descriptor.sgpr_count(co.target()),
            );
            let _ = (k.descriptor.to_bytes(), k.descriptor.system_sgpr_count());
            let _ = (
                co.symbol_at(k.entry),
                co.function_at(k.entry),
                k.code_range(),
            );
            n += 1;
        }
        for f in co.functions() {
            let _ = co.symbol_at(f.address.wrapping_add(f.size / 2));
            let _ = co.bytes_at(f.address, f.size);
        }
        if let Some(t) = co.text() {
            let _ = co.symbol_at(t.address);
        }
        for s in &co.elf().sections {
            let _ = co.section_data(s);
        }
        let _ = (co.target_id(), co.metadata(), co.symbol_at(u64::MAX));
    }
    for t in Target::ALL {
        let _ = c.select(t);
    }
    Ok(n)
}

#[test]
fn mutated_and_truncated_inputs_give_located_errors_not_panics() {
    let dir = TempDir::new("mutate");
    let co_path = compile_cl(&dir, KERNELS_CL, "gfx942", 5, &[]);
    let co = fs::read(&co_path).unwrap();
    let stripped = dir.path("s.hsaco");
    run(
        "llvm-objcopy-22",
        &[
            "--strip-sections",
            co_path.to_str().unwrap(),
            stripped.to_str().unwrap(),
        ],
        &[],
    );
    let src = dir.path("m.hip");
    fs::write(
        &src,
        format!(
            "{HIP_PRELUDE}extern \"C\" __attribute__((global)) void k(float *a) {{ a[0] = 1; }}"
        ),
    )
    .unwrap();
    let bundle = dir.path("m.bundle");
    let host = dir.path("m.o");
    let ccob = dir.path("m.ccob");
    let args = [
        "-x",
        "hip",
        "--offload-arch=gfx90a",
        "-nogpulib",
        "-nogpuinc",
        "-O2",
        "--cuda-device-only",
        src.to_str().unwrap(),
        "-o",
    ];
    let mut a = args.to_vec();
    a.push(bundle.to_str().unwrap());
    run("clang++-22", &a, &[]);
    let mut a = args.to_vec();
    a.insert(0, "--offload-compress");
    a.push(ccob.to_str().unwrap());
    run("clang++-22", &a, &[]);
    let mut a = args.to_vec();
    a[6] = "-c";
    a.push(host.to_str().unwrap());
    run("clang++-22", &a, &[]);
    let samples = [
        ("k.hsaco", co, 3000),
        ("s.hsaco", fs::read(&stripped).unwrap(), 1500),
        ("m.bundle", fs::read(&bundle).unwrap(), 1500),
        ("m.ccob", fs::read(&ccob).unwrap(), 300),
        ("m.o", fs::read(&host).unwrap(), 1500),
    ];
    // ROCJITSU_MUTATIONS=N runs N times as many cases (and another seed).
    let scale: usize = std::env::var("ROCJITSU_MUTATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ scale as u64);
    let mut errors = 0;
    for (name, orig, cases) in &samples {
        assert!(exercise(name, orig).unwrap() > 0, "{name}");
        for case in 0..*cases * scale {
            let mut b = orig.clone();
            match case % 4 {
                // Truncation anywhere.
                0 => b.truncate(rng.below(orig.len())),
                // A few random bytes anywhere.
                1 => {
                    for _ in 0..1 + rng.below(8) {
                        let i = rng.below(b.len());
                        b[i] = rng.next() as u8;
                    }
                }
                // A header field (ELF/bundle headers, first 256 bytes) set
                // to an extreme value.
                2 => {
                    let i = rng.below(256.min(b.len() - 8));
                    let v = [u64::MAX, 0, 1 << 63, rng.next(), 0xffff][rng.below(5)];
                    let w = [2usize, 4, 8][rng.below(3)];
                    b[i..i + w].copy_from_slice(&v.to_le_bytes()[..w]);
                }
                // A word in the tail (section headers, string and symbol
                // tables of an ELF) set to an extreme value.
                _ => {
                    let lo = b.len() / 2;
                    let i = lo + rng.below(b.len() - lo - 8);
                    let v = [u64::MAX, 0, u64::from(u32::MAX), rng.next()][rng.below(4)];
                    b[i..i + 8].copy_from_slice(&v.to_le_bytes());
                }
            }
            if let Err(e) = exercise(name, &b) {
                errors += 1;
                let text = e.to_string();
                assert!(text.starts_with(name), "{text}");
                assert!(text.contains("at byte offset 0x"), "{text}");
                if case % 4 == 0 && b.len() < 16 {
                    assert!(
                        matches!(
                            e.kind,
                            ErrorKind::Truncated { .. } | ErrorKind::UnknownFormat
                        ),
                        "{text}"
                    );
                }
            }
        }
    }
    // Most mutations must be detected somewhere.
    assert!(errors > 1000, "only {errors} errors");
}

#[test]
fn relocatable_code_objects_match_llvm() {
    let dir = TempDir::new("rel");
    for target in Target::ALL {
        let path = compile_cl(&dir, KERNELS_CL, target.name(), 6, &["-c"]);
        let co = CodeObject::parse(path.to_str().unwrap(), fs::read(&path).unwrap()).unwrap();
        assert!(co.elf().header.is_relocatable());
        assert_eq!(co.text().unwrap().address, 0);
        assert!(check_against_llvm(&path, &co) > 0);
    }
}

#[test]
fn linked_fat_binaries_hold_one_bundle_per_translation_unit() {
    let dir = TempDir::new("link");
    let mut objs = Vec::new();
    for (i, name) in ["first", "second"].iter().enumerate() {
        let src = dir.path(&format!("{name}.hip"));
        fs::write(
            &src,
            format!("{HIP_PRELUDE}extern \"C\" __attribute__((global)) void {name}(float *a) {{ a[0] = {i}; }}"),
        )
        .unwrap();
        let obj = dir.path(&format!("{name}.o"));
        run(
            "clang++-22",
            &[
                "-x",
                "hip",
                "--offload-arch=gfx90a",
                "--offload-arch=gfx950",
                "-nogpulib",
                "-nogpuinc",
                "-O2",
                "-fPIC",
                "-c",
                src.to_str().unwrap(),
                "-o",
                obj.to_str().unwrap(),
            ],
            &[],
        );
        objs.push(obj);
    }
    let so = dir.path("lib.so");
    let (a, b) = (objs[0].to_str().unwrap(), objs[1].to_str().unwrap());
    run(
        "clang++-22",
        &["-shared", "-nostdlib", a, b, "-o", so.to_str().unwrap()],
        &[],
    );
    let c = Container::parse("lib.so", &fs::read(&so).unwrap()).unwrap();
    assert_eq!(c.kind, ContainerKind::HipFatBinary);
    assert_eq!(c.entries.len(), 6);
    assert_eq!(c.targets(), ["gfx90a", "gfx950"]);
    // Bundles start at 4096-byte boundaries of the section, where the
    // runtime's wrappers point.
    assert!(
        c.entries
            .iter()
            .all(|e| e.bundle_offset % FATBIN_ALIGN_TEST == 0)
    );
    let elf = elf::Elf::parse_any("lib.so", &fs::read(&so).unwrap()).unwrap();
    let fatbin = elf.section(".hip_fatbin").unwrap();
    let mut starts: Vec<u64> = c
        .entries
        .iter()
        .map(|e| e.bundle_offset - fatbin.offset + fatbin.addr)
        .collect();
    starts.dedup();
    assert_eq!(c.wrappers.len(), 2);
    assert!(
        c.wrappers
            .iter()
            .all(|w| w.magic == crate::bundle::HIP_FATBIN_WRAPPER_MAGIC && w.version == 1)
    );
    let pointed: Vec<u64> = c.wrappers.iter().map(|w| w.binary).collect();
    assert_eq!(pointed, starts);
    for target in [Target::Gfx90a, Target::Gfx950] {
        let all = c.select_all(target).unwrap();
        let names: Vec<&str> = all.iter().map(|co| co.kernels()[0].name.as_str()).collect();
        assert_eq!(names, ["first", "second"]);
        for (i, co) in all.iter().enumerate() {
            let x = dir.path(&format!("{target}-{i}.co"));
            fs::write(&x, co.bytes()).unwrap();
            assert!(check_against_llvm(&x, co) > 0);
        }
    }
}

const FATBIN_ALIGN_TEST: u64 = crate::bundle::FATBIN_ALIGN;

/// Host-side declaration a HIP kernel launch stub needs without HIP headers.
const HIP_PRELUDE: &str = "typedef struct { unsigned x, y, z; } dim3;\n\
    extern \"C\" int hipLaunchKernel(const void*, dim3, dim3, void**, unsigned long, void*);\n";

/// Every code object of the kernel corpus (`make corpus` builds
/// `build/corpus/<target>/*.hsaco`: OpenCL, HIP and Triton kernels) against
/// LLVM's tools. Set ROCJITSU_CORPUS to read another directory.
#[test]
fn corpus_code_objects_match_llvm() {
    let root = std::env::var("ROCJITSU_CORPUS").map_or_else(
        |_| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../build/corpus"),
        PathBuf::from,
    );
    let mut files = Vec::new();
    let mut dirs = vec![root.clone()];
    while let Some(d) = dirs.pop() {
        let entries =
            fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}: run make corpus", d.display()));
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "hsaco") {
                files.push(p);
            }
        }
    }
    files.sort();
    assert!(!files.is_empty(), "no .hsaco under {}", root.display());
    let (mut kernels, mut descriptors, mut compared_kernels) = (0, 0, 0);
    for f in &files {
        let co = CodeObject::parse(f.to_str().unwrap(), fs::read(f).unwrap()).unwrap();
        descriptors += check_against_llvm(f, &co);
        kernels += co.kernels().len();
        if co.target().executes() {
            compared_kernels += co.kernels().len();
        }
    }
    eprintln!(
        "{} code objects, {kernels} kernels match LLVM ({descriptors} descriptors of the {compared_kernels} on executed targets that llvm-objdump decodes)",
        files.len()
    );
    assert!(
        descriptors * 10 >= compared_kernels * 9,
        "{descriptors} of {compared_kernels}"
    );
}

#[test]
fn stripped_code_objects_keep_their_kernels() {
    let dir = TempDir::new("strip");
    for target in Target::ALL {
        let path = compile_cl(&dir, KERNELS_CL, target.name(), 5, &[]);
        let full = CodeObject::parse("full", fs::read(&path).unwrap()).unwrap();
        let p = path.to_str().unwrap();
        // llvm-strip drops .symtab (local helper functions) but keeps .dynsym;
        // --strip-sections drops the section headers: symbols then come from
        // PT_DYNAMIC and the metadata from PT_NOTE, as a loader reads them.
        for (tool, args) in [
            ("llvm-strip-22", vec![]),
            ("llvm-objcopy-22", vec!["--strip-sections"]),
        ] {
            let out = dir.path("stripped.hsaco");
            let mut a: Vec<&str> = args.clone();
            if args.is_empty() {
                a.extend_from_slice(&[p, "-o", out.to_str().unwrap()]);
            } else {
                a.extend_from_slice(&[p, out.to_str().unwrap()]);
            }
            run(tool, &a, &[]);
            let co = CodeObject::parse("stripped", fs::read(&out).unwrap()).unwrap();
            if args.is_empty() {
                assert!(!co.elf().symbols.is_empty());
            } else {
                assert!(co.elf().sections.is_empty());
            }
            let strip = |ks: &[Kernel]| {
                ks.iter()
                    .map(|k| {
                        (
                            k.name.clone(),
                            k.entry,
                            k.code_size,
                            k.descriptor,
                            k.metadata.clone(),
                        )
                    })
                    .collect::<Vec<_>>()
            };
            assert_eq!(
                strip(co.kernels()),
                strip(full.kernels()),
                "{target} {tool}"
            );
            assert_eq!(co.metadata(), full.metadata());
            let (t, f) = (co.text().unwrap(), full.text().unwrap());
            assert_eq!(
                (t.address, t.bytes),
                (f.address, f.bytes),
                "{target} {tool}"
            );
            assert!(co.functions().iter().all(|f| f.name != "helper"));
        }
    }
}
