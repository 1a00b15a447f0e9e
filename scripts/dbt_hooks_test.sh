#!/usr/bin/env bash
# End-to-end tests of the DBT guest-mode hooks library (librocjitsu_hooks.so)
# with the unmodified ROCm user space of the Debian sid sysroots.
#
#   scripts/dbt_hooks_test.sh [--mode mixed|guest|both] [--no-hip-set] [--keep] [-v]
#
# --no-hip-set: leave out check 8 (the HIP set under guest mode), which
#   make test-dbt-guest runs too; make test passes it.
#
# --mode guest (the design's setup): the shipped configs/guest_gfx950_on_gfx942.json
#   (copied at log level info) under the launcher, whose GuestKfd adds a
#   synthetic gfx950 node next to the emulated gfx942 host, and which sets
#   HSA_TOOLS_LIB and ROCJITSU_DBT_CONFIG; also the _hardware config over a daemon.
# --mode mixed: no GuestKfd needed. The emulator serves a real gfx942 and a
#   real gfx950 GPU (build/dbt-hooks/mixed.json, made from the shipped
#   configs); the hooks are set by this script and must hide the gfx942, show
#   the gfx950 in its slot and run everything on the gfx942, translated.
# --mode both (default): mixed, then guest when the guest config exists.
#
# Checks, each against the real ROCr/HIP:
#   1. rocminfo (ROCm 6.4.3, --rocm 6 sysroot) shows exactly one GPU agent,
#      with the gfx950 name and ISA, no gfx942 agent, and the gfx950's memory
#      pool size (the guest's pools are public, the host's run);
#   2. (mixed) without ROCJITSU_DBT_CONFIG the library is inert: both GPUs show;
#   3. tests/hip/vector_add.hip built for gfx950 only (hipcc of the --rocm 7
#      sysroot; HIP 6.4.3 has no gfx950) passes, and the hooks report that its
#      code objects were translated to gfx942 and none failed;
#   4. tests/dbt/untranslatable.hip (v_cvt_pk_fp8_f32: OCP on gfx950, FNUZ on gfx942; no exact translation)
#      does not run: the load fails and stderr names the kernel, the PC and the
#      instruction;
#   5. tests/dbt/hsa_file_reader.cpp (raw HSA, on ROCm 6.4.3 and 7.2.4): one
#      gfx950 agent, a gfx950 code object loaded with a file-backed reader
#      (the file closed at once), the kernel found on that agent, the symbol's
#      agent the same, an AQL dispatch on its queue computing the right values;
#   6. tests/dbt/fatal_signal.cpp with ROCJITSU_DBT_SIGNAL_BACKTRACE=1: the
#      null write after hsa_init prints the address and a stack naming the
#      faulting function, and the process still dies of SIGSEGV;
#   7. (guest) host GPU 1 of a 2-GPU host: the guest is shown in GPU 1's
#      slot with ROCR_VISIBLE_DEVICES unset, `1` and `1,0` (the launcher
#      expands it, ROCr reorders the agents), and vector_add passes there;
#   8. (guest) the whole HIP set of tests/hip built for gfx950 passes under
#      the guest config (scripts/hip_tests.py: the guest is the GPU they see),
#      with the simulator backend and with the hardware backend over a
#      rocjitsu daemon serving the gfx942.
# Prints one line per check and `dbt-hooks: N passed, M failed`; exit 1 on a failure.
set -uo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "$REPO"
MODE=both
HIP_SET=1
KEEP=0
VERBOSE=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --mode) MODE="${2:-}"; shift 2 ;;
    --keep) KEEP=1; shift ;;
    --no-hip-set) HIP_SET=0; shift ;;
    -v) VERBOSE=1; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "dbt_hooks_test: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
case "$MODE" in mixed|guest|both) ;; *) echo "dbt_hooks_test: --mode takes mixed, guest or both, not '$MODE'" >&2; exit 2 ;; esac

OUT=build/dbt-hooks
mkdir -p "$OUT"
ROCJITSU="$REPO/target/release/rocjitsu"
HOOKS="$REPO/target/release/librocjitsu_hooks.so"
for f in "$ROCJITSU" "$HOOKS" "$REPO/target/release/librocjitsu.so"; do
  if [[ ! -f "$f" ]]; then
    echo "dbt_hooks_test: $f is missing; build it with cargo build --release -p rocjitsu-cli -p rocjitsu-preload -p rocjitsu-hsa-hooks" >&2
    exit 2
  fi
done

PASS=0
FAIL=0
ok() { echo "ok   $1"; PASS=$((PASS + 1)); }
bad() {
  echo "FAIL $1: $2"
  FAIL=$((FAIL + 1))
  if [[ -n "${3:-}" && -f "$3" ]]; then sed 's/^/     | /' "$3" | tail -n 30; fi
}

sys6() { bash scripts/sysroot.sh --rocm 6 run -- "$@"; }
sys7() { bash scripts/sysroot.sh --rocm 7 run -- "$@"; }

# The mixed config: the shipped gfx942 and gfx950 GPUs side by side (the
# second at the 2-GPU config's PCI location), and a dbt_guest file for the hooks.
python3 - "$OUT" <<'EOF'
import json, sys
out = sys.argv[1]
host = json.load(open("configs/gfx942_cdna3_kmd.json"))["gpus"][0]
guest = json.load(open("configs/gfx950_cdna4_kmd.json"))["gpus"][0]
guest["pci"]["location_id"] = json.load(open("configs/gfx942_cdna3_kmd_2gpu.json"))["gpus"][1]["pci"]["location_id"]
json.dump({"$schema": "../../configs/schema.json", "version": 1, "gpus": [host, guest]},
          open(f"{out}/mixed.json", "w"), indent=1)
json.dump({"version": 1, "dbt_guest": {"enabled": True, "guest_isa": "gfx950", "host_isa": "gfx942",
           "host_gpu_id": 0, "execution_backend": "simulator", "log_level": "info"}},
          open(f"{out}/mixed_dbt.json", "w"), indent=1)
import os
if os.path.exists("configs/guest_gfx950_on_gfx942.json"):
    # The shipped guest config at log level info (the hooks then report their
    # translations), its simulator_config made absolute.
    g = json.load(open("configs/guest_gfx950_on_gfx942.json"))
    d = g["dbt_guest"]
    d["log_level"] = "info"
    if "simulator_config" in d:
        d["simulator_config"] = os.path.abspath(os.path.join("configs", d["simulator_config"]))
    g.pop("$schema", None)
    json.dump(g, open(f"{out}/guest.json", "w"), indent=1)
    # Host GPU 1 of a 2-GPU host: the guest must take GPU 1's slot.
    d["host_gpu_id"] = 1
    d["simulator_config"] = os.path.abspath("configs/gfx942_cdna3_kmd_2gpu.json")
    json.dump(g, open(f"{out}/guest_2host.json", "w"), indent=1)
EOF

# Programs, gfx950 only.
for p in tests/hip/vector_add.hip tests/dbt/untranslatable.hip; do
  exe="$OUT/$(basename "$p" .hip)_gfx950"
  if [[ ! -x "$exe" || "$p" -nt "$exe" ]]; then
    if ! sys7 hipcc --offload-arch=gfx950 -O2 "$p" -o "$exe" >"$OUT/build.log" 2>&1; then
      bad "build $p" "hipcc --offload-arch=gfx950 failed" "$OUT/build.log"
    fi
  fi
done

if [[ ! -f "$OUT/add_one_gfx950.hsaco" || tests/dbt/add_one.hip -nt "$OUT/add_one_gfx950.hsaco" ]]; then
  sys7 hipcc --offload-arch=gfx950 --cuda-device-only --no-gpu-bundle-output -O2 tests/dbt/add_one.hip \
    -o "$OUT/add_one_gfx950.hsaco" >"$OUT/build.log" 2>&1 || bad "build add_one.hip" "hipcc failed" "$OUT/build.log"
fi
if [[ ! -x "$OUT/fatal_signal" || tests/dbt/fatal_signal.cpp -nt "$OUT/fatal_signal" ]]; then
  # -rdynamic: the handler names the program's own functions (dladdr).
  sys7 clang++-22 -O1 -Wall -rdynamic tests/dbt/fatal_signal.cpp -o "$OUT/fatal_signal" -lhsa-runtime64 \
    >"$OUT/build.log" 2>&1 || bad "build fatal_signal.cpp" "clang++-22 failed" "$OUT/build.log"
fi
if [[ ! -x "$OUT/hsa_file_reader" || tests/dbt/hsa_file_reader.cpp -nt "$OUT/hsa_file_reader" ]]; then
  sys7 clang++-22 -O1 -Wall tests/dbt/hsa_file_reader.cpp -o "$OUT/hsa_file_reader" -lhsa-runtime64 \
    >"$OUT/build.log" 2>&1 || bad "build hsa_file_reader.cpp" "clang++-22 failed" "$OUT/build.log"
fi

# run_under MODE SYSROOT LOG CMD...: the command under the launcher in MODE.
run_under() {
  local mode="$1" sys="$2" log="$3"
  shift 3
  local env=(env ROCJITSU_DBT_LOG=info)
  local config
  if [[ "$mode" == mixed ]]; then
    env+=(HSA_TOOLS_LIB="$HOOKS" ROCJITSU_DBT_CONFIG="$REPO/$OUT/mixed_dbt.json")
    config="$OUT/mixed.json"
  else
    config="$OUT/guest.json"
  fi
  "$sys" "${env[@]}" timeout 300 "$ROCJITSU" --config "$config" -- "$@" >"$log" 2>&1
}

check_rocminfo() {
  local mode="$1" log="$OUT/rocminfo_$1.log"
  run_under "$mode" sys6 "$log" rocminfo
  local rc=$?
  [[ $VERBOSE == 1 ]] && cat "$log"
  if [[ $rc != 0 ]]; then
    bad "$mode: rocminfo" "exit $rc" "$log"
    return
  fi
  local gpus names isas
  gpus=$(grep -c "Device Type: *GPU" "$log")
  names=$(awk '/^  Name:/ {print $2}' "$log" | tr '\n' ' ')
  isas=$(grep -o "amdgcn-amd-amdhsa--gfx[0-9a-z]*" "$log" | sort -u | tr '\n' ' ')
  if [[ "$gpus" != 1 ]]; then
    bad "$mode: rocminfo" "$gpus GPU agents (agents: $names), expected exactly 1" "$log"
  elif ! grep -q "^  Name: *gfx950 *$" "$log"; then
    bad "$mode: rocminfo" "no agent named gfx950 (agents: $names)" "$log"
  elif grep -q "^  Name: *gfx942 *$" "$log"; then
    bad "$mode: rocminfo" "the host gfx942 agent is visible (agents: $names)" "$log"
  elif [[ "$isas" != *"amdgcn-amd-amdhsa--gfx950"* || "$isas" == *"gfx942"* ]]; then
    bad "$mode: rocminfo" "ISAs '$isas': expected gfx950's, none of gfx942's" "$log"
  else
    # The guest's memory pools are public: the first GPU pool has the gfx950's size.
    local want got
    want=$(python3 -c 'import json; print(json.load(open("configs/gfx950_cdna4_kmd.json"))["gpus"][0]["memory"]["size_bytes"] // 1024)')
    got=$(sed -n '/^  Name: *gfx950/,$p' "$log" | awk '/Segment: *GLOBAL/ {p=1} p && /Size:/ {sub(/\(.*/, "", $2); print $2; exit}')
    if [[ "$got" != "$want" ]]; then
      bad "$mode: rocminfo" "the GPU's first global pool is $got KB, expected the gfx950's $want KB" "$log"
    else
      ok "$mode: rocminfo shows one GPU agent: gfx950, ISA amdgcn-amd-amdhsa--gfx950, the gfx950's pool size"
    fi
  fi
}

check_inert() {
  local log="$OUT/rocminfo_inert.log"
  sys6 env HSA_TOOLS_LIB="$HOOKS" timeout 300 "$ROCJITSU" --config "$OUT/mixed.json" -- rocminfo >"$log" 2>&1
  local names
  names=$(awk '/^  Name:/ {print $2}' "$log" | tr '\n' ' ')
  if grep -q "^  Name: *gfx942 *$" "$log" && grep -q "^  Name: *gfx950 *$" "$log" && ! grep -q "rocjitsu-hooks" "$log"; then
    ok "mixed: without ROCJITSU_DBT_CONFIG the hooks are inert (agents: $names)"
  else
    bad "mixed: inert" "expected both gfx942 and gfx950 and no hooks output (agents: $names)" "$log"
  fi
}

check_vector_add() {
  local mode="$1" log="$OUT/vector_add_$1.log"
  run_under "$mode" sys7 "$log" "$OUT/vector_add_gfx950"
  local rc=$?
  [[ $VERBOSE == 1 ]] && cat "$log"
  local translated
  translated=$(grep -o "code objects translated: [0-9]*" "$log" | grep -o "[0-9]*$")
  if [[ $rc != 0 ]] || ! grep -q "^PASS vector_add" "$log"; then
    bad "$mode: vector_add (gfx950 only)" "exit $rc, no PASS line" "$log"
  elif [[ -z "$translated" || "$translated" == 0 ]] || ! grep -q "failed: 0" "$log"; then
    bad "$mode: vector_add (gfx950 only)" "passed, but the hooks did not report translated code objects" "$log"
  else
    ok "$mode: vector_add built for gfx950 only passes on the gfx942 host ($translated code objects translated)"
  fi
}

check_untranslatable() {
  local mode="$1" log="$OUT/untranslatable_$1.log"
  run_under "$mode" sys7 "$log" "$OUT/untranslatable_gfx950"
  local rc=$?
  [[ $VERBOSE == 1 ]] && cat "$log"
  local msg
  msg=$(grep "cannot load a gfx950 code object" "$log")
  if [[ $rc == 0 ]]; then
    bad "$mode: untranslatable" "the program ran (exit 0): untranslated code must not run" "$log"
  elif [[ "$msg" != *fp8_kernel* || "$msg" != *v_cvt_pk_fp8_f32* || ! "$msg" =~ \+0x[0-9a-f]+ ]]; then
    bad "$mode: untranslatable" "no fail-closed message naming kernel, PC and instruction" "$log"
  else
    ok "$mode: untranslatable v_cvt_pk_fp8_f32 fails closed (exit $rc): ${msg#*: }"
  fi
}

check_file_reader() {
  local mode="$1" rocm="$2" log="$OUT/hsa_file_reader_$1_$2.log"
  run_under "$mode" "sys$rocm" "$log" "$OUT/hsa_file_reader" "$OUT/add_one_gfx950.hsaco"
  local rc=$?
  [[ $VERBOSE == 1 ]] && cat "$log"
  if [[ $rc != 0 ]] || ! grep -q "^PASS hsa_file_reader" "$log"; then
    bad "$mode: hsa_file_reader (ROCm $rocm)" "exit $rc" "$log"
  elif ! grep -q "code objects translated: 1 " "$log"; then
    bad "$mode: hsa_file_reader (ROCm $rocm)" "passed, but the file-backed code object was not translated" "$log"
  else
    ok "$mode: raw HSA on ROCm $rocm: file-backed gfx950 reader translated, kernel dispatched on the guest's queue"
  fi
}

check_signal_backtrace() {
  local mode="$1" log="$OUT/fatal_signal_$1.log"
  run_under "$mode" sys6 "$log" env ROCJITSU_DBT_SIGNAL_BACKTRACE=1 "$OUT/fatal_signal"
  local rc=$?
  [[ $VERBOSE == 1 ]] && cat "$log"
  if [[ $rc != 139 ]]; then
    bad "$mode: signal_backtrace" "exit $rc, expected death by SIGSEGV (139)" "$log"
  elif ! grep -q "fatal signal 11 (address 0x0)" "$log" || ! grep -q "fatal_signal+0x[0-9a-f]* (write_through" "$log"; then
    bad "$mode: signal_backtrace" "no report with the address and the faulting function" "$log"
  else
    ok "$mode: ROCJITSU_DBT_SIGNAL_BACKTRACE=1 prints the fault and a stack naming write_through, then SIGSEGV kills"
  fi
}

check_visible_devices() {
  local log="$OUT/visible.log" v want got
  for v in unset 1 1,0; do
    want=$(case $v in unset) echo "gfx942 gfx950" ;; 1) echo "gfx950" ;; 1,0) echo "gfx950 gfx942" ;; esac)
    if [[ $v == unset ]]; then
      sys6 timeout 300 "$ROCJITSU" --config "$OUT/guest_2host.json" -- rocminfo >"$log" 2>&1
    else
      sys6 env ROCR_VISIBLE_DEVICES=$v timeout 300 "$ROCJITSU" --config "$OUT/guest_2host.json" -- rocminfo >"$log" 2>&1
    fi
    got=$(awk '/^  Name: *gfx/ {print $2}' "$log" | tr '\n' ' ' | sed 's/ $//')
    if [[ "$got" != "$want" ]]; then
      bad "guest: host GPU 1 of 2, ROCR_VISIBLE_DEVICES=$v" "GPU agents '$got', expected '$want'" "$log"
      return
    fi
  done
  sys7 env ROCR_VISIBLE_DEVICES=1 timeout 300 "$ROCJITSU" --config "$OUT/guest_2host.json" -- "$OUT/vector_add_gfx950" >"$log" 2>&1
  if ! grep -q "^PASS vector_add" "$log"; then
    bad "guest: host GPU 1 of 2, ROCR_VISIBLE_DEVICES=1" "vector_add did not pass" "$log"
    return
  fi
  ok "guest: host GPU 1 of 2: the guest takes GPU 1's slot whatever ROCR_VISIBLE_DEVICES (unset, 1, 1,0) lists; vector_add passes"
}

check_hip_suite() {
  # scripts/hip_tests.py --guest: `hardware` runs over a daemon it starts.
  local backend="$1" log="$OUT/hip_guest_$1.log"
  if [[ $HIP_SET == 0 ]]; then
    echo "note guest ($backend backend): the HIP set is left to make test-dbt-guest (--no-hip-set)"
    return
  fi
  sys7 python3 scripts/hip_tests.py run --target gfx950 --guest "$backend" >"$log" 2>&1
  local rc=$? summary
  summary=$(grep "^hip: .* passed" "$log")
  [[ $VERBOSE == 1 ]] && cat "$log"
  if [[ $rc != 0 ]]; then
    bad "guest ($backend backend): the HIP set" "${summary:-exit $rc}" "$log"
  else
    ok "guest ($backend backend): the HIP set built for gfx950 (hip_tests.py --guest $backend): $summary"
  fi
}

if [[ "$MODE" == mixed || "$MODE" == both ]]; then
  check_rocminfo mixed
  check_inert
  check_vector_add mixed
  check_untranslatable mixed
  check_file_reader mixed 6
  check_file_reader mixed 7
  check_signal_backtrace mixed
fi
if [[ "$MODE" == guest || "$MODE" == both ]]; then
  if [[ ! -f configs/guest_gfx950_on_gfx942.json ]]; then
    if [[ "$MODE" == guest ]]; then
      bad "guest" "configs/guest_gfx950_on_gfx942.json is missing (GuestKfd's config)"
    else
      echo "note guest mode not run: configs/guest_gfx950_on_gfx942.json is missing"
    fi
  else
    check_rocminfo guest
    check_vector_add guest
    check_untranslatable guest
    check_file_reader guest 6
    check_file_reader guest 7
    check_signal_backtrace guest
    check_visible_devices
    check_hip_suite simulator
    check_hip_suite hardware
  fi
fi

echo "dbt-hooks: $PASS passed, $FAIL failed"
[[ $KEEP == 1 ]] || rm -f "$OUT"/*.log
[[ $FAIL == 0 ]]
