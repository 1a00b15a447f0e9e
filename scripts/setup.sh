#!/usr/bin/env bash
# Installs what rocjitsu's build, demo and tests need. Idempotent; quick when
# everything is already there.
set -euo pipefail
need=()
for p in llvm-22 clang-22 lld-22; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if ((${#need[@]})); then
  echo "setup: installing ${need[*]}" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
