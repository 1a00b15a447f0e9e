//! `rocjitsu disasm`: LLVM-syntax disassembly of code objects and raw bytes.

use crate::objdump;
use anyhow::{Context, Result, bail};
use rocjitsu_isa::{Instruction, Target, True16, WaveSize};
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
#[command(
    after_help = "Output: what `llvm-objdump-22 -d FILE` prints (LLVM 22 syntax; address and \
    encoding in a `//` comment; branch targets as <symbol+offset>). Without --mcpu, every code \
    object of a bundle or HIP fat binary is listed in turn, after a `; code object N of M` line.\n\n\
    RDNA code (gfx1010 to gfx1201) is decoded in the wave size its kernels declare (their \
    descriptors' wave32 bit): llvm-objdump assumes wave32 there, so the listing of a wave64 code \
    object is what `llvm-objdump-22 -d --mattr=+wavefrontsize64` prints. --wave32/--wave64 \
    override it; with --hex the default is wave32 for RDNA targets.\n\n\
    gfx1201's 16-bit operands print as LLVM 22 prints them by default (fake-16-bit: v5, v0-v127); \
    --real-true16 prints them as `llvm-objdump-22 -d --mattr=+real-true16` does (v5.l, v5.h), \
    the reading Triton's gfx1201 code needs and the one the emulator executes.\n\n\
    Examples:\n  \
    rocjitsu disasm kernel.hsaco                  # like llvm-objdump -d kernel.hsaco\n  \
    rocjitsu disasm --list-targets app.o          # the GPUs a HIP object was built for\n  \
    rocjitsu disasm --mcpu gfx942 app.o           # its MI300X code\n  \
    rocjitsu disasm --mcpu gfx942 --kernel saxpy --json app.o\n  \
    echo '0x00 0x00 0x80 0xbf' | rocjitsu disasm --mcpu gfx942 --hex   # s_nop 0\n  \
    echo '0x6a 0x00 0x02 0x7c' | rocjitsu disasm --mcpu gfx1100 --wave64 --hex   # v_cmp_class_f32_e32 vcc, ..."
)]
pub struct Args {
    /// Code object, clang offload bundle, or executable with a .hip_fatbin section
    file: Option<PathBuf>,
    /// Target processor (gfx90a, gfx942, gfx950, gfx1100, gfx1151); required with
    /// --hex, picks the code object of a bundle otherwise
    #[arg(long, value_name = "CPU")]
    mcpu: Option<String>,
    /// Read hex bytes (`0x01 0x05 ...`, as `llvm-mc --disassemble` does) from stdin
    #[arg(long)]
    hex: bool,
    /// Only disassemble this kernel (or function symbol), up to its symbol size
    #[arg(long, value_name = "NAME")]
    kernel: Option<String>,
    /// Print one JSON object per instruction
    #[arg(long)]
    json: bool,
    /// Decode RDNA code for 32-lane waves (VCC and EXEC as vcc_lo, exec_lo)
    #[arg(long, conflicts_with = "wave64")]
    wave32: bool,
    /// Decode RDNA code for 64-lane waves (VCC and EXEC as 64-bit pairs)
    #[arg(long)]
    wave64: bool,
    /// Decode gfx1201's 16-bit operands as VGPR halves (`v1.h`), as LLVM's
    /// `--mattr=+real-true16` does
    #[arg(long)]
    real_true16: bool,
    /// List the code objects in FILE (target ID, bundle entry, kernels) and exit
    #[arg(long)]
    list_targets: bool,
    /// Accepted for llvm-objdump compatibility (AMDGPU prints encodings as a comment)
    #[arg(long)]
    no_show_raw_insn: bool,
    /// Do not print addresses before symbol labels
    #[arg(long)]
    no_leading_addr: bool,
}

pub fn run(a: Args) -> Result<ExitCode> {
    let target = parse_mcpu(a.mcpu.as_deref())?;
    let t16 = if a.real_true16 {
        True16::Real
    } else {
        True16::LlvmDefault
    };
    let wave = match (a.wave32, a.wave64) {
        (true, _) => Some(WaveSize::Wave32),
        (_, true) => Some(WaveSize::Wave64),
        _ => None,
    };
    if let Some(t) = target
        && !t.decodes()
    {
        bail!(
            "--mcpu {t}: {t} machine code is not disassembled yet; rocjitsu disassembles {}",
            decoded_targets()
        );
    }
    if a.hex {
        let Some(target) = target else {
            bail!("--hex needs --mcpu ({})", decoded_targets());
        };
        if wave == Some(WaveSize::Wave32) && target.wave_size() == 64 {
            bail!("--wave32: {target} runs 64-lane waves only; drop --wave32");
        }
        let wave = wave.unwrap_or(WaveSize::default_for(target));
        if a.file.is_some() {
            bail!("--hex reads bytes from stdin; do not also name a file");
        }
        let bytes = read_hex(std::io::stdin().lock())?;
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::new(stdout.lock());
        for line in rocjitsu_isa::disassemble_with(target, wave, t16, &bytes) {
            let raw = &bytes[line.offset..line.offset + line.len];
            if a.json {
                writeln!(
                    out,
                    "{}",
                    json_line(line.offset as u64, raw, line.inst.as_ref())
                )?;
            } else {
                match &line.inst {
                    Some(inst) => writeln!(out, "\t{inst}")?,
                    None => writeln!(out, "\t<invalid>")?,
                }
            }
        }
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    let Some(file) = a.file else {
        bail!(
            "name a code object to disassemble, or use --hex with --mcpu to read bytes from stdin"
        );
    };
    let opts = objdump::Options {
        no_leading_addr: a.no_leading_addr,
        only: a.kernel.clone(),
        json: a.json,
        wave,
        t16,
    };
    if a.list_targets {
        list_targets(&file)?;
    } else {
        disasm_file(&file, target, &opts)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The target named by `--mcpu`, if any.
pub(crate) fn parse_mcpu(mcpu: Option<&str>) -> Result<Option<Target>> {
    mcpu.map(str::parse::<Target>).transpose().context("--mcpu")
}

/// What to do about a code-object error, appended to its message.
fn hint(e: &rocjitsu_code::Error) -> &'static str {
    use rocjitsu_code::ErrorKind as K;
    match &e.kind {
        K::UnknownTarget { .. } => {
            "; rocjitsu disassembles gfx90a, gfx942, gfx950, gfx1100 and gfx1151 code objects: \
             recompile with --offload-arch set to one of them"
        }
        K::WrongMachine(_) => "; this is not AMDGPU code: pass an AMDGPU code object (.hsaco)",
        K::UnknownFormat => {
            "; pass an AMDGPU code object (.hsaco), a clang offload bundle, or a HIP \
             object/executable with a .hip_fatbin section"
        }
        K::Invalid { what, .. } if *what == "HIP fat binary" => {
            "; compile the file with clang -x hip --offload-arch=... to embed device code"
        }
        K::Truncated { .. } | K::OutOfBounds { .. } => {
            "; the file is truncated or corrupt: rebuild it or copy it again"
        }
        K::NoMatchingTarget { .. } => "; pass one of the available targets to --mcpu",
        _ => "",
    }
}

pub(crate) fn code_err(e: rocjitsu_code::Error) -> anyhow::Error {
    let h = hint(&e);
    anyhow::anyhow!("{e}{h}")
}

/// Prints one line per embedded code object: target ID, bundle entry and
/// kernels (or why it cannot be read).
fn list_targets(file: &std::path::Path) -> Result<()> {
    use rocjitsu_code::{CodeObject, Container};
    let name = file.display().to_string();
    let bytes = std::fs::read(file).with_context(|| format!("cannot read {name}"))?;
    let container = Container::parse(&name, &bytes).map_err(code_err)?;
    let mut out = std::io::stdout().lock();
    for e in container.code_objects() {
        let what = match CodeObject::parse(&e.name, e.bytes.clone()) {
            Ok(co) => {
                let k: Vec<&str> = co.kernels().iter().map(|k| k.name.as_str()).collect();
                format!("kernels: {}", k.join(", "))
            }
            Err(err) => format!("not readable: {}", err.kind),
        };
        writeln!(out, "{:<24} {:<40} {what}", e.id.target_id, e.id.id)?;
    }
    Ok(())
}

/// Disassembles every selected code object of `file`.
fn disasm_file(
    file: &std::path::Path,
    target: Option<Target>,
    opts: &objdump::Options,
) -> Result<()> {
    use rocjitsu_code::{CodeObject, Container, ContainerKind};
    let name = file.display().to_string();
    let bytes = std::fs::read(file).with_context(|| format!("cannot read {name}"))?;
    let container = Container::parse(&name, &bytes).map_err(code_err)?;
    let bare = container.kind == ContainerKind::CodeObject;
    let entries: Vec<_> = container.code_objects().collect();
    if entries.is_empty() {
        bail!(
            "{name}: contains no AMDGPU code object (entries: {}); compile with \
             --offload-arch set to one of {}",
            container
                .entries
                .iter()
                .map(|e| e.id.id.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            decoded_targets()
        );
    }
    let chosen: Vec<_> = match target {
        Some(t) => {
            let v: Vec<_> = entries
                .iter()
                .filter(|e| e.id.processor() == t.name())
                .collect();
            if v.is_empty() {
                bail!(
                    "{name}: no code object for --mcpu {}; available targets: {}",
                    t.name(),
                    container.targets().join(", ")
                );
            }
            v
        }
        None => entries.iter().collect(),
    };
    // With --kernel the listing is held back until the symbol is known to
    // exist, so that a wrong name prints only the error.
    let stdout = std::io::stdout();
    let mut direct = std::io::BufWriter::new(stdout.lock());
    let mut held: Vec<u8> = Vec::new();
    let out: &mut dyn Write = if opts.only.is_some() {
        &mut held
    } else {
        &mut direct
    };
    let total = chosen.len();
    let mut found = false;
    let mut labels = Vec::new();
    let mut skipped = Vec::new();
    for (k, e) in chosen.into_iter().enumerate() {
        let co = match CodeObject::parse(&e.name, e.bytes.clone()) {
            Ok(co) => co,
            Err(err) => {
                let unknown = matches!(err.kind, rocjitsu_code::ErrorKind::UnknownTarget { .. });
                if bare || target.is_some() || !unknown {
                    return Err(code_err(err));
                }
                skipped.push(e.id.target_id.clone());
                continue;
            }
        };
        if !co.target().decodes() {
            if bare || target.is_some() {
                bail!(
                    "{}: {} machine code is not disassembled yet; rocjitsu disassembles {} code \
                     objects",
                    e.name,
                    co.target(),
                    decoded_targets()
                );
            }
            skipped.push(e.id.target_id.clone());
            continue;
        }
        if !co.elf().sections.iter().any(objdump::is_code) {
            bail!(
                "{}: section headers at byte offset 0x{:x}: no executable section (.text) to \
                 disassemble; the code object holds no code: pass the linked code object \
                 (clang -o k.hsaco) that contains the kernels",
                e.name,
                co.elf().header.shoff
            );
        }
        // Each code object is listed into a buffer first: with --kernel,
        // the objects without that symbol are left out entirely.
        let mut listing: Vec<u8> = Vec::new();
        let display = if bare {
            name.clone()
        } else {
            if !opts.json {
                writeln!(
                    listing,
                    "; code object {} of {total} in {name}: target {} (bundle entry {})",
                    k + 1,
                    co.target_id(),
                    e.id.id
                )?;
            }
            format!("{name}:{}", co.target_id())
        };
        let printed = objdump::write_object(&mut listing, &display, &co, opts)?;
        found |= printed.symbols > 0;
        labels.extend(printed.labels);
        if opts.only.is_none() || printed.symbols > 0 {
            out.write_all(&listing)?;
        }
    }
    out.flush()?;
    for t in &skipped {
        eprintln!("rocjitsu: warning: {name}: skipped the {t} code object (unsupported target)");
    }
    if skipped.len() == total {
        bail!(
            "{name}: no code object for a supported target (found {}); recompile with \
             --offload-arch set to one of {}",
            skipped.join(", "),
            decoded_targets()
        );
    }
    if let Some(k) = &opts.only
        && !found
    {
        labels.dedup();
        bail!(
            "{name}: no kernel or function named `{k}`; available: {}",
            labels.join(", ")
        );
    }
    direct.write_all(&held)?;
    direct.flush()?;
    Ok(())
}

/// The targets whose code rocjitsu disassembles, for messages.
pub(crate) fn decoded_targets() -> String {
    let v: Vec<&str> = Target::KNOWN
        .into_iter()
        .filter(|t| t.decodes())
        .map(|t| t.name())
        .collect();
    v.join(", ")
}

/// Parses `llvm-mc --disassemble` style input: byte tokens such as `0x1f` or
/// `1f`, separated by whitespace or commas; `#` and `;` start comments.
fn read_hex(r: impl BufRead) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    for (n, line) in r.lines().enumerate() {
        let line = line.context("reading stdin")?;
        let code = line.split(['#', ';']).next().unwrap_or("");
        for tok in code
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|t| !t.is_empty())
        {
            let digits = tok
                .strip_prefix("0x")
                .or_else(|| tok.strip_prefix("0X"))
                .unwrap_or(tok);
            if digits.is_empty() || digits.len() > 2 {
                bail!(
                    "stdin line {}: `{tok}` is not a byte (write bytes as 0xNN)",
                    n + 1
                );
            }
            let b = u8::from_str_radix(digits, 16)
                .with_context(|| format!("stdin line {}: `{tok}` is not a hex byte", n + 1))?;
            bytes.push(b);
        }
    }
    Ok(bytes)
}

/// One instruction as a JSON object: offset, bytes, text, mnemonic, operands
/// and modifiers (the latter two split from LLVM's syntax).
pub fn json_line(offset: u64, raw: &[u8], inst: Option<&Instruction>) -> serde_json::Value {
    let hex: String = raw.iter().map(|b| format!("{b:02x}")).collect();
    let Some(inst) = inst else {
        return serde_json::json!({ "offset": offset, "bytes": hex, "invalid": true });
    };
    let text = inst.to_string();
    let (ops, mods) = split_operands(&text);
    serde_json::json!({
        "offset": offset,
        "bytes": hex,
        "text": text,
        "mnemonic": inst.mnemonic(),
        "operands": ops,
        "modifiers": mods,
    })
}

/// Splits the text after the mnemonic into comma-separated operands and the
/// space-separated modifiers that follow the last operand.
fn split_operands(text: &str) -> (Vec<String>, Vec<String>) {
    let rest = text.split_once(' ').map(|x| x.1).unwrap_or("");
    let mut ops = Vec::new();
    let mut mods = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    let mut in_mods = false;
    for c in rest.chars() {
        match c {
            '[' | '(' => depth += 1,
            ']' | ')' => depth -= 1,
            _ => {}
        }
        if depth == 0 && c == ',' && !in_mods {
            ops.push(cur.trim().to_string());
            cur.clear();
            continue;
        }
        if depth == 0 && c == ' ' && !cur.trim().is_empty() {
            // A space outside brackets after an operand starts the modifiers.
            if !in_mods {
                ops.push(cur.trim().to_string());
                in_mods = true;
            } else {
                mods.push(cur.trim().to_string());
            }
            cur.clear();
            continue;
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() {
        if in_mods {
            mods.push(cur.trim().to_string())
        } else {
            ops.push(cur.trim().to_string())
        }
    }
    // Space-separated parts written as `name(value)` belong to the operand
    // before them (`s_waitcnt vmcnt(0) lgkmcnt(0)`); no modifier has
    // parentheses.
    let keep = mods.iter().take_while(|m| m.contains('(')).count();
    if keep > 0
        && let Some(last) = ops.last_mut()
    {
        for m in mods.drain(..keep) {
            last.push(' ');
            last.push_str(&m);
        }
    }
    (ops, mods)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(t: &str) -> (Vec<String>, Vec<String>) {
        split_operands(t)
    }

    #[test]
    fn operands_and_modifiers() {
        // Texts as llvm-mc-22 -mcpu=gfx942 prints them.
        let (o, m) = split("s_waitcnt vmcnt(0) expcnt(0) lgkmcnt(0)");
        assert_eq!(o, ["vmcnt(0) expcnt(0) lgkmcnt(0)"]);
        assert!(m.is_empty());
        let (o, m) = split("buffer_load_dword v1, off, s[4:7], 0 offen offset:4");
        assert_eq!(o, ["v1", "off", "s[4:7]", "0"]);
        assert_eq!(m, ["offen", "offset:4"]);
        let (o, m) = split("v_pk_add_f32 v[0:1], v[2:3], v[4:5] op_sel_hi:[0,1]");
        assert_eq!(o, ["v[0:1]", "v[2:3]", "v[4:5]"]);
        assert_eq!(m, ["op_sel_hi:[0,1]"]);
        let (o, m) = split("s_endpgm");
        assert!(o.is_empty() && m.is_empty());
    }

    #[test]
    fn hex_input() {
        let b = read_hex("0x01 0x05, 02 # comment\n;x\n0XfF".as_bytes()).expect("valid");
        assert_eq!(b, [1, 5, 2, 0xff]);
        assert!(read_hex("0x123".as_bytes()).is_err());
        assert!(read_hex("zz".as_bytes()).is_err());
    }
}
