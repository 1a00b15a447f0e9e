#!/usr/bin/env bash
# `make demo` (after `make build`): compile a small HIP program for three AMD
# Instinct GPUs into one fat object, then look inside it with rocjitsu.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=target/release/rocjitsu
SRC=examples/saxpy.hip
OUT=build/demo
OBJ=$OUT/saxpy.o

if [[ -t 1 ]]; then bold=$'\e[1m'; dim=$'\e[2m'; off=$'\e[0m'; else bold= dim= off=; fi
step() { printf '\n%s== %s ==%s\n' "$bold" "$*" "$off"; }
say() { printf '%s%s%s\n' "$dim" "$*" "$off"; }
run() { printf '%s$ %s%s\n' "$bold" "$*" "$off"; "$@"; }

[[ -x $BIN ]] || { echo "demo: $BIN is missing: run \`make build\` first" >&2; exit 1; }
mkdir -p "$OUT"

step "1. Compile $SRC for gfx90a (MI210), gfx942 (MI300X) and gfx950 (MI355X)"
say "Two kernels: saxpy (y = a*x + y) and reduce_sum (a sum through shared memory)."
say "clang puts one GPU code object per target into the host object's .hip_fatbin section."
run clang++-22 -x hip --offload-arch=gfx90a --offload-arch=gfx942 --offload-arch=gfx950 \
  -nogpulib -nogpuinc -O2 -c "$SRC" -o "$OBJ"

step "2. The code objects inside $OBJ"
say "target ID, offload bundle entry, kernels:"
run "$BIN" disasm --list-targets "$OBJ"

step "3. Disassemble the gfx942 (MI300X) code object"
say "The same text llvm-objdump -d prints: each kernel's instructions, with the address and"
say "encoded dwords in a comment; branches are annotated with their target (<kernel+offset>)."
run "$BIN" disasm --mcpu gfx942 --kernel saxpy "$OBJ"
run "$BIN" disasm --mcpu gfx942 --kernel reduce_sum --no-leading-addr "$OBJ"
say "(the whole object, with the alignment padding between kernels, as objdump shows it: $BIN disasm --mcpu gfx942 $OBJ)"

step "4. One kernel as JSON lines (first 5 instructions of saxpy)"
say "One object per instruction: kernel, address, bytes, text, mnemonic, operands, modifiers."
printf '%s$ %s%s\n' "$bold" "$BIN disasm --mcpu gfx942 --kernel saxpy --json $OBJ | head -n 5" "$off"
"$BIN" disasm --mcpu gfx942 --kernel saxpy --json "$OBJ" | head -n 5

step "Done"
say "Try: $BIN disasm --help"
