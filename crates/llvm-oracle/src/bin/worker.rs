//! Runs LLVM 22's disassembler for one cpu over hex-encoded cases read from
//! stdin, one answer line per case (see `llvm_oracle::worker_main`).
//! Usage: `llvm-oracle-worker gfx942 < cases.hex`.

fn main() {
    let Some(cpu) = std::env::args().nth(1) else {
        eprintln!("usage: llvm-oracle-worker CPU < hex-lines");
        std::process::exit(2);
    };
    let stdin = std::io::stdin().lock();
    let stdout = std::io::stdout().lock();
    if let Err(e) = llvm_oracle::worker_main(&cpu, stdin, stdout) {
        eprintln!("llvm-oracle-worker: {e}");
        std::process::exit(1);
    }
}
