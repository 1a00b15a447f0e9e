//! End-to-end checks of the float semantics through code clang-22 compiles:
//! OpenCL kernels built for each target, loaded and dispatched, their
//! results compared with the host's IEEE arithmetic. The compiler's
//! division, square-root and conversion sequences must give correctly
//! rounded results; `exp2`/`log2` within the documented ULP bounds.

use crate::exec::dispatch::{Launch, dispatch};
use crate::exec::loader;
use crate::exec::op::Env;
use crate::mem::{Perms, Vm};
use rocjitsu_code::{CodeObject, ValueKind};
use rocjitsu_isa::Target;
use std::process::Command;

/// Work-items per test (one lane per input value).
const N: usize = 256;

/// Compiles `src` for `target`, runs `kernel` over [`N`] work-items in
/// 64-item groups with `bufs` as its buffer arguments (in order), and
/// returns the buffers' final contents.
fn run_cl(target: Target, src: &str, kernel: &str, bufs: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let dir = std::env::temp_dir().join(format!(
        "rocjitsu-vfloat-{}-{kernel}-{}",
        std::process::id(),
        target.name()
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (cl, obj) = (dir.join("k.cl"), dir.join("k.hsaco"));
    std::fs::write(&cl, src).expect("write source");
    let out = Command::new("clang-22")
        .args([
            "-x",
            "cl",
            "-cl-std=CL2.0",
            "-target",
            "amdgcn-amd-amdhsa",
            &format!("-mcpu={}", target.name()),
            "-nogpulib",
            "-O2",
            "-cl-fp32-correctly-rounded-divide-sqrt",
            "-o",
        ])
        .arg(&obj)
        .arg(&cl)
        .output()
        .expect("clang-22 runs (scripts/setup.sh installs it)");
    assert!(
        out.status.success(),
        "clang-22: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&obj).expect("code object");
    let _ = std::fs::remove_dir_all(&dir);
    let co = CodeObject::parse(kernel, bytes).expect("code object parses");
    let k = co.kernel(kernel).expect("kernel present");
    let meta = k.metadata.as_ref().expect("kernel metadata");

    let vm = Vm::new();
    let loaded = loader::load(&vm, &co).expect("loads");
    let addrs: Vec<u64> = bufs
        .iter()
        .map(|b| {
            let a = vm.alloc(b.len().max(4) as u64, Perms::RW);
            vm.fill(a, b).expect("fill");
            a
        })
        .collect();
    let size = meta.kernarg_segment_size.unwrap_or(256).max(16) as usize;
    let mut kernarg = vec![0u8; size];
    let ptrs = meta
        .args
        .iter()
        .filter(|a| a.value_kind == ValueKind::GlobalBuffer);
    for (arg, addr) in ptrs.zip(&addrs) {
        let o = arg.offset as usize;
        if let Some(d) = kernarg.get_mut(o..o + 8) {
            d.copy_from_slice(&addr.to_le_bytes());
        }
    }
    let kernarg_addr = vm.alloc(size as u64, Perms::RW);
    vm.fill(kernarg_addr, &kernarg).expect("kernarg");
    let packet = vm.alloc(64, Perms::RW);
    let queue = vm.alloc(256, Perms::RW);
    let launch = Launch {
        kernel: kernel.into(),
        entry: loaded.base + k.entry,
        descriptor: k.descriptor,
        grid: [(N / 64) as u32, 1, 1],
        block: [64, 1, 1],
        dynamic_lds: 0,
        kernarg: kernarg_addr,
        dispatch_packet: packet,
        queue,
        private_bytes: k
            .descriptor
            .private_segment_fixed_size
            .max(16)
            .next_multiple_of(16),
        threads: 1,
        timeout: Some(std::time::Duration::from_secs(60)),
        max_lds: 65536,
        trace: 0,
    };
    let env = Env::new(target);
    if let Err(e) = dispatch(&vm, &env, &loaded.program, &launch) {
        panic!("{kernel} on {target:?}: {e}");
    }
    bufs.iter()
        .zip(&addrs)
        .map(|(b, &a)| vm.read_vec(a, b.len() as u64).expect("read back"))
        .collect()
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn f64_bytes(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn f32s_of(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn f64s_of(b: &[u8]) -> Vec<f64> {
    b.chunks_exact(8)
        .map(|c| f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
        .collect()
}

/// Inputs: specials, denormals, huge and tiny magnitudes, and
/// pseudo-random bit patterns.
fn inputs(seed: u32) -> Vec<f32> {
    let mut v = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        3.0,
        0.1,
        1e-40,
        -3e-39,
        f32::MIN_POSITIVE,
        f32::MAX,
        -f32::MAX,
        1e30,
        1e-30,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        7.0,
        16777216.0,
        0.3333333,
        -2.5,
    ];
    let mut x = seed;
    while v.len() < N {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        v.push(f32::from_bits(x));
    }
    v
}

fn same32(a: f32, b: f32) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

const KERNELS: &str = r#"
#define I (__builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x())
__kernel void div_sqrt(__global float *out, __global const float *a, __global const float *b) {
  int i = I;
  out[2 * i] = a[i] / b[i];
  out[2 * i + 1] = __builtin_sqrtf(a[i]);
}
__kernel void div_sqrt64(__global double *out, __global const double *a, __global const double *b) {
  int i = I;
  out[2 * i] = a[i] / b[i];
  out[2 * i + 1] = __builtin_sqrt(a[i]);
}
__kernel void convert(__global float *out, __global const float *a, __global const double *d) {
  int i = I;
  out[4 * i] = (float)d[i];
  out[4 * i + 1] = (float)(int)a[i];
  out[4 * i + 2] = (float)(unsigned)(a[i] * 1000.0f);
  out[4 * i + 3] = __builtin_fmaf(a[i], a[i], -1.0f);
}
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
__kernel void half_ops(__global half *out, __global const float *a, __global const float *b) {
  int i = I;
  half x = (half)a[i], y = (half)b[i];
  out[4 * i] = x;
  out[4 * i + 1] = x * y + (half)0.5f;
  out[4 * i + 2] = x + y;
  out[4 * i + 3] = x / y;
}
__kernel void exp_log(__global float *out, __global const float *a) {
  int i = I;
  out[2 * i] = __builtin_exp2f(a[i]);
  out[2 * i + 1] = __builtin_log2f(a[i]);
}
"#;

#[test]
fn compiled_f32_division_and_sqrt_are_correctly_rounded() {
    let (a, b) = (inputs(0x1234_5678), inputs(0x8765_4321));
    for target in [Target::Gfx90a, Target::Gfx942, Target::Gfx950] {
        let out = run_cl(
            target,
            KERNELS,
            "div_sqrt",
            &[vec![0; 8 * N], f32_bytes(&a), f32_bytes(&b)],
        );
        let r = f32s_of(&out[0]);
        for i in 0..N {
            let (q, s) = (a[i] / b[i], a[i].sqrt());
            assert!(
                same32(r[2 * i], q),
                "{target:?}: {:e} / {:e} = {:e}, want {q:e}",
                a[i],
                b[i],
                r[2 * i]
            );
            assert!(
                same32(r[2 * i + 1], s),
                "{target:?}: sqrt({:e}) = {:e}, want {s:e}",
                a[i],
                r[2 * i + 1]
            );
        }
    }
}

#[test]
fn compiled_f64_division_and_sqrt_are_correctly_rounded() {
    let a: Vec<f64> = inputs(0x0bad_cafe)
        .iter()
        .zip(inputs(0x1357_2468))
        .map(|(&x, y)| f64::from(x) * (1.0 + f64::from(y.to_bits() >> 8) * 1e-9))
        .collect();
    let b: Vec<f64> = inputs(0x2468_1357)
        .iter()
        .map(|&x| f64::from(x) * 1.000_000_1)
        .collect();
    let out = run_cl(
        Target::Gfx942,
        KERNELS,
        "div_sqrt64",
        &[vec![0; 16 * N], f64_bytes(&a), f64_bytes(&b)],
    );
    let r = f64s_of(&out[0]);
    for i in 0..N {
        let (q, s) = (a[i] / b[i], a[i].sqrt());
        let ok = |x: f64, y: f64| (x.is_nan() && y.is_nan()) || x.to_bits() == y.to_bits();
        assert!(
            ok(r[2 * i], q),
            "{:e} / {:e} = {:e}, want {q:e}",
            a[i],
            b[i],
            r[2 * i]
        );
        assert!(
            ok(r[2 * i + 1], s),
            "sqrt({:e}) = {:e}, want {s:e}",
            a[i],
            r[2 * i + 1]
        );
    }
}

#[test]
fn compiled_conversions_and_fma() {
    let a = inputs(0x5555_aaaa);
    let d: Vec<f64> = a.iter().map(|&x| f64::from(x) * (1.0 + 1e-12)).collect();
    let out = run_cl(
        Target::Gfx942,
        KERNELS,
        "convert",
        &[vec![0; 16 * N], f32_bytes(&a), f64_bytes(&d)],
    );
    let r = f32s_of(&out[0]);
    for i in 0..N {
        let x = a[i];
        assert!(same32(r[4 * i], d[i] as f32), "(float){:e}", d[i]);
        // Out-of-range float-to-int conversions are undefined in C; only
        // in-range inputs are compared.
        if x.abs() < 2e9 {
            assert_eq!(r[4 * i + 1], x.trunc(), "(int){x:e}");
        }
        let y = x * 1000.0;
        if (0.0..4e9).contains(&y) {
            assert_eq!(r[4 * i + 2], y.trunc(), "(unsigned){y:e}");
        }
        assert!(same32(r[4 * i + 3], x.mul_add(x, -1.0)), "fma({x:e})");
    }
}

#[test]
fn compiled_exp2_log2_within_one_ulp() {
    let a: Vec<f32> = inputs(0x0f0f_f0f0)
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            if i % 2 == 0 {
                x
            } else {
                (i as f32 - 128.0) * 1.37
            }
        })
        .collect();
    let out = run_cl(
        Target::Gfx942,
        KERNELS,
        "exp_log",
        &[vec![0; 8 * N], f32_bytes(&a)],
    );
    let r = f32s_of(&out[0]);
    let close = |got: f32, want: f64| {
        let w = want as f32;
        if w.is_nan() || w.is_infinite() || w == 0.0 {
            return same32(got, w) || (w == 0.0 && got == 0.0);
        }
        (got.to_bits() as i64 - w.to_bits() as i64).abs() <= 1
    };
    for i in 0..N {
        let x = f64::from(a[i]);
        assert!(close(r[2 * i], x.exp2()), "exp2({x:e}) = {:e}", r[2 * i]);
        assert!(
            close(r[2 * i + 1], x.log2()),
            "log2({x:e}) = {:e}",
            r[2 * i + 1]
        );
    }
}

#[test]
fn compiled_f16_arithmetic_and_conversions() {
    use crate::float::{Rounding, f16_to_f32, f32_to_f16};
    let h = |x: f64| f32_to_f16(x as f32, Rounding::NearestEven);
    let a: Vec<f32> = inputs(0x7777_1111).iter().map(|&x| x * 1e-36).collect();
    let b: Vec<f32> = inputs(0x3333_9999)
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            if i % 3 == 0 {
                x
            } else {
                (i as f32 - 100.0) * 0.731
            }
        })
        .collect();
    for target in [Target::Gfx90a, Target::Gfx942, Target::Gfx950] {
        let out = run_cl(
            target,
            KERNELS,
            "half_ops",
            &[vec![0; 8 * N], f32_bytes(&a), f32_bytes(&b)],
        );
        let r: Vec<u16> = out[0]
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        let eq =
            |got: u16, want: u16| (got & 0x7fff > 0x7c00 && want & 0x7fff > 0x7c00) || got == want;
        for i in 0..N {
            let (x, y) = (h(f64::from(a[i])), h(f64::from(b[i])));
            let (fx, fy) = (f64::from(f16_to_f32(x)), f64::from(f16_to_f32(y)));
            assert!(eq(r[4 * i], x), "{target:?} (half){:e}", a[i]);
            // x * y + 0.5 may be fused or not: accept either rounding.
            let (fused, unfused) = (
                h(fx.mul_add(fy, 0.5)),
                h(f64::from(f16_to_f32(h(fx * fy))) + 0.5),
            );
            assert!(
                eq(r[4 * i + 1], fused) || eq(r[4 * i + 1], unfused),
                "{target:?} {fx} * {fy} + 0.5: {:#x}",
                r[4 * i + 1]
            );
            assert!(eq(r[4 * i + 2], h(fx + fy)), "{target:?} {fx} + {fy}");
            assert!(
                eq(r[4 * i + 3], h(fx / fy)),
                "{target:?} {fx} / {fy}: {:#x}",
                r[4 * i + 3]
            );
        }
    }
}
