#!/usr/bin/env bash
# Installs what rocjitsu's build, demo and tests need:
#   - Debian packages llvm-22, clang-22, lld-22 (the oracle and the corpus compilers);
#   - Triton (pinned below) in a venv under $ROCJITSU_CACHE (default
#     ~/.cache/rocjitsu), used to compile the Triton kernels of the corpus,
#     and numpy there for the executed-kernel tests' references.
# Idempotent and quick (well under 2 s) when everything is already present:
# versions are checked, not the existence of directories.
set -euo pipefail

TRITON_VERSION=3.9.0
CACHE="${ROCJITSU_CACHE:-$HOME/.cache/rocjitsu}"
VENV="$CACHE/triton-venv"
PYTHON="${PYTHON:-python3}"

log() { echo "setup: $*" >&2; }
die() { echo "setup: FAILED: $*" >&2; exit 1; }

apt_updated=0
apt_install() {
  if ((apt_updated == 0)); then
    log "apt-get update"
    apt-get update -qq || die "apt-get update"
    apt_updated=1
  fi
  log "apt-get install $*"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null ||
    die "apt-get install $*"
}

# 1. LLVM 22 toolchain.
need=()
for p in llvm-22 clang-22 lld-22; do
  [[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" == "install ok installed" ]] || need+=("$p")
done
if ((${#need[@]})); then
  apt_install "${need[@]}"
fi
for tool in clang-22 clang++-22 ld.lld-22 llvm-objdump-22 llvm-mc-22; do
  command -v "$tool" >/dev/null || die "$tool not on PATH after installing llvm-22 clang-22 lld-22"
done

# 2. Triton in a venv.
venv_triton_version() {
  [[ -x "$VENV/bin/python" ]] || return 1
  "$VENV/bin/python" - <<'EOF' 2>/dev/null
import importlib.metadata as m
print(m.version("triton"))
EOF
}

have="$(venv_triton_version || true)"
if [[ "$have" != "$TRITON_VERSION" ]]; then
  log "triton ${TRITON_VERSION} not in $VENV (found: ${have:-none}); installing"
  command -v "$PYTHON" >/dev/null || apt_install python3
  if ! "$PYTHON" -c 'import venv, ensurepip' 2>/dev/null; then
    apt_install python3-venv
    "$PYTHON" -c 'import venv, ensurepip' 2>/dev/null ||
      die "$PYTHON has no working venv/ensurepip module even after installing python3-venv"
  fi
  mkdir -p "$CACHE/pip-cache" || die "cannot create $CACHE"
  if [[ ! -x "$VENV/bin/python" ]] || ! "$VENV/bin/python" -c 'import pip' 2>/dev/null; then
    log "creating venv $VENV"
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV" || die "python3 -m venv $VENV"
  fi
  log "pip install triton==${TRITON_VERSION} (download cache: $CACHE/pip-cache)"
  PIP_CACHE_DIR="$CACHE/pip-cache" "$VENV/bin/python" -m pip install -q \
    --disable-pip-version-check "triton==${TRITON_VERSION}" ||
    die "pip install triton==${TRITON_VERSION} into $VENV"
  have="$(venv_triton_version || true)"
  [[ "$have" == "$TRITON_VERSION" ]] ||
    die "triton in $VENV reports version '${have:-none}', expected ${TRITON_VERSION}"
  log "triton ${TRITON_VERSION} installed"
fi
# 3. numpy in the same venv (CPU references of the executed-kernel tests).
if ! "$VENV/bin/python" -c 'import numpy' 2>/dev/null; then
  log "pip install numpy into $VENV"
  PIP_CACHE_DIR="$CACHE/pip-cache" "$VENV/bin/python" -m pip install -q --disable-pip-version-check numpy ||
    die "pip install numpy into $VENV"
fi
# 4. Bookworm's ROCm 5.2.3 user space (the HIP end-to-end programs, gfx90a)
#    and debootstrap (the sid sysroot of scripts/sysroot.sh).
need=()
for p in hipcc libamdhip64-dev rocm-device-libs rocminfo libhipsparse-dev librocsparse-dev \
  libhiprand-dev librocrand-dev debootstrap; do
  [[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" == "install ok installed" ]] || need+=("$p")
done
if ((${#need[@]})); then
  apt_install "${need[@]}"
fi
# 5. podman and runc: mirage's container sessions and their tests. Without
#    recommends: they would bring crun, which fails on machines where root
#    lacks CAP_SYS_RESOURCE (mirage falls back to runc there).
need=()
for p in podman runc; do
  [[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" == "install ok installed" ]] || need+=("$p")
done
if ((${#need[@]})); then
  apt_install --no-install-recommends "${need[@]}"
fi
# 6. Debian's chromium: the dashboard's browser test (playwright-core drives
#    it; no browser download). Node.js and npm build the dashboard: the
#    machine's own (mirage builds without them and says how to add it).
if [[ "$(dpkg-query -W -f='${Status}' chromium 2>/dev/null)" != "install ok installed" ]]; then
  apt_install --no-install-recommends chromium
fi
command -v npm >/dev/null || log "npm not found: the dashboard is not built (mirage serve says how to build it)"
log "ok (llvm-22, clang-22, lld-22, triton ${TRITON_VERSION} and numpy in $VENV, chromium)"
