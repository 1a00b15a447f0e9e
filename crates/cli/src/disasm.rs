//! `rocjitsu disasm`: LLVM-syntax disassembly of code objects and raw bytes.

use anyhow::{Context, Result, bail};
use rocjitsu_isa::{Inst, Target};
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
#[command(after_help = "Examples:\n  \
    rocjitsu disasm kernel.hsaco\n  \
    rocjitsu disasm --kernel saxpy --json app\n  \
    echo '0x01 0x05 0x02 0x02' | rocjitsu disasm --mcpu gfx942 --hex")]
pub struct Args {
    /// Code object, clang offload bundle, or executable with a .hip_fatbin section
    file: Option<PathBuf>,
    /// Target processor (gfx90a, gfx942, gfx950); required with --hex, picks the
    /// code object of a bundle otherwise
    #[arg(long, value_name = "CPU")]
    mcpu: Option<String>,
    /// Read hex bytes (`0x01 0x05 ...`, as `llvm-mc --disassemble` does) from stdin
    #[arg(long)]
    hex: bool,
    /// Only disassemble this kernel (or function symbol)
    #[arg(long, value_name = "NAME")]
    kernel: Option<String>,
    /// Print one JSON object per instruction
    #[arg(long)]
    json: bool,
    /// Accepted for llvm-objdump compatibility (AMDGPU prints encodings as a comment)
    #[arg(long)]
    no_show_raw_insn: bool,
    /// Do not print addresses before symbol labels
    #[arg(long)]
    no_leading_addr: bool,
}

pub fn run(a: Args) -> Result<ExitCode> {
    let target = a
        .mcpu
        .as_deref()
        .map(str::parse::<Target>)
        .transpose()
        .context("--mcpu")?;
    if a.hex {
        let Some(target) = target else {
            bail!("--hex needs --mcpu (gfx90a, gfx942 or gfx950)");
        };
        if a.file.is_some() {
            bail!("--hex reads bytes from stdin; do not also name a file");
        }
        let bytes = read_hex(std::io::stdin().lock())?;
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::new(stdout.lock());
        for line in rocjitsu_isa::disassemble(target, &bytes) {
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
    let Some(_file) = a.file else {
        bail!(
            "name a code object to disassemble, or use --hex with --mcpu to read bytes from stdin"
        );
    };
    bail!("disassembly of files is not available yet")
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
pub fn json_line(offset: u64, raw: &[u8], inst: Option<&Inst>) -> serde_json::Value {
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
    (ops, mods)
}
