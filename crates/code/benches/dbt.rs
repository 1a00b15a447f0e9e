//! Translation time of the DBT (`rocjitsu_code::dbt::translate`, gfx950 ->
//! gfx942) per code object and per kernel, over the gfx950 code objects of
//! the executed-kernel tests and the decoder corpus (`build/kernels/gfx950`,
//! `build/corpus/gfx950`; `ROCJITSU_DBT_BENCH_DIRS` overrides, colon-
//! separated). Objects that fail closed are counted and skipped.
//!
//! `make bench-dbt` runs this, then the run-time comparison of translated
//! code on the emulated gfx942 with native gfx950 emulation
//! (`scripts/kernels.py run --dbt`).

use criterion::{Criterion, Throughput};
use rocjitsu_code::CodeObject;
use rocjitsu_code::dbt::{Options, translate};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn dirs() -> Vec<PathBuf> {
    match std::env::var("ROCJITSU_DBT_BENCH_DIRS") {
        Ok(v) => v.split(':').map(PathBuf::from).collect(),
        Err(_) => {
            let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../build");
            vec![root.join("kernels/gfx950"), root.join("corpus/gfx950")]
        }
    }
}

fn main() {
    let opts = Options::default();
    let mut objects = Vec::new();
    let mut closed = 0;
    for d in dirs() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            eprintln!(
                "dbt bench: {} missing (make corpus; scripts/kernels.py build --target gfx950)",
                d.display()
            );
            continue;
        };
        let mut paths: Vec<PathBuf> = rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "hsaco"))
            .collect();
        paths.sort();
        for p in paths {
            let bytes = std::fs::read(&p).expect("read");
            if translate(&bytes, &opts).is_err() {
                closed += 1;
                continue;
            }
            let kernels =
                CodeObject::parse("bench", bytes.clone()).map_or(0, |c| c.kernels().len());
            objects.push((p, bytes, kernels));
        }
    }
    if objects.is_empty() {
        eprintln!("dbt bench: no gfx950 code objects to translate");
        return;
    }
    // Plain figures first: the mean over 20 translations of every object.
    let (mut total, mut kernels, mut bytes_total, mut rewritten) =
        (Duration::ZERO, 0usize, 0usize, 0usize);
    let mut slowest = (Duration::ZERO, String::new());
    for (p, b, k) in &objects {
        let t = translate(b, &opts).expect("translates");
        rewritten += t.report.rewritten;
        let t0 = Instant::now();
        for _ in 0..20 {
            black_box(translate(black_box(b), &opts).expect("translates"));
        }
        let each = t0.elapsed() / 20;
        if each > slowest.0 {
            slowest = (each, p.file_name().unwrap().to_string_lossy().into_owned());
        }
        total += each;
        kernels += k;
        bytes_total += b.len();
    }
    let n = objects.len();
    println!(
        "dbt translate: {n} code objects ({closed} fail closed, skipped), {kernels} kernels, {rewritten} instructions rewritten, {} KiB",
        bytes_total / 1024
    );
    println!(
        "dbt translate: {:.1} us per code object, {:.1} us per kernel (mean); slowest {} {:.1} us",
        total.as_secs_f64() * 1e6 / n as f64,
        total.as_secs_f64() * 1e6 / kernels.max(1) as f64,
        slowest.1,
        slowest.0.as_secs_f64() * 1e6
    );
    let mut c = Criterion::default()
        .configure_from_args()
        .measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(300));
    let mut g = c.benchmark_group("dbt_translate");
    g.throughput(Throughput::Elements(objects.len() as u64));
    g.bench_function("all_objects", |b| {
        b.iter(|| {
            for (_, bytes, _) in &objects {
                black_box(translate(black_box(bytes), &opts).expect("translates"));
            }
        })
    });
    g.finish();
    c.final_summary();
}
