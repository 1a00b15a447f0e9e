#!/usr/bin/env bash
# `make test` runs each of its steps through this: `stage.sh NAME CMD...`
# runs CMD and appends "stage NAME: N s" (with the CPU seconds its processes
# used, and the time since .ci/run started when ROCJITSU_CI_T0 is set) to
# build/stage-times.txt, which .ci/run prints at the end, so a CI log shows
# where its 90 minutes went. `stage.sh --check` fails if a step failed.
set -uo pipefail
if [[ "${1:-}" == --check ]]; then
  # `stage.sh --check`: fails, naming them, if any step recorded so far did.
  failed=$(grep -v ', exit 0' build/stage-times.txt 2>/dev/null | sed 's/^stage \([^:]*\):.*exit \([0-9]*\).*/\1 (exit \2)/')
  if [[ -n "$failed" ]]; then
    echo "make test: these steps failed:" $failed >&2
    exit 1
  fi
  exit 0
fi
name=$1
shift
start=$(date +%s)
"$@"
rc=$?
end=$(date +%s)
cpu=$(awk -v t="$(cat /proc/$$/stat 2>/dev/null | awk '{print $16+$17}')" -v hz="$(getconf CLK_TCK)" 'BEGIN{printf "%d", t/hz}')
line="stage $name: $((end - start)) s wall, ${cpu} s CPU, exit $rc"
[[ -n "${ROCJITSU_CI_T0:-}" ]] && line+=", ended at +$((end - ROCJITSU_CI_T0)) s"
mkdir -p build
echo "$line" | tee -a build/stage-times.txt
exit "$rc"
