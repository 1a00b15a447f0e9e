#!/usr/bin/env bash
# [stack] benchmarks: AMD's libraries, unmodified, under the rocjitsu launcher.
#
#   scripts/bench_stack.sh [--target gfx942|gfx90a] [--config FILE] [--threads LIST]
#                          [--rocjitsu PATH] [--hipcc PATH] [--calls N] [--only NAME,...]
#
# Runs inside the ROCm 7.2.4 sysroot (`make bench-stack` enters it and
# installs librocblas-dev and librocprim-dev there). Builds
# tests/bench/stack/*.hip with hipcc into build/bench-stack/<target>/ (only
# when a source changed), then, for each host-thread count of --threads
# (default: 1 and every core), measures
#   - rocBLAS SGEMM and HGEMM, 1024^3 and 2048^3: wall time per call after
#     a first call (which loads the kernels), 256 entries checked against
#     the CPU (`gemm`);
#   - rocPRIM's device radix sort of 16 Mi 32-bit keys, checked sorted and
#     a permutation (`radix_sort`);
#   - hipMemcpy host<->device (pinned, pageable) and managed memory moved by
#     hipMemPrefetchAsync, 256 MiB, best of 3 (`migrate`);
# and prints one table. Figures are printed, never asserted; the exit status
# is non-zero only when a program failed or gave wrong results.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "$ROOT"
ulimit -c 0

TARGET=gfx942
CONFIG=""
LAUNCHER="${ROCJITSU:-target/release/rocjitsu}"
HIPCC="${HIPCC:-hipcc}"
THREADS="1,$(nproc)"
CALLS=2
ONLY=""
TIMEOUT=3600

die() {
  echo "bench-stack: error: $*" >&2
  exit 2
}
log() { echo "bench-stack: $*" >&2; }

while (($#)); do
  case "$1" in
    --target) TARGET="${2:?}"; shift 2 ;;
    --config) CONFIG="${2:?}"; shift 2 ;;
    --threads) THREADS="${2:?}"; shift 2 ;;
    --rocjitsu) LAUNCHER="${2:?}"; shift 2 ;;
    --hipcc) HIPCC="${2:?}"; shift 2 ;;
    --calls) CALLS="${2:?}"; shift 2 ;;
    --only) ONLY="${2:?}"; shift 2 ;;
    -h | --help) sed -n '2,22p' "$0"; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done
case "$TARGET" in
  gfx90a) : "${CONFIG:=configs/gfx90a_cdna2_kmd.json}" ;;
  gfx942) : "${CONFIG:=configs/gfx942_cdna3_kmd.json}" ;;
  *) die "unknown target $TARGET (gfx942 or gfx90a: Debian's rocBLAS has no gfx950 kernels)" ;;
esac
[[ -f "$CONFIG" ]] || die "config $CONFIG not found"
command -v "$HIPCC" >/dev/null || die "hipcc not found ('$HIPCC'); run this in the ROCm 7 sysroot (make bench-stack)"
[[ -f /usr/include/rocblas/rocblas.h && -d /usr/include/rocprim ]] ||
  die "rocBLAS or rocPRIM headers missing: scripts/sysroot.sh --rocm 7 install librocblas-dev librocprim-dev"
[[ -x "$LAUNCHER" ]] || die "the launcher $LAUNCHER does not exist; build it with \`cargo build --release -p rocjitsu-cli -p rocjitsu-preload\`"

SRC=tests/bench/stack
OUT="build/bench-stack/$TARGET"
mkdir -p "$OUT"
hipcc_real="$(readlink -f "$(command -v "$HIPCC")")"
toolchain="$hipcc_real $(stat -c '%s %Y' "$hipcc_real")"
for src in "$SRC"/*.hip; do
  name="$(basename "$src" .hip)"
  exe="$OUT/$name"
  cmd=("$HIPCC" "--offload-arch=$TARGET" -O2 -std=c++17 -Wall -Itests/bench/hip "$src" -o "$exe" -lrocblas)
  stamp="${cmd[*]} # hipcc: $toolchain"
  if [[ -x "$exe" && -f "$exe.cmd" && "$(cat "$exe.cmd")" == "$stamp" && ! "$src" -nt "$exe" ]]; then
    continue
  fi
  log "building $exe"
  rm -f "$exe.cmd"
  "${cmd[@]}" || die "hipcc failed on $src"
  echo "$stamp" >"$exe.cmd"
done

rows=()
failures=0
row() { rows+=("$1"$'\t'"$2"$'\t'"$3"$'\t'"$4"); }
ns_now() { date +%s%N; }

# run THREADS NAME ARGS...: a program's BENCH lines become rows.
run() {
  local threads="$1" name="$2" t0 rc=0 out
  shift 2
  if [[ -n "$ONLY" && ",$ONLY," != *",$name,"* ]]; then
    return
  fi
  out="$OUT/$name-$threads-$(echo "$*" | tr ' ' '_').log"
  log "running $name $* with $threads thread(s)"
  t0=$(ns_now)
  timeout --kill-after=5 "$TIMEOUT" "$LAUNCHER" --config "$CONFIG" --threads "$threads" -- "$OUT/$name" "$@" >"$out" 2>&1 || rc=$?
  if ((rc != 0)) || grep -q '^FAIL' "$out"; then
    log "$name $* failed (exit status $rc); the end of its output:"
    tail -n 15 "$out" >&2
    row "$name $*" "$threads" "FAILED (exit $rc)" ""
    failures=$((failures + 1))
    return
  fi
  while read -r tag key value unit; do
    [[ "$tag" == BENCH ]] || continue
    row "$key" "$threads" "$value" "$unit"
  done <"$out"
  row "$name $*: process wall time" "$threads" "$(awk -v ns="$(($(ns_now) - t0))" 'BEGIN{printf "%.3f", ns/1e9}')" "s"
}

IFS=, read -r -a thread_counts <<<"$THREADS"
for t in "${thread_counts[@]}"; do
  for n in 1024 2048; do
    run "$t" gemm s "$n" "$CALLS"
    run "$t" gemm h "$n" "$CALLS"
  done
  run "$t" radix_sort $((16 << 20))
  run "$t" migrate 256
done

echo
echo "[stack] benchmarks: $TARGET, $CONFIG, $(date -u +%Y-%m-%dT%H:%MZ)"
echo "host: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1), $(nproc) cores"
{
  printf 'figure\tthreads\tvalue\tunit\n'
  if ((${#rows[@]})); then printf '%s\n' "${rows[@]}"; fi
} | awk -F'\t' '
  { fig[NR] = $1; thr[NR] = $2; val[NR] = $3; unit[NR] = $4
    if (length($1) > w1) w1 = length($1); if (length($3) > w3) w3 = length($3) }
  END {
    for (i = 1; i <= NR; i++) {
      printf "| %-*s | %7s | %*s | %-8s |\n", w1, fig[i], thr[i], w3, val[i], unit[i]
      if (i == 1) { s1 = sprintf("%*s", w1, ""); s3 = sprintf("%*s", w3, "")
        gsub(/ /, "-", s1); gsub(/ /, "-", s3); printf "|-%s-|---------|-%s-|----------|\n", s1, s3 }
    }
  }'
if ((failures)); then
  echo "bench-stack: $failures program(s) failed; their figures are missing" >&2
  exit 1
fi
