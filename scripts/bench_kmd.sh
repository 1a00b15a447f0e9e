#!/usr/bin/env bash
# [kmd] benchmarks: unmodified ROCm programs under the rocjitsu launcher.
#
#   scripts/bench_kmd.sh [--target gfx90a|gfx942|gfx950] [--config FILE] [--daemon]
#                        [--rocjitsu PATH] [--hipcc PATH] [--launches N] [--mib N]
#
# Builds tests/bench/hip/*.hip with hipcc into build/bench-hip/<target>/
# (only when a source changed), then measures
#   - the wall time of `rocminfo` under the launcher (median of 5 runs);
#   - empty-kernel launch-to-completion latency (launch + hipStreamSynchronize,
#     median and p90 over N launches, default 2000);
#   - hipMemcpy H2D and D2H bandwidth, pinned and pageable, 64 MiB;
#   - a 16M-float vector add end to end (alloc, copy in, kernel, copy out,
#     checked against the CPU);
# and prints them as one table. With --daemon every program runs in daemon
# mode (`rocjitsu --daemon --`: the GPU in a daemon process). Figures are printed, never asserted; the
# exit status is non-zero only when a program failed or gave wrong results.
# gfx942/gfx950 need the sid sysroot's ROCm: scripts/sysroot.sh run -- scripts/bench_kmd.sh --target gfx942
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "$ROOT"
ulimit -c 0 # a program that aborts leaves no core file in the repository

TARGET=gfx90a
CONFIG=""
LAUNCHER="${ROCJITSU:-target/release/rocjitsu}"
HIPCC="${HIPCC:-hipcc}"
LAUNCHES=2000
MIB=64
MODE=()
TIMEOUT=600

die() {
  echo "bench-kmd: error: $*" >&2
  exit 2
}
log() { echo "bench-kmd: $*" >&2; }

while (($#)); do
  case "$1" in
    --target) TARGET="${2:?}"; shift 2 ;;
    --config) CONFIG="${2:?}"; shift 2 ;;
    --rocjitsu) LAUNCHER="${2:?}"; shift 2 ;;
    --hipcc) HIPCC="${2:?}"; shift 2 ;;
    --launches) LAUNCHES="${2:?}"; shift 2 ;;
    --mib) MIB="${2:?}"; shift 2 ;;
    --daemon) MODE=(--daemon); shift ;;
    -h | --help) sed -n '2,20p' "$0"; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done
case "$TARGET" in
  gfx90a) : "${CONFIG:=configs/gfx90a_cdna2_kmd.json}" ;;
  gfx942) : "${CONFIG:=configs/gfx942_cdna3_kmd.json}" ;;
  gfx950) : "${CONFIG:=configs/gfx950_cdna4_kmd.json}" ;;
  *) die "unknown target $TARGET (gfx90a, gfx942, gfx950)" ;;
esac
[[ -f "$CONFIG" ]] || die "config $CONFIG not found"
command -v "$HIPCC" >/dev/null || die "hipcc not found ('$HIPCC'); run \`make setup\`"

SRC=tests/bench/hip
OUT="build/bench-hip/$TARGET"
mkdir -p "$OUT"

# 1. Build (incremental: the command line and the hipcc installation are
# recorded beside each binary; the host's and the sysroot's hipcc share a path).
hipcc_real="$(readlink -f "$(command -v "$HIPCC")")"
toolchain="$hipcc_real $(stat -c '%s %Y' "$hipcc_real")"
for src in "$SRC"/*.hip; do
  name="$(basename "$src" .hip)"
  exe="$OUT/$name"
  cmd=("$HIPCC" "--offload-arch=$TARGET" -O2 -std=c++17 -Wall "-I$SRC" "$src" -o "$exe")
  stamp="${cmd[*]} # hipcc: $toolchain"
  if [[ -x "$exe" && -f "$exe.cmd" && "$(cat "$exe.cmd")" == "$stamp" &&
    ! "$src" -nt "$exe" && ! "$SRC/bench.h" -nt "$exe" ]]; then
    continue
  fi
  log "building $exe"
  rm -f "$exe.cmd"
  "${cmd[@]}" || die "hipcc failed on $src"
  echo "$stamp" >"$exe.cmd"
done

[[ -x "$LAUNCHER" ]] || die "the launcher $LAUNCHER does not exist; build it with \`make build\` (cargo build --release --workspace), or name another with --rocjitsu"

# Rows of the table: "figure<TAB>value<TAB>unit".
rows=()
failures=0
row() { rows+=("$1"$'\t'"$2"$'\t'"$3"); }

ns_now() { date +%s%N; }

# 2. rocminfo wall time, median of 5.
if command -v rocminfo >/dev/null; then
  times=()
  ok=1
  for i in 1 2 3 4 5; do
    log "rocminfo run $i/5"
    t0=$(ns_now)
    if ! timeout --kill-after=5 "$TIMEOUT" "$LAUNCHER" --config "$CONFIG" "${MODE[@]}" -- rocminfo >"$OUT/rocminfo.log" 2>&1; then
      ok=0
      log "rocminfo failed under the launcher; the end of its output:"
      tail -n 15 "$OUT/rocminfo.log" >&2
      break
    fi
    times+=($(($(ns_now) - t0)))
  done
  if ((ok)); then
    median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n 3p)
    row "rocminfo wall time (median of 5)" "$(awk -v ns="$median" 'BEGIN{printf "%.3f", ns/1e9}')" "s"
    if grep -q "Name: *$TARGET" "$OUT/rocminfo.log"; then
      row "rocminfo lists the $TARGET agent" "yes" ""
    else
      row "rocminfo lists the $TARGET agent" "NO" ""
      failures=$((failures + 1))
    fi
  else
    row "rocminfo wall time (median of 5)" "FAILED" ""
    failures=$((failures + 1))
  fi
else
  row "rocminfo wall time" "n/a (rocminfo not installed)" ""
fi

# 3. The benchmark programs; each prints `BENCH key value unit` lines.
declare -A LABELS=(
  [launch_iterations]="empty kernel: launches timed"
  [launch_latency_median]="empty kernel launch+sync latency, median"
  [launch_latency_p90]="empty kernel launch+sync latency, p90"
  [launch_latency_mean]="empty kernel launch+sync latency, mean"
  [launch_rate]="empty kernel launches per second"
  [memcpy_size]="hipMemcpy buffer size"
  [memcpy_h2d_pinned_median]="hipMemcpy H2D pinned, median of 5"
  [memcpy_h2d_pinned_best]="hipMemcpy H2D pinned, best of 5"
  [memcpy_d2h_pinned_median]="hipMemcpy D2H pinned, median of 5"
  [memcpy_d2h_pinned_best]="hipMemcpy D2H pinned, best of 5"
  [memcpy_h2d_pageable_median]="hipMemcpy H2D pageable, median of 5"
  [memcpy_h2d_pageable_best]="hipMemcpy H2D pageable, best of 5"
  [memcpy_d2h_pageable_median]="hipMemcpy D2H pageable, median of 5"
  [memcpy_d2h_pageable_best]="hipMemcpy D2H pageable, best of 5"
  [vadd_length]="vector add: length"
  [vadd_alloc]="vector add: 3 x hipMalloc"
  [vadd_copy_in]="vector add: copy 2 inputs in"
  [vadd_kernel]="vector add: kernel + sync"
  [vadd_copy_out]="vector add: copy result out"
  [vadd_total]="vector add: end to end"
  [vadd_kernel_rate]="vector add: kernel throughput"
)

run_bench() {
  local name="$1" t0 rc=0 out
  shift
  out="$OUT/$name.log"
  log "running $name $*"
  t0=$(ns_now)
  timeout --kill-after=5 "$TIMEOUT" "$LAUNCHER" --config "$CONFIG" "${MODE[@]}" -- "$OUT/$name" "$@" >"$out" 2>&1 || rc=$?
  if ((rc != 0)) || grep -q '^FAIL' "$out"; then
    log "$name failed (exit status $rc); the end of its output:"
    tail -n 15 "$out" >&2
    row "$name" "FAILED (exit $rc)" ""
    failures=$((failures + 1))
    return
  fi
  while read -r tag key value unit; do
    [[ "$tag" == BENCH ]] || continue
    row "${LABELS[$key]:-$key}" "$value" "$unit"
  done <"$out"
  row "$name: process wall time" "$(awk -v ns="$(($(ns_now) - t0))" 'BEGIN{printf "%.3f", ns/1e9}')" "s"
}

run_bench launch_latency "$LAUNCHES"
run_bench memcpy_bandwidth "$MIB"
run_bench vector_add_e2e

# 4. The table.
echo
echo "[kmd] benchmarks: $TARGET, $CONFIG, $(date -u +%Y-%m-%dT%H:%MZ)"
echo "host: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1), $(nproc) cores"
{
  printf 'figure\tvalue\tunit\n'
  printf '%s\n' "${rows[@]}"
} | awk -F'\t' '
  { fig[NR] = $1; val[NR] = $2; unit[NR] = $3
    if (length($1) > w1) w1 = length($1); if (length($2) > w2) w2 = length($2) }
  END {
    for (i = 1; i <= NR; i++) {
      printf "| %-*s | %*s | %-10s |\n", w1, fig[i], w2, val[i], unit[i]
      if (i == 1) { s1 = sprintf("%*s", w1, ""); s2 = sprintf("%*s", w2, "")
        gsub(/ /, "-", s1); gsub(/ /, "-", s2); printf "|-%s-|-%s-|------------|\n", s1, s2 }
    }
  }'
if ((failures)); then
  echo "bench-kmd: $failures step(s) failed; their figures are missing" >&2
  exit 1
fi
