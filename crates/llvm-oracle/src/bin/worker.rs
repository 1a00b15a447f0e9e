//! Runs LLVM 22's disassembler for one cpu (and optional target features)
//! over hex-encoded cases read from stdin, one answer line per case (see
//! `llvm_oracle::worker_main`).
//! Usage: `llvm-oracle-worker gfx942 [+wavefrontsize64] < cases.hex`.

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(cpu) = args.next() else {
        eprintln!("usage: llvm-oracle-worker CPU [FEATURES] < hex-lines");
        std::process::exit(2);
    };
    let features = args.next().unwrap_or_default();
    let stdin = std::io::stdin().lock();
    let stdout = std::io::stdout().lock();
    if let Err(e) = llvm_oracle::worker_main(&cpu, &features, stdin, stdout) {
        eprintln!("llvm-oracle-worker: {e}");
        std::process::exit(1);
    }
}
