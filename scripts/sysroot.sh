#!/usr/bin/env bash
# A Debian sid root file system with a modern ROCm user space. The host's
# bookworm ROCm 5.2.3 knows gfx90a only.
#   --rocm 6 (default): sid's ROCm 6.4.3 (ROCr/HIP 6.4.3, hipcc 7.0.2, clang
#            21): ROCr knows gfx942 and gfx950, HIP (ROCclr) only gfx942.
#   --rocm 7: sid plus experimental's ROCm 7.2.4 (ROCr/HIP 7.2.4, hipcc 7.2.4,
#            clang 22): HIP knows gfx950 too.
#
#   scripts/sysroot.sh [--rocm 6|7] [build]        build it when missing or when the
#                                                  package list changed; print its path
#   scripts/sysroot.sh [--rocm 6|7] path           print its path (no build)
#   scripts/sysroot.sh [--rocm 6|7] run [--bind DIR]... [--] CMD…
#                                                  run CMD inside it (built first if needed);
#                                                  --bind makes a host directory visible
#                                                  at the same path (e.g. a download cache)
#   scripts/sysroot.sh [--rocm 6|7] install PKG…   install packages it lacks (test suites)
#   scripts/sysroot.sh [--rocm 6|7] clean          delete it
#
# The sysroot is a directory, $ROCJITSU_CACHE/sysroot-sid-rocm6 or
# sysroot-sid-rocm7 (default cache ~/.cache/rocjitsu). A stamp file inside it
# records the suite, mirror and package list it was built from; a different
# list rebuilds it.
#
# `run` enters a private mount namespace (unshare -m), mounts /proc, binds /sys
# and /dev (recursively), binds the repository at its own path (so
# target/release/rocjitsu and build/ are reachable) and the working directory
# when it is elsewhere, then chroots and changes to the same working directory.
# The mounts belong to the namespace and vanish with it; a trap unmounts them
# explicitly too. Needs root (debootstrap, chroot, mount).
set -euo pipefail

SUITE=sid
MIRROR="${ROCJITSU_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
# python3-minimal: scripts/hip_tests.py runs inside the sysroot.
PACKAGES=(rocminfo hipcc libamdhip64-dev python3-minimal)
CACHE="${ROCJITSU_CACHE:-$HOME/.cache/rocjitsu}"
ROCM=6
if [[ "${1:-}" == "--rocm" ]]; then
  ROCM="${2:-}"
  shift 2 || true
fi
case "$ROCM" in
  6) EXTRA_SUITE="" ;;
  # The ROCm packages come from experimental, the rest from sid.
  7) EXTRA_SUITE=experimental ;;
  *) echo "sysroot: FAILED: --rocm takes 6 or 7, not '$ROCM'" >&2; exit 2 ;;
esac
ROOT="$CACHE/sysroot-sid-rocm$ROCM"
STAMP_NAME=.rocjitsu-sysroot
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"

log() { echo "sysroot: $*" >&2; }
die() {
  echo "sysroot: FAILED: $*" >&2
  exit 1
}

stamp_text() {
  printf 'suite=%s\nextra=%s\nmirror=%s\npackages=%s\n' "$SUITE" "$EXTRA_SUITE" "$MIRROR" "${PACKAGES[*]}"
}

is_current() {
  [[ -f "$ROOT/$STAMP_NAME" ]] && [[ "$(cat "$ROOT/$STAMP_NAME")" == "$(stamp_text)" ]]
}

# Runs CMD with its output in LOG: quietly LOG CMD...
quietly() {
  local out="$1"
  shift
  "$@" >"$out" 2>&1
}

# Runs "$@" and logs its wall time under the label $1 (the rest is the command).
timed() {
  local label="$1" start rc=0
  shift
  start=$(date +%s)
  "$@" || rc=$?
  log "$label: $(($(date +%s) - start)) s"
  return "$rc"
}

ensure_debootstrap() {
  command -v debootstrap >/dev/null && return 0
  log "installing debootstrap (apt-get)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null ||
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null; } ||
    die "cannot install debootstrap (run: apt-get install debootstrap)"
}

# Commands run inside the half-built tree (apt needs /proc and /dev).
in_new_root() {
  local dir="$1"
  shift
  unshare --mount --fork -- bash -c '
    set -e
    dir="$1"; shift
    mount -t proc proc "$dir/proc"
    mount --rbind /dev "$dir/dev"
    mount --rbind /sys "$dir/sys"
    exec chroot "$dir" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
      DEBIAN_FRONTEND=noninteractive LC_ALL=C "$@"
  ' bash "$dir" "$@"
}

build() {
  if is_current; then
    return 0
  fi
  [[ $EUID -eq 0 ]] || die "building the sysroot needs root (debootstrap, chroot)"
  ensure_debootstrap
  mkdir -p "$CACHE"
  local tmp="$ROOT.tmp.$$" t0
  t0=$(date +%s)
  # Leftovers of interrupted builds (callers hold the lock).
  rm -rf --one-file-system "$ROOT".tmp.*
  # A half-built tree must never be taken for a finished one: build beside it,
  # stamp it, then swap it in.
  trap 'rm -rf --one-file-system "$tmp" 2>/dev/null || true' EXIT
  local size="about 2 min, 1 GB" from=() extra_log=""
  if [[ -n "$EXTRA_SUITE" ]]; then
    size="about 1 min, 1 GB"
    from=(-t "$EXTRA_SUITE")
    extra_log=" from $EXTRA_SUITE"
  fi
  log "building $ROOT (debootstrap --variant=minbase $SUITE, then ${PACKAGES[*]}$extra_log); $size"
  log "step 1/3: debootstrap from $MIRROR"
  timed "debootstrap" quietly "$CACHE/sysroot-debootstrap.log" \
    debootstrap --variant=minbase "$SUITE" "$tmp" "$MIRROR" ||
    die "debootstrap failed; log: $CACHE/sysroot-debootstrap.log"
  if [[ -n "$EXTRA_SUITE" ]]; then
    echo "deb $MIRROR $EXTRA_SUITE main" >"$tmp/etc/apt/sources.list.d/$EXTRA_SUITE.list"
  fi
  log "step 2/3: apt-get update (sid's Release file may be past its Valid-Until)"
  timed "apt-get update" in_new_root "$tmp" apt-get -qq -o Acquire::Check-Valid-Until=false update ||
    die "apt-get update inside the sysroot"
  log "step 3/3: apt-get install --no-install-recommends ${PACKAGES[*]}"
  timed "apt-get install" quietly "$CACHE/sysroot-apt.log" in_new_root "$tmp" apt-get install -y -qq \
    --no-install-recommends -o Acquire::Check-Valid-Until=false "${from[@]}" "${PACKAGES[@]}" ||
    die "apt-get install inside the sysroot; log: $CACHE/sysroot-apt.log"
  in_new_root "$tmp" apt-get clean
  stamp_text >"$tmp/$STAMP_NAME"
  if [[ -e "$ROOT" ]]; then
    log "replacing the outdated $ROOT"
    rm -rf --one-file-system "$ROOT"
  fi
  mv "$tmp" "$ROOT"
  trap - EXIT
  log "ready: $ROOT ($(du -sh "$ROOT" | cut -f1), $(($(date +%s) - t0)) s in all)"
  log "versions: $(chroot "$ROOT" dpkg-query -W -f='${Package} ${Version}  ' hipcc "libamdhip64-$ROCM" rocminfo 2>/dev/null || true)"
}

# run_inside BINDS CMD...: BINDS is a list of host directories (separated
# by newlines) to bind at the same path.
run_inside() {
  [[ $EUID -eq 0 ]] || die "running in the sysroot needs root (mount, chroot)"
  local binds="$1"
  shift
  [[ $# -gt 0 ]] || die "usage: scripts/sysroot.sh run [--bind DIR]... [--] CMD [ARGS...]"
  local cwd
  cwd="$(pwd -P)"
  # The inner script runs in a fresh mount namespace; everything it mounts
  # disappears when that namespace ends, and the trap unmounts eagerly.
  unshare --mount --propagation private --fork -- bash -c '
    set -euo pipefail
    root="$1" repo="$2" cwd="$3" binds="$4"; shift 4
    mounted=()
    cleanup() {
      local i
      for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
        umount -l "${mounted[i]}" 2>/dev/null || true
      done
    }
    trap cleanup EXIT
    bind() {
      mkdir -p "$root$2"
      mount --rbind "$1" "$root$2"
      mounted+=("$root$2")
    }
    mount -t proc proc "$root/proc"; mounted+=("$root/proc")
    bind /sys /sys
    bind /dev /dev
    bind "$repo" "$repo"
    case "$cwd/" in
      "$repo"/*) ;;
      *) [[ "$cwd" == / ]] || bind "$cwd" "$cwd" ;;
    esac
    while IFS= read -r d; do
      [[ -n "$d" ]] && bind "$d" "$d"
    done <<<"$binds"
    # Pass on the variables that steer rocjitsu and the ROCm runtime.
    keep=()
    for v in $(compgen -e); do
      case "$v" in ROCJITSU_* | HIP_* | HSA_* | AMD_* | ROCR_*) keep+=("$v=${!v}") ;; esac
    done
    chroot "$root" /usr/bin/env -i -C "$cwd" \
      PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      HOME=/root LC_ALL=C.UTF-8 TERM="${TERM:-dumb}" "${keep[@]}" \
      "$@"
  ' bash "$ROOT" "$REPO" "$cwd" "$binds" "$@"
}

# Installs packages the sysroot lacks (AMD's library test suites, which
# scripts/rocm_suites.py runs), from $EXTRA_SUITE where given; the stamp is
# not changed, so the base list still decides when the sysroot is rebuilt.
install_packages() {
  [[ $EUID -eq 0 ]] || die "installing into the sysroot needs root (chroot)"
  [[ $# -gt 0 ]] || die "usage: scripts/sysroot.sh [--rocm 6|7] install PKG..."
  local missing=() p from=()
  for p in "$@"; do
    chroot "$ROOT" dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
      missing+=("$p")
  done
  [[ ${#missing[@]} -eq 0 ]] && { log "installed already: $*"; return 0; }
  [[ -n "$EXTRA_SUITE" ]] && from=(-t "$EXTRA_SUITE")
  log "apt-get install ${missing[*]} (the test suites can be large: rocPRIM's is 1.9 GB)"
  if ! timed "apt-get install" quietly "$CACHE/sysroot-apt-install.log" in_new_root "$ROOT" \
    apt-get install -y -qq --no-install-recommends -o Acquire::Check-Valid-Until=false \
    "${from[@]}" "${missing[@]}"; then
    log "retrying after apt-get update"
    in_new_root "$ROOT" apt-get -qq -o Acquire::Check-Valid-Until=false update ||
      die "apt-get update inside the sysroot"
    timed "apt-get install" quietly "$CACHE/sysroot-apt-install.log" in_new_root "$ROOT" \
      apt-get install -y -qq --no-install-recommends -o Acquire::Check-Valid-Until=false \
      "${from[@]}" "${missing[@]}" ||
      die "apt-get install ${missing[*]} inside the sysroot; log: $CACHE/sysroot-apt-install.log"
  fi
  in_new_root "$ROOT" apt-get clean
}

# Builds under a lock so that two concurrent callers do not both build.
locked_build() {
  mkdir -p "$CACHE"
  (
    flock 9
    build
  ) 9>"$CACHE/sysroot.lock"
}

cmd="${1:-build}"
[[ $# -gt 0 ]] && shift
case "$cmd" in
  build)
    locked_build
    echo "$ROOT"
    ;;
  path) echo "$ROOT" ;;
  run)
    binds=""
    while [[ "${1:-}" == "--bind" ]]; do
      [[ -d "${2:-}" ]] || die "--bind takes an existing directory, not '${2:-}'"
      binds+="$(cd "$2" && pwd -P)"$'\n'
      shift 2
    done
    [[ "${1:-}" == "--" ]] && shift
    locked_build
    run_inside "$binds" "$@"
    ;;
  install)
    locked_build
    (
      flock 9
      install_packages "$@"
    ) 9>"$CACHE/sysroot.lock"
    ;;
  clean)
    rm -rf --one-file-system "$ROOT" "$ROOT".tmp.*
    log "removed $ROOT"
    ;;
  *) die "unknown command '$cmd' ([--rocm 6|7] build | path | run [--] CMD... | install PKG... | clean)" ;;
esac
