#!/usr/bin/env bash
# [daemon] figures, printed, never asserted:
#   - the round trip of a small ioctl from a client to a daemon (cargo bench
#     --bench rpc: median, p90, p99);
#   - the HIP test set's wall time in daemon mode (a daemon per program) and
#     in attach mode (one daemon for all) over local mode, alternating runs,
#     over the programs that apply to all three modes;
#   - the [kmd] table (hipMemcpy bandwidth, launch latency, ...) in daemon
#     mode.
#
#   scripts/bench_daemon.sh [--target gfx90a|gfx942] [--runs N]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "$ROOT"
TARGET=gfx90a
RUNS=3
while (($#)); do
  case "$1" in
    --target) TARGET="${2:?}"; shift 2 ;;
    --runs) RUNS="${2:?}"; shift 2 ;;
    -h | --help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "bench-daemon: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done

echo "== RPC round trip (cargo bench -p rocjitsu-kmd --bench rpc)"
cargo bench -q -p rocjitsu-kmd --bench rpc 2>/dev/null | grep BENCH

echo "== HIP test set wall time, $TARGET, $RUNS alternating runs per mode"
python3 scripts/hip_tests.py build --target "$TARGET" >/dev/null
# The same programs in every mode: those that apply to local mode too (a
# program such as ipc runs only where processes share one GPU).
common=()
while read -r name _; do
  src="tests/hip/$name.hip"
  if [[ -f "$src" ]] && grep -q '// hip-test modes:' "$src" && ! grep -q '// hip-test modes:.*local' "$src"; then
    continue
  fi
  common+=("$name")
done < <(python3 scripts/hip_tests.py list --target "$TARGET")
only=$(IFS=,; echo "${common[*]}")
declare -A total
for mode in local daemon attach; do total[$mode]=""; done
for ((i = 1; i <= RUNS; i++)); do
  for mode in local daemon attach; do
    t0=$(date +%s%N)
    python3 scripts/hip_tests.py run --no-build --target "$TARGET" --mode "$mode" -k "$only" >/dev/null ||
      echo "bench-daemon: the $mode run had failures" >&2
    total[$mode]+="$(( ($(date +%s%N) - t0) / 1000000 )) "
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
l=$(echo "${total[local]}" | median)
for mode in local daemon attach; do
  m=$(echo "${total[$mode]}" | median)
  printf 'BENCH hip_set_%s_ms %s (runs: %s) ratio_to_local %s\n' "$mode" "$m" "${total[$mode]% }" \
    "$(awk -v a="$m" -v b="$l" 'BEGIN{printf "%.2f", a/b}')"
done

echo "== [kmd] figures in daemon mode"
bash scripts/bench_kmd.sh --target "$TARGET" --daemon --launches 1000
