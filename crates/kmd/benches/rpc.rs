//! Daemon-mode figures: the round trip of a small ioctl from a client to a
//! daemon (in this process, on a real Unix socket), against the same ioctl
//! on an in-process driver. Prints median, p90 and p99 in microseconds;
//! asserts nothing.
//!
//!   cargo bench -p rocjitsu-kmd --bench rpc [-- ITERATIONS]

use rocjitsu_config::{GpuConfig, Target};
use rocjitsu_kmd::daemon::{Daemon, DaemonOptions};
use rocjitsu_kmd::remote::{Fds, RemoteDriver};
use rocjitsu_kmd::{DeviceFile, Driver, DriverOptions, SimulatedDriver};
use std::time::Instant;

fn options(dir: &std::path::Path) -> DriverOptions {
    DriverOptions {
        config: GpuConfig::builtin(Target::Gfx942),
        runtime_dir: dir.to_path_buf(),
        threads: 1,
        watchdog: None,
    }
}

fn quantiles(mut us: Vec<f64>) -> (f64, f64, f64) {
    us.sort_by(f64::total_cmp);
    let q = |p: f64| us[((us.len() - 1) as f64 * p) as usize];
    (q(0.5), q(0.9), q(0.99))
}

fn time(n: usize, mut f: impl FnMut()) -> (f64, f64, f64) {
    for _ in 0..n / 10 {
        f();
    }
    let us = (0..n)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    quantiles(us)
}

fn main() {
    let n: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(20_000);
    let dir = std::env::temp_dir().join(format!("rocjitsu-rpc-bench-{}", std::process::id()));
    let daemon = Daemon::bind(DaemonOptions {
        driver: options(&dir),
        socket: dir.join("daemon.sock"),
        owner: None,
        limits: Default::default(),
        restore: None,
    })
    .expect("the daemon starts");
    let socket = daemon.socket().to_path_buf();
    let stop = daemon.stopper();
    let server = std::thread::spawn(move || daemon.run());
    let remote = RemoteDriver::connect(&socket, &dir, Fds::PLAIN).expect("the client connects");
    let local = SimulatedDriver::new(options(&dir)).expect("a local driver");

    // GET_VERSION: _IOR('K', 1, 8 bytes).
    let get_version = (2u64 << 30) | (8 << 16) | (u64::from(b'K') << 8) | 1;
    let mut arg = [0u8; 8];
    let (rm, r90, r99) = time(n, || {
        remote
            .ioctl(DeviceFile::Kfd, get_version, &mut arg)
            .unwrap();
    });
    let (lm, l90, l99) = time(n, || {
        local.ioctl(DeviceFile::Kfd, get_version, &mut arg).unwrap();
    });
    // GET_CLOCK_COUNTERS: _IOWR('K', 5, 40 bytes), what ROCr asks most.
    let clocks = (3u64 << 30) | (40 << 16) | (u64::from(b'K') << 8) | 5;
    let mut c = [0u8; 40];
    let gpu_id = rocjitsu_kmd::gpu_id_of(remote.config(), 0);
    c[32..36].copy_from_slice(&gpu_id.to_le_bytes());
    let (cm, c90, c99) = time(n, || {
        remote.ioctl(DeviceFile::Kfd, clocks, &mut c).unwrap();
    });
    println!("BENCH rpc_iterations {n}");
    println!("BENCH rpc_get_version_median {rm:.2} us");
    println!("BENCH rpc_get_version_p90 {r90:.2} us");
    println!("BENCH rpc_get_version_p99 {r99:.2} us");
    println!("BENCH rpc_get_clock_counters_median {cm:.2} us");
    println!("BENCH rpc_get_clock_counters_p90 {c90:.2} us");
    println!("BENCH rpc_get_clock_counters_p99 {c99:.2} us");
    println!("BENCH local_get_version_median {lm:.2} us");
    println!("BENCH local_get_version_p90 {l90:.2} us");
    println!("BENCH local_get_version_p99 {l99:.2} us");
    drop(remote);
    stop();
    server.join().unwrap().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
