//! `rocjitsu run-kernel`: run one kernel of a code object on an emulated
//! GPU, with buffers from files and scalar arguments from the command
//! line, without ROCm.

use anyhow::{Context, Result, anyhow, bail};
use rocjitsu_code::{Container, KernelArg, ValueKind};
use rocjitsu_config::GpuConfig;
use rocjitsu_gpu::exec::dispatch::{self, Launch};
use rocjitsu_gpu::exec::dispatch::{DispatchError, Stats};
use rocjitsu_gpu::exec::engine::Program;
use rocjitsu_gpu::exec::{Env, loader};
use rocjitsu_gpu::float::{Rounding, f32_to_bf16, f32_to_f16};
use rocjitsu_gpu::jit::{ExecMode, JitStats, WaveDigest};
use rocjitsu_gpu::mem::{Perms, Vm};
use rocjitsu_gpu::plugin::Plugins;
use rocjitsu_gpu::timing;
use rocjitsu_isa::Target;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(clap::Args)]
#[command(after_help = "\
ARGUMENT SPECS (one --arg per explicit kernel argument, in order):
  in:FILE            buffer initialised from FILE; its address is passed
  out:FILE:BYTES     zeroed buffer of BYTES bytes, written to FILE after the run
  inout:FILE         buffer read from FILE and written back after the run
  image:FILE         an image: FILE holds its 32-byte resource descriptor (T#)
                     then its data; the data gets its own buffer, whose
                     address goes into the descriptor's BASE_ADDRESS, and the
                     descriptor's address is passed; FILE is rewritten with the
                     data after the run
  zero:BYTES         zeroed buffer of BYTES bytes, not written anywhere
  local:BYTES        (OpenCL __local pointer) BYTES of dynamic LDS
  null               a null pointer
  i32:V u32:V i64:V u64:V f32:V f64:V f16:V bf16:V   a scalar by value

Hidden arguments (hidden_block_count_x, hidden_group_size_x, ...) are filled
as ROCm's runtime fills them.

EXIT STATUS: 0 success; 1 bad input (file, kernel, arguments); 2 the kernel
faulted (memory fault, illegal instruction, trap) or timed out; 3 with
--exec check, the translated run differs from the interpreter's.

EXAMPLES:
  rocjitsu run-kernel --gpu gfx942 saxpy.hsaco --kernel saxpy --grid 4 --block 256 \\
      --arg f32:2.0 --arg in:x.bin --arg inout:y.bin --arg u32:1024 --stats
  rocjitsu run-kernel k.hsaco --list")]
pub struct Args {
    /// Code object, offload bundle or HIP executable
    file: PathBuf,
    /// Emulated GPU: gfx90a (MI210), gfx942 (MI300X), gfx950 (MI355X); default: the code object's
    #[arg(long)]
    gpu: Option<String>,
    /// A full GPU configuration (JSON, see configs/) instead of --gpu
    #[arg(long, conflicts_with = "gpu")]
    config: Option<PathBuf>,
    /// Kernel to run (may be omitted when the code object has one kernel)
    #[arg(long)]
    kernel: Option<String>,
    /// Workgroups per dimension: X[,Y,Z]
    #[arg(long, default_value = "1")]
    grid: String,
    /// Work-items per workgroup: X[,Y,Z]
    #[arg(long, default_value = "64")]
    block: String,
    /// Dynamic LDS bytes per workgroup
    #[arg(long, default_value_t = 0)]
    dynamic_lds: u32,
    /// A kernel argument (see ARGUMENT SPECS); repeat in order
    #[arg(long = "arg", value_name = "SPEC")]
    args: Vec<String>,
    /// Print instructions executed, waves, wall time and wave-instructions per second
    #[arg(long)]
    stats: bool,
    /// Host threads running workgroups (default: one per core)
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Stop the kernel after this many seconds
    #[arg(long, value_name = "SECS")]
    timeout: Option<f64>,
    /// Private (scratch) bytes per work-item when the kernel uses a dynamic stack
    #[arg(long, default_value_t = 16384)]
    stack: u32,
    /// List the kernels and their arguments, and exit
    #[arg(long)]
    list: bool,
    /// Print the first N instructions that wave 0 of workgroup (0,0,0) executes, with the registers each changed (SGPR index = operand field: 106 vcc, 126 exec; v256+ are AccVGPRs)
    #[arg(long, value_name = "N", default_value_t = 0)]
    trace: u64,
    /// Execution tier: interp, jit (every block translated to host code),
    /// auto (hot blocks translated), or check (the interpreter, then jit from
    /// the same inputs, on one host thread; every wave's final registers, the
    /// buffers, the fault and the instruction count must agree). Default:
    /// ROCJITSU_EXEC, else interp
    #[arg(long, value_name = "MODE")]
    exec: Option<String>,
    /// functional (results only, the default) or clocked (results, and the
    /// timing model's modelled cycles and time, printed by --stats)
    #[arg(long, value_name = "MODE", default_value = "functional")]
    exec_mode: String,
    /// The timing model for --exec-mode clocked (default: the GPU's, e.g.
    /// configs/timing/mi300x.json for gfx942)
    #[arg(long, value_name = "FILE")]
    timing_config: Option<PathBuf>,
    /// For a code object instrumented by `rocjitsu dbi instrument`: after the dispatch (a faulted one too), write its probes' results (bbcount's counts per block, memtrace's records) to FILE as JSON (`rocjitsu dbi report FILE` prints them)
    #[arg(long, value_name = "FILE")]
    dbi_out: Option<PathBuf>,
    #[command(flatten)]
    plugins: crate::plugins::PluginArgs,
}

/// Parses `X[,Y,Z]`.
fn dims(what: &str, s: &str) -> Result<[u32; 3]> {
    let parts: Vec<&str> = s.split(',').collect();
    if parts.is_empty() || parts.len() > 3 {
        bail!("--{what} {s}: expected X, X,Y or X,Y,Z");
    }
    let mut d = [1u32; 3];
    for (i, p) in parts.iter().enumerate() {
        d[i] = p
            .trim()
            .parse()
            .ok()
            .filter(|&v| v > 0)
            .ok_or_else(|| anyhow!("--{what} {s}: `{p}` is not a positive integer"))?;
    }
    Ok(d)
}

/// A buffer argument to write back after the run.
struct Output {
    path: PathBuf,
    addr: u64,
    len: u64,
}

fn describe(a: &KernelArg) -> String {
    format!(
        "{} ({}, {} bytes at offset {})",
        a.name.as_deref().unwrap_or("(unnamed)"),
        a.type_name.as_deref().unwrap_or(match a.value_kind {
            ValueKind::GlobalBuffer => "pointer",
            ValueKind::DynamicSharedPointer => "local pointer",
            _ => "value",
        }),
        a.size,
        a.offset
    )
}

/// Whether a C type name is a floating-point ('f') or integer ('i') type.
fn type_class(name: &str) -> Option<char> {
    let n = name.trim();
    if n.ends_with('*') {
        return None;
    }
    if [
        "float", "double", "half", "bf16", "bfloat", "_Float16", "__fp16",
    ]
    .iter()
    .any(|f| n.contains(f))
    {
        Some('f')
    } else if ["int", "long", "short", "char", "size_t", "unsigned", "uint"]
        .iter()
        .any(|f| n.contains(f))
    {
        Some('i')
    } else {
        None
    }
}

fn is_hidden(k: &ValueKind) -> bool {
    !matches!(
        k,
        ValueKind::ByValue
            | ValueKind::GlobalBuffer
            | ValueKind::DynamicSharedPointer
            | ValueKind::Sampler
            | ValueKind::Image
            | ValueKind::Pipe
            | ValueKind::Queue
    )
}

fn parse_num<T: std::str::FromStr>(spec: &str, v: &str) -> Result<T> {
    v.parse()
        .map_err(|_| anyhow!("--arg {spec}: `{v}` is not a valid value"))
}

fn parse_int(spec: &str, v: &str) -> Result<i128> {
    let (neg, body) = v.strip_prefix('-').map_or((false, v), |b| (true, b));
    let x = if let Some(h) = body.strip_prefix("0x") {
        i128::from_str_radix(h, 16)
    } else {
        body.parse()
    }
    .map_err(|_| anyhow!("--arg {spec}: `{v}` is not an integer"))?;
    Ok(if neg { -x } else { x })
}

pub fn run(a: Args) -> Result<ExitCode> {
    a.plugins.specs()?;
    let bytes =
        std::fs::read(&a.file).with_context(|| format!("cannot read {}", a.file.display()))?;
    let fname = a.file.display().to_string();
    let container = Container::parse(&fname, &bytes)?;

    let config = match (&a.config, &a.gpu) {
        (Some(p), _) => Some(GpuConfig::load(p)?),
        (None, Some(g)) => {
            let t: Target = g.parse().map_err(|_| {
                anyhow!(
                    "--gpu {g}: unknown GPU; use gfx90a (MI210), gfx942 (MI300X), gfx950 (MI355X), gfx908 (MI100), gfx1010 (RX 5700 XT), gfx1030 (RX 6900 XT), gfx1100 (W7900), gfx1151 (Radeon 8060S) or gfx1201 (R9700)"
                )
            })?;
            if let Some(e) = t.kernels_not_executable() {
                bail!("--gpu {g}: {e}");
            }
            t.has_gpu_config().then(|| GpuConfig::builtin(t))
        }
        (None, None) => None,
    };
    let gpu_target: Option<Target> = a.gpu.as_deref().and_then(|g| g.parse().ok());
    let co = match (&config, gpu_target) {
        (None, Some(t)) => container
            .select(t)
            .map_err(|e| anyhow!("--gpu {}: {e}", t.name()))?,
        (Some(c), _) => {
            let spec = c
                .gpus
                .first()
                .ok_or_else(|| anyhow!("the GPU configuration lists no GPU"))?;
            let t: Target = spec
                .gfx_target
                .name()
                .parse()
                .map_err(|_| anyhow!("unsupported target"))?;
            container.select(t).map_err(|e| match &a.gpu {
                Some(g) => anyhow!("--gpu {g}: {e}"),
                None => e.into(),
            })?
        }
        (None, None) => {
            let mut all = container.code_objects();
            let e = all
                .next()
                .ok_or_else(|| anyhow!("{fname}: no AMDGPU code object inside"))?;
            rocjitsu_code::CodeObject::parse(&fname, e.bytes.clone())?
        }
    };
    let target = co.target();
    if a.list {
        for k in co.kernels() {
            println!("{}", k.name);
            if let Some(m) = &k.metadata {
                for arg in m.args.iter().filter(|x| !is_hidden(&x.value_kind)) {
                    println!("  {}", describe(arg));
                }
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(e) = target.kernels_not_executable() {
        bail!("{fname}: {e}");
    }
    // A workgroup's LDS: the configuration's, else 64 KiB.
    let config = config.or_else(|| target.has_gpu_config().then(|| GpuConfig::builtin(target)));
    let max_lds = config
        .as_ref()
        .and_then(|c| c.gpus.first())
        .map_or(65536, |g| g.cu.lds_bytes);

    let kernel = match &a.kernel {
        Some(n) => co.kernel(n).ok_or_else(|| {
            let names: Vec<&str> = co.kernels().iter().map(|k| k.name.as_str()).collect();
            anyhow!(
                "{fname} has no kernel `{n}`; its kernels: {}",
                names.join(", ")
            )
        })?,
        None => match co.kernels() {
            [k] => k,
            ks => {
                let names: Vec<&str> = ks.iter().map(|k| k.name.as_str()).collect();
                bail!(
                    "{fname} has {} kernels; pick one with --kernel: {}",
                    ks.len(),
                    names.join(", ")
                )
            }
        },
    };
    let meta = kernel.metadata.as_ref().ok_or_else(|| {
        anyhow!(
            "kernel {}: the code object has no metadata for it",
            kernel.name
        )
    })?;
    let dbi = match &a.dbi_out {
        Some(_) => Some(
            rocjitsu_code::dbi::Manifest::of(&co)
                .map_err(|e| anyhow!(e))?
                .ok_or_else(|| {
                    anyhow!(
                        "--dbi-out: {fname} is not instrumented (no {} section); instrument it with `rocjitsu dbi instrument`",
                        rocjitsu_code::dbi::MANIFEST_SECTION
                    )
                })?,
        ),
        None => None,
    };
    let grid = dims("grid", &a.grid)?;
    let block = dims("block", &a.block)?;

    let vm = Vm::new();
    let loaded = loader::load(&vm, &co).map_err(|e| anyhow!(e))?;
    let kd = kernel.descriptor;
    let kernarg_size = meta
        .kernarg_segment_size
        .unwrap_or(u64::from(kd.kernarg_size))
        .max(u64::from(kd.kernarg_size));
    let mut kernarg = vec![0u8; kernarg_size.max(16) as usize];
    let explicit: Vec<&KernelArg> = meta
        .args
        .iter()
        .filter(|x| !is_hidden(&x.value_kind))
        .collect();
    if explicit.len() != a.args.len() {
        let list: Vec<String> = explicit.iter().map(|x| describe(x)).collect();
        bail!(
            "kernel {} takes {} argument(s), {} given with --arg:\n  {}",
            kernel.name,
            explicit.len(),
            a.args.len(),
            list.join("\n  ")
        );
    }
    let mut outputs = Vec::new();
    // Every buffer made for an argument: (address, length).
    let mut buffers = Vec::new();
    let mut dynamic_lds = a.dynamic_lds;
    let put = |off: u64, v: &[u8], kernarg: &mut Vec<u8>| {
        let o = off as usize;
        if let Some(d) = kernarg.get_mut(o..o + v.len()) {
            d.copy_from_slice(v);
        }
    };
    for (i, (arg, spec)) in explicit.iter().zip(&a.args).enumerate() {
        let n = i + 1;
        let (kind, rest) = spec.split_once(':').unwrap_or((spec.as_str(), ""));
        let is_ptr = arg.value_kind == ValueKind::GlobalBuffer;
        let want = |size: u64| -> Result<()> {
            if is_ptr {
                bail!(
                    "--arg {spec} (argument {n}): kernel {} takes a pointer here, {}; pass a buffer (in:FILE, out:FILE:BYTES, inout:FILE) or null",
                    kernel.name,
                    describe(arg)
                );
            }
            let float_spec = kind.starts_with('f') || kind == "bf16";
            let mismatch = match arg.type_name.as_deref().map(type_class) {
                Some(Some(c)) => c != if float_spec { 'f' } else { 'i' },
                _ => false,
            };
            if arg.value_kind != ValueKind::ByValue || arg.size != size || mismatch {
                bail!(
                    "--arg {spec} (argument {n}): kernel {} takes a {}-byte value here, {}",
                    kernel.name,
                    arg.size,
                    describe(arg)
                );
            }
            Ok(())
        };
        let val: Vec<u8> = match kind {
            "in" | "inout" | "out" => {
                if !is_ptr {
                    bail!(
                        "--arg {spec} (argument {n}): a buffer, but kernel {} expects {}",
                        kernel.name,
                        describe(arg)
                    );
                }
                let (addr, len, path) = if kind == "out" {
                    let (path, len) = rest
                        .rsplit_once(':')
                        .ok_or_else(|| anyhow!("--arg {spec}: expected out:FILE:BYTES"))?;
                    let len: u64 = parse_num(spec, len)?;
                    (vm.alloc(len, Perms::RW), len, PathBuf::from(path))
                } else {
                    let data = std::fs::read(rest)
                        .with_context(|| format!("--arg {spec}: cannot read {rest}"))?;
                    let addr = vm.alloc(data.len() as u64, Perms::RW);
                    vm.fill(addr, &data)?;
                    (addr, data.len() as u64, PathBuf::from(rest))
                };
                buffers.push((addr, len));
                if kind != "in" {
                    outputs.push(Output { path, addr, len });
                }
                addr.to_le_bytes().to_vec()
            }
            "image" => {
                if !is_ptr && arg.value_kind != ValueKind::Image {
                    bail!(
                        "--arg {spec} (argument {n}): an image, but kernel {} expects {}",
                        kernel.name,
                        describe(arg)
                    );
                }
                let file = std::fs::read(rest)
                    .with_context(|| format!("--arg {spec}: cannot read {rest}"))?;
                if file.len() <= 32 {
                    bail!(
                        "--arg {spec}: {rest} has {} bytes; an image file is a 32-byte descriptor followed by the image data",
                        file.len()
                    );
                }
                let (desc, data) = file.split_at(32);
                let addr = vm.alloc(data.len() as u64, Perms::RW);
                vm.fill(addr, data)?;
                let mut t: Vec<u8> = desc.to_vec();
                // T# word 0: address bits 39:8; word 1 bits 7:0: bits 47:40.
                t[0..4].copy_from_slice(&((addr >> 8) as u32).to_le_bytes());
                t[4] = (addr >> 40) as u8;
                let taddr = vm.alloc(32, Perms::RW);
                vm.fill(taddr, &t)?;
                buffers.push((addr, data.len() as u64));
                buffers.push((taddr, 32));
                outputs.push(Output {
                    path: PathBuf::from(rest),
                    addr,
                    len: data.len() as u64,
                });
                taddr.to_le_bytes().to_vec()
            }
            "zero" => {
                if !is_ptr {
                    bail!(
                        "--arg {spec} (argument {n}): a buffer, but kernel {} expects {}",
                        kernel.name,
                        describe(arg)
                    );
                }
                let len: u64 = parse_num(spec, rest)?;
                let addr = vm.alloc(len, Perms::RW);
                buffers.push((addr, len));
                addr.to_le_bytes().to_vec()
            }
            "null" => {
                if !is_ptr && arg.size != 8 {
                    bail!(
                        "--arg null (argument {n}): kernel {} expects {}",
                        kernel.name,
                        describe(arg)
                    );
                }
                0u64.to_le_bytes().to_vec()
            }
            "local" => {
                if arg.value_kind != ValueKind::DynamicSharedPointer {
                    bail!(
                        "--arg {spec} (argument {n}): kernel {} expects {}",
                        kernel.name,
                        describe(arg)
                    );
                }
                let bytes: u32 = parse_num(spec, rest)?;
                let off = kd.group_segment_fixed_size + dynamic_lds;
                dynamic_lds += bytes;
                off.to_le_bytes().to_vec()
            }
            "i32" | "u32" => {
                want(4)?;
                (parse_int(spec, rest)? as u32).to_le_bytes().to_vec()
            }
            "i64" | "u64" => {
                if !(is_ptr && arg.size == 8) {
                    want(8)?;
                }
                (parse_int(spec, rest)? as u64).to_le_bytes().to_vec()
            }
            "f32" => {
                want(4)?;
                parse_num::<f32>(spec, rest)?.to_le_bytes().to_vec()
            }
            "f64" => {
                want(8)?;
                parse_num::<f64>(spec, rest)?.to_le_bytes().to_vec()
            }
            "f16" => {
                want(2)?;
                f32_to_f16(parse_num(spec, rest)?, Rounding::NearestEven)
                    .to_le_bytes()
                    .to_vec()
            }
            "bf16" => {
                want(2)?;
                f32_to_bf16(parse_num(spec, rest)?, Rounding::NearestEven)
                    .to_le_bytes()
                    .to_vec()
            }
            _ => bail!("--arg {spec}: unknown kind `{kind}`; see `rocjitsu run-kernel --help`"),
        };
        put(arg.offset, &val, &mut kernarg);
    }

    let mut env = Env::new(target);
    // A code object built for `sramecc-` or `sramecc+` runs only on such
    // a GPU; "any" runs on the target's product as shipped.
    match co.flags().sramecc {
        rocjitsu_code::FeatureState::On => env.sramecc = true,
        rocjitsu_code::FeatureState::Off => env.sramecc = false,
        _ => {}
    }
    let queue = vm.alloc(256, Perms::RW);
    let uses_stack = kd.kernel_code_properties.uses_dynamic_stack;
    let private_bytes = kd.private_segment_fixed_size.max(4).next_multiple_of(16)
        + if uses_stack { a.stack } else { 0 };
    let dims_used = if grid[2] > 1 || block[2] > 1 {
        3u16
    } else if grid[1] > 1 || block[1] > 1 {
        2
    } else {
        1
    };
    for arg in meta.args.iter().filter(|x| is_hidden(&x.value_kind)) {
        let u32s = |v: u32| v.to_le_bytes().to_vec();
        let u16s = |v: u32| (v as u16).to_le_bytes().to_vec();
        let val = match arg.value_kind {
            ValueKind::HiddenBlockCountX => u32s(grid[0]),
            ValueKind::HiddenBlockCountY => u32s(grid[1]),
            ValueKind::HiddenBlockCountZ => u32s(grid[2]),
            ValueKind::HiddenGroupSizeX => u16s(block[0]),
            ValueKind::HiddenGroupSizeY => u16s(block[1]),
            ValueKind::HiddenGroupSizeZ => u16s(block[2]),
            ValueKind::HiddenRemainderX
            | ValueKind::HiddenRemainderY
            | ValueKind::HiddenRemainderZ => u16s(0),
            ValueKind::HiddenGridDims => dims_used.to_le_bytes().to_vec(),
            ValueKind::HiddenDynamicLdsSize => u32s(dynamic_lds),
            ValueKind::HiddenPrivateBase => u32s((env.apertures.private_base >> 32) as u32),
            ValueKind::HiddenSharedBase => u32s((env.apertures.shared_base >> 32) as u32),
            ValueKind::HiddenQueuePtr => queue.to_le_bytes().to_vec(),
            // Offsets are 0; printf, hostcall, heap, queues and completion
            // actions are not provided (null).
            _ => vec![0; arg.size.min(8) as usize],
        };
        let n = (arg.size as usize).min(val.len());
        put(arg.offset, &val[..n], &mut kernarg);
    }
    let kernarg_addr = vm.alloc(kernarg.len() as u64, Perms::RW);
    vm.fill(kernarg_addr, &kernarg)?;

    // The AQL kernel dispatch packet, for kernels that read the dispatch
    // pointer (work-group and grid sizes in work-items).
    let mut pkt = [0u8; 64];
    pkt[2..4].copy_from_slice(&dims_used.to_le_bytes());
    for i in 0..3 {
        pkt[4 + 2 * i..6 + 2 * i].copy_from_slice(&(block[i] as u16).to_le_bytes());
        pkt[12 + 4 * i..16 + 4 * i]
            .copy_from_slice(&(grid[i].saturating_mul(block[i])).to_le_bytes());
    }
    pkt[24..28].copy_from_slice(&private_bytes.to_le_bytes());
    pkt[28..32].copy_from_slice(&(kd.group_segment_fixed_size + dynamic_lds).to_le_bytes());
    pkt[32..40].copy_from_slice(&(loaded.base + kernel.descriptor_address).to_le_bytes());
    pkt[40..48].copy_from_slice(&kernarg_addr.to_le_bytes());
    let packet = vm.alloc(64, Perms::RW);
    vm.fill(packet, &pkt)?;

    let launch = Launch {
        kernel: kernel.name.clone(),
        entry: loaded.base + kernel.entry,
        descriptor: kd,
        grid,
        block,
        dynamic_lds,
        kernarg: kernarg_addr,
        dispatch_packet: packet,
        queue,
        private_bytes,
        threads: a.threads,
        timeout: a.timeout.map(Duration::from_secs_f64),
        max_lds,
        trace: a.trace,
    };
    let (mode, check) = match a.exec.as_deref() {
        None => (None, false),
        Some("check") => (Some(ExecMode::Jit), true),
        Some(m) => (
            Some(ExecMode::parse(m).map_err(|e| anyhow!("--exec: {e}, or check"))?),
            false,
        ),
    };
    let exec_mode =
        timing::ExecMode::parse(&a.exec_mode).map_err(|e| anyhow!("--exec-mode: {e}"))?;
    let plugins = a.plugins.plugins()?;
    if check && plugins.is_some() {
        bail!("--exec check runs without plugins (plugins run on the interpreter)");
    }
    if a.timing_config.is_some() && exec_mode != timing::ExecMode::Clocked {
        bail!("--timing-config is for --exec-mode clocked");
    }
    // Clocked mode: a recorder among the plugins, and the timing model.
    let clocked = match exec_mode {
        timing::ExecMode::Functional => None,
        timing::ExecMode::Clocked => {
            if check {
                bail!("--exec check and --exec-mode clocked do not go together");
            }
            let cfg = match &a.timing_config {
                Some(p) => timing::TimingConfig::load(p)?,
                None => timing::TimingConfig::builtin(target)?,
            };
            let rec = timing::Recorder::new(cfg.params.line_bytes);
            Some((cfg, rec))
        }
    };
    let plugins = match (&clocked, plugins) {
        (Some((_, rec)), Some(p)) => Some(p.with(vec![Box::new(rec.clone())])),
        (Some((_, rec)), None) => Some(Plugins::of(vec![Box::new(rec.clone())])),
        (None, p) => p,
    };
    let cpu0 = cpu_seconds();
    let r = if check {
        match check_tiers(&vm, &env, &loaded.program, &launch, &buffers)? {
            Ok(r) => r,
            Err(why) => {
                eprintln!("rocjitsu: check: kernel {}: {why}", kernel.name);
                return Ok(ExitCode::from(3));
            }
        }
    } else {
        let extra = dispatch::Extra {
            plugins: plugins.as_ref(),
            exec: mode,
            ..Default::default()
        };
        dispatch::dispatch_with(&vm, &env, &loaded.program, &launch, &extra)
    };
    if let Some(p) = &plugins {
        p.finish();
    }
    if let (Some(m), Some(path)) = (&dbi, &a.dbi_out) {
        let buf = vm.read_vec(loaded.base + m.buffer, m.buffer_bytes)?;
        let v = crate::dbi::results(m, &buf)?;
        std::fs::write(path, serde_json::to_vec(&v)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    let stats = match r {
        Ok(s) => s,
        Err(e @ dispatch::DispatchError::Launch { .. }) => return Err(e.into()),
        Err(e @ dispatch::DispatchError::Timeout { .. }) => {
            eprintln!("rocjitsu: error: {e}");
            return Ok(ExitCode::from(2));
        }
        Err(e) => {
            eprintln!("rocjitsu: GPU fault: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let modelled = match &clocked {
        Some((cfg, rec)) => {
            let t0 = std::time::Instant::now();
            let kernel_needs = timing::Kernel::of(&kd, target, dynamic_lds);
            let threads = if a.threads == 0 {
                dispatch::host_cores()
            } else {
                a.threads
            };
            let mut reports = Vec::new();
            for trace in rec.take() {
                reports.push(timing::simulate(
                    cfg,
                    std::sync::Arc::new(trace),
                    kernel_needs,
                    threads,
                )?);
            }
            Some((reports, t0.elapsed()))
        }
        None => None,
    };
    for o in &outputs {
        let data = vm.read_vec(o.addr, o.len)?;
        std::fs::write(&o.path, data)
            .with_context(|| format!("cannot write {}", o.path.display()))?;
    }
    if a.stats {
        let secs = stats.wall.as_secs_f64();
        println!("kernel:               {}", kernel.name);
        println!("gpu:                  {}", target.name());
        println!("workgroups:           {}", stats.workgroups);
        println!("waves:                {}", stats.waves);
        println!(
            "instructions:         {} (wave-instructions)",
            stats.instructions
        );
        println!("wall time:            {:.6} s", secs);
        println!(
            "cpu time:             {:.6} s (the process's, over the dispatch)",
            cpu_seconds() - cpu0
        );
        println!("threads:              {}", stats.threads);
        let exec = mode.unwrap_or_else(ExecMode::from_env);
        println!(
            "exec:                 {}",
            a.exec.as_deref().unwrap_or(exec.name())
        );
        if let Some(j) = loaded.program.jit().filter(|_| exec != ExecMode::Interp) {
            print_jit(&j.stats());
        }
        println!(
            "wave-instructions/s:  {:.0}",
            if secs > 0.0 {
                stats.instructions as f64 / secs
            } else {
                0.0
            }
        );
        if let Some((reports, wall)) = &modelled {
            println!("exec mode:            clocked");
            for r in reports {
                println!("modelled cycles: {}", r.cycles);
                println!(
                    "modelled time:        {:.3} us at {} MHz",
                    r.seconds() * 1e6,
                    r.clock_mhz
                );
                println!(
                    "timing model:         {} events, {} epochs, {} threads",
                    r.events, r.epochs, r.threads
                );
            }
            println!("timing model wall:    {:.6} s", wall.as_secs_f64());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The translation tier's figures for `--stats`.
fn print_jit(s: &JitStats) {
    let total = s.jit_insts + s.interp_insts;
    let pct = |x: u64| {
        if total > 0 {
            100.0 * x as f64 / total as f64
        } else {
            0.0
        }
    };
    println!(
        "jit blocks:           {} ({} instructions; {} left to the interpreter)",
        s.blocks, s.translated_insts, s.declined
    );
    println!(
        "jit translation:      {:.3} ms",
        s.translate_ns as f64 / 1e6
    );
    println!(
        "jit instructions:     {} in translated blocks ({:.1}%), {} interpreted",
        s.jit_insts,
        pct(s.jit_insts),
        s.interp_insts
    );
    let calls = s.call_insts();
    let top: Vec<String> = s
        .calls
        .iter()
        .take(6)
        .map(|(n, c)| format!("{n} {c}"))
        .collect();
    println!(
        "jit calls:            {} ({:.1}%) through the interpreter's semantics: {}",
        calls,
        pct(calls),
        top.join(", ")
    );
}

/// What `--exec check` found: the dispatch's result (both tiers agree), or
/// the first difference.
type CheckResult = std::result::Result<std::result::Result<Stats, DispatchError>, String>;

/// `--exec check`: runs the dispatch on the interpreter, restores the
/// buffers, runs it again with every block translated (one host thread
/// each), and compares the outcome, the instruction count, the buffers and
/// every wave's final registers. `Ok(Err(why))` names the first difference.
fn check_tiers(
    vm: &Vm,
    env: &Env,
    prog: &Program,
    launch: &Launch,
    buffers: &[(u64, u64)],
) -> Result<CheckResult> {
    use rocjitsu_gpu::plugin::WaveId;
    use std::collections::BTreeMap;
    use std::sync::Mutex;
    let launch = Launch {
        threads: 1,
        ..launch.clone()
    };
    let inputs: Vec<Vec<u8>> = buffers
        .iter()
        .map(|&(addr, len)| vm.read_vec(addr, len))
        .collect::<std::result::Result<_, _>>()?;
    type Waves = BTreeMap<([u32; 3], u32), WaveDigest>;
    /// A run's outcome, final wave states and buffers.
    type Outcome = (
        std::result::Result<Stats, DispatchError>,
        Waves,
        Vec<Vec<u8>>,
    );
    let run = |mode: ExecMode| -> Result<Outcome> {
        for (&(addr, _), data) in buffers.iter().zip(&inputs) {
            vm.fill(addr, data)?;
        }
        let seen: Mutex<Waves> = Mutex::new(BTreeMap::new());
        let hook = |id: WaveId, w: &rocjitsu_gpu::exec::Wave| {
            let d = WaveDigest::of(w);
            seen.lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert((id.group, id.wave), d);
        };
        let extra = dispatch::Extra {
            exec: Some(mode),
            wave_end: Some(&hook),
            ..Default::default()
        };
        let r = dispatch::dispatch_with(vm, env, prog, &launch, &extra);
        let after = buffers
            .iter()
            .map(|&(addr, len)| vm.read_vec(addr, len))
            .collect::<std::result::Result<_, _>>()?;
        Ok((
            r,
            seen.into_inner().unwrap_or_else(|e| e.into_inner()),
            after,
        ))
    };
    let (ri, wi, bi) = run(ExecMode::Interp)?;
    let (rj, wj, bj) = run(ExecMode::Jit)?;
    let outcome = |r: &std::result::Result<Stats, DispatchError>| match r {
        Ok(s) => format!("ended after {} wave-instructions", s.instructions),
        Err(e) => format!("stopped: {e}"),
    };
    if outcome(&ri) != outcome(&rj) {
        return Ok(Err(format!(
            "the interpreter's run {}, the translated run {}",
            outcome(&ri),
            outcome(&rj)
        )));
    }
    for (k, (x, y)) in bi.iter().zip(&bj).enumerate() {
        if let Some(off) = x.iter().zip(y).position(|(p, q)| p != q) {
            return Ok(Err(format!(
                "argument buffer {k} (at 0x{:x}) differs at byte {off}: 0x{:02x} vs 0x{:02x}",
                buffers[k].0, x[off], y[off]
            )));
        }
    }
    if wi.len() != wj.len() {
        return Ok(Err(format!("{} vs {} waves ended", wi.len(), wj.len())));
    }
    for ((id, a), (_, b)) in wi.iter().zip(&wj) {
        if let Some(d) = a.diff(b) {
            return Ok(Err(format!(
                "workgroup ({}, {}, {}) wave {}: {d}",
                id.0[0], id.0[1], id.0[2], id.1
            )));
        }
    }
    eprintln!(
        "rocjitsu: check: the interpreter and the translated run agree ({} waves, {} buffer bytes)",
        wi.len(),
        bi.iter().map(Vec::len).sum::<usize>()
    );
    Ok(Ok(rj))
}

/// User and system CPU seconds this process has used (on a shared machine a
/// steadier measure of the engine's work than wall time).
fn cpu_seconds() -> f64 {
    let mut u = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes one rusage into the zeroed buffer it is given.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, u.as_mut_ptr()) } != 0 {
        return 0.0;
    }
    // SAFETY: zero-initialised and filled by getrusage: every field is valid.
    let u = unsafe { u.assume_init() };
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 * 1e-6;
    t(u.ru_utime) + t(u.ru_stime)
}
