#!/usr/bin/env bash
# End-to-end checks of DBT guest mode's KFD layer (GuestKfd) and launcher,
# with the unmodified ROCm user space of the Debian sid sysroots.
#
#   scripts/dbt_guest_test.sh [-v]
#
#   1. rocminfo (ROCm 6.4.3) under configs/guest_gfx950_on_gfx942.json WITHOUT
#      the hooks library (--no-dbt-hooks): ROCr initialises both agents from
#      GuestKfd's topology: exactly two GPU agents, gfx942 (AMD Instinct
#      MI300X) and gfx950 (AMD Instinct MI355X, chip id 0x75a3);
#   2. the same with the hardware backend over a rocjitsu daemon serving gfx942;
#   3. with the hooks and ROCR_VISIBLE_DEVICES=0, rocminfo shows exactly one GPU,
#      the gfx950 (the launcher keeps the host ordinal and appends the guest's;
#      the program sees ROCR_VISIBLE_DEVICES=0,1);
#   4. guest execution that the hooks did not redirect fails visibly: without the
#      hooks and with HIP_VISIBLE_DEVICES=1 (the guest), a gfx950 vector_add
#      (ROCm 7.2.4) fails and stderr names CREATE_QUEUE on the guest GPU with
#      the hint about the hooks library;
#   5. the launcher refuses --daemon/--attach with a guest configuration, and
#      the hardware backend without a host daemon, with errors that say why.
# Prints one line per check and `dbt-guest: N passed, M failed`; exit 1 on a failure.
set -uo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "$REPO"
VERBOSE=0
case "${1:-}" in
  -v) VERBOSE=1 ;;
  -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  "") ;;
  *) echo "dbt_guest_test: unknown argument '$1' (see --help)" >&2; exit 2 ;;
esac
ROCJITSU="$REPO/target/release/rocjitsu"
for f in "$ROCJITSU" "$REPO/target/release/librocjitsu.so" "$REPO/target/release/librocjitsu_hooks.so"; do
  if [[ ! -f "$f" ]]; then
    echo "dbt_guest_test: $f is missing; build it with cargo build --release -p rocjitsu-cli -p rocjitsu-preload -p rocjitsu-hsa-hooks" >&2
    exit 2
  fi
done
OUT="$REPO/build/dbt-guest"
mkdir -p "$OUT"
SIM=configs/guest_gfx950_on_gfx942.json
HW=configs/guest_gfx950_on_gfx942_hardware.json

PASS=0
FAIL=0
ok() { echo "ok   $1"; PASS=$((PASS + 1)); }
bad() {
  echo "FAIL $1: $2"
  FAIL=$((FAIL + 1))
  if [[ -n "${3:-}" && -f "$3" ]]; then sed 's/^/     | /' "$3" | tail -n 30; fi
}
show() { [[ $VERBOSE == 1 ]] && sed 's/^/     | /' "$1"; return 0; }
sys6() { bash scripts/sysroot.sh --rocm 6 run -- "$@"; }
sys7() { bash scripts/sysroot.sh --rocm 7 run -- "$@"; }

# The GPU agents rocminfo lists: "name|marketing name" per GPU agent.
gpu_agents() {
  awk '/^\*+ *$/ {agent++} /^  Name:/ {n[agent]=$2} /^  Marketing Name:/ {sub(/^  Marketing Name: +/, ""); sub(/ +$/, ""); m[agent]=$0}
       /^  Device Type: +GPU/ {g[agent]=1} END {for (a in g) print n[a] "|" m[a]}' "$1" | sort
}

check_two_agents() {  # name, output file
  local want got
  want=$'gfx942|AMD Instinct MI300X\ngfx950|AMD Instinct MI355X'
  got="$(gpu_agents "$2")"
  if [[ "$got" == "$want" ]] && grep -q 'Chip ID: *30115(0x75a3)' "$2"; then
    ok "$1"
  else
    bad "$1" "GPU agents [${got//$'\n'/, }], expected [${want//$'\n'/, }] with the MI355X chip id 0x75a3" "$2"
  fi
  show "$2"
}

# 1. Both agents without the hooks (simulator backend).
f="$OUT/rocminfo-nohooks.txt"
if sys6 "$ROCJITSU" --config "$SIM" --no-dbt-hooks -- rocminfo >"$f" 2>&1; then
  check_two_agents "rocminfo without hooks: gfx942 and gfx950 agents (simulator)" "$f"
else
  bad "rocminfo without hooks (simulator)" "exit status $?" "$f"
fi

# 2. The same over a daemon serving gfx942 (hardware backend).
SOCK="$OUT/host.sock"
rm -f "$SOCK"
"$ROCJITSU" --config configs/gfx942_cdna3_kmd.json --daemon --socket "$SOCK" >"$OUT/daemon.log" 2>&1 &
DAEMON=$!
trap 'kill $DAEMON 2>/dev/null; wait $DAEMON 2>/dev/null' EXIT
for _ in $(seq 100); do
  "$ROCJITSU" daemon-status --socket "$SOCK" >/dev/null 2>&1 && break
  sleep 0.1
done
f="$OUT/rocminfo-nohooks-hw.txt"
if sys6 "$ROCJITSU" --config "$HW" --socket "$SOCK" --no-dbt-hooks -- rocminfo >"$f" 2>&1; then
  check_two_agents "rocminfo without hooks: gfx942 and gfx950 agents (hardware, over a daemon)" "$f"
else
  bad "rocminfo without hooks (hardware, over a daemon)" "exit status $?" "$f"
fi

# 3. ROCR_VISIBLE_DEVICES=0 keeps host and guest visible; the hooks show the guest alone.
f="$OUT/rocminfo-visible.txt"
if sys6 env ROCR_VISIBLE_DEVICES=0 "$ROCJITSU" --config "$SIM" -- rocminfo >"$f" 2>&1; then
  got="$(gpu_agents "$f")"
  if [[ "$got" == "gfx950|AMD Instinct MI355X" ]]; then
    ok "ROCR_VISIBLE_DEVICES=0: one GPU agent, the gfx950"
  else
    bad "ROCR_VISIBLE_DEVICES=0" "GPU agents [${got//$'\n'/, }], expected [gfx950|AMD Instinct MI355X]" "$f"
  fi
else
  bad "ROCR_VISIBLE_DEVICES=0" "rocminfo: exit status $?" "$f"
fi
got="$(ROCR_VISIBLE_DEVICES=0 "$ROCJITSU" --config "$SIM" -- sh -c 'echo "$ROCR_VISIBLE_DEVICES"' 2>/dev/null)"
[[ "$got" == "0,1" ]] && ok "ROCR_VISIBLE_DEVICES=0 reaches the program as 0,1" \
  || bad "ROCR_VISIBLE_DEVICES expansion" "the program saw '$got', expected '0,1'"

# 4. An execution call on the guest that the hooks did not redirect fails visibly.
exe=build/hip/gfx950/vector_add
if [[ ! -x "$exe" ]]; then
  sys7 python3 scripts/hip_tests.py build --target gfx950 -k vector_add >"$OUT/build.txt" 2>&1
fi
f="$OUT/guest-queue.txt"
if [[ -x "$exe" ]]; then
  sys7 env HIP_VISIBLE_DEVICES=1 "$ROCJITSU" --config "$SIM" --no-dbt-hooks -- timeout 120 "$exe" >"$f" 2>&1
  rc=$?
  if [[ $rc != 0 ]] && grep -q "CREATE_QUEUE on the guest GPU (gfx950" "$f" && grep -q "librocjitsu_hooks.so" "$f" \
     && ! grep -q "^PASS vector_add" "$f"; then
    ok "guest CREATE_QUEUE without the hooks fails (exit $rc) and is logged with the hint"
  else
    bad "guest CREATE_QUEUE without the hooks" "exit $rc; expected a failure naming CREATE_QUEUE on the guest GPU" "$f"
  fi
  show "$f"
else
  bad "guest CREATE_QUEUE without the hooks" "$exe could not be built" "$OUT/build.txt"
fi

# 5. Launcher errors.
expect_error() {  # name, text, command...
  local name="$1" text="$2"
  shift 2
  local out
  out="$("$@" 2>&1)"
  local rc=$?
  if [[ $rc != 0 && "$out" == *"$text"* ]]; then ok "$name"; else bad "$name" "exit $rc, output: $out"; fi
}
expect_error "--daemon with a guest config is refused" "guest mode runs the program locally only" \
  "$ROCJITSU" --config "$SIM" --daemon -- true
expect_error "--attach with a guest config is refused" "guest mode runs the program locally only" \
  "$ROCJITSU" --config "$SIM" --attach --socket "$SOCK" -- true
expect_error "hardware backend without a host daemon is refused" "needs the next KFD down" \
  env -u ROCJITSU_DBT_HOST_SOCKET "$ROCJITSU" --config "$HW" -- true
expect_error "hardware backend with a dead socket is refused" "the hardware backend's host daemon must be running" \
  "$ROCJITSU" --config "$HW" --socket "$OUT/nobody.sock" -- true

echo "dbt-guest: $PASS passed, $FAIL failed"
[[ $FAIL == 0 ]]
