#!/usr/bin/env bash
# `make demo` (after `make build`): run Debian's unmodified ROCm 5.2.3 tools
# and a HIP program on an emulated MI210; then compile a small HIP program for
# three AMD Instinct GPUs into one fat object, run its kernels on each emulated
# GPU and check the results on the CPU, then look at the code.
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

CFG=configs/gfx90a_cdna2_kmd.json
step "1. Debian's unmodified rocminfo on an emulated AMD Instinct MI210"
say "rocjitsu --config preloads librocjitsu.so, which answers /dev/kfd, the render node and the"
say "KFD sysfs as the amdgpu driver would; ROCr finds the GPU of $CFG."
printf '%s$ %s%s\n' "$bold" "$BIN --config $CFG -- rocminfo | (the GPU agent)" "$off"
"$BIN" --config "$CFG" -- rocminfo | awk '/^Agent 2/{on=1} on&&/Pool Info/{exit} on' | sed -n '1,40p'

step "2. An unmodified HIP program (bookworm hipcc, gfx90a) on the emulated MI210"
say "tests/hip/vector_add.hip: hipMalloc, hipMemcpy (SDMA), a kernel launch (AQL), results checked on the CPU."
run hipcc --offload-arch=gfx90a tests/hip/vector_add.hip -o "$OUT/vector_add"
run "$BIN" --config "$CFG" -- "$OUT/vector_add"

step "3. Compile $SRC for gfx90a (MI210), gfx942 (MI300X) and gfx950 (MI355X)"
say "Two kernels: saxpy (y = a*x + y) and reduce_sum (a sum through shared memory)."
say "clang puts one GPU code object per target into the host object's .hip_fatbin section."
run clang++-22 -x hip --offload-arch=gfx90a --offload-arch=gfx942 --offload-arch=gfx950 \
  -nogpulib -nogpuinc -O2 -c "$SRC" -o "$OBJ"

step "4. The code objects inside $OBJ"
say "target ID, offload bundle entry, kernels:"
run "$BIN" disasm --list-targets "$OBJ"

step "5. Run saxpy on each emulated GPU"
say "rocjitsu run-kernel loads the code object for the GPU, passes buffers from files and"
say "scalars from the command line, runs every workgroup, and writes the buffers back."
N=100000
python3 scripts/demo_data.py make "$OUT" $N
for gpu in gfx90a gfx942 gfx950; do
  cp "$OUT/y.bin" "$OUT/y.out"
  run "$BIN" run-kernel --gpu $gpu "$OBJ" --kernel saxpy --grid $(( (N + 255) / 256 )) --block 256 \
    --arg f32:2.5 --arg in:"$OUT/x.bin" --arg inout:"$OUT/y.out" --arg u32:$N
  python3 scripts/demo_data.py saxpy "$OUT" $N 2.5
done

step "6. A reduction through shared memory (LDS and barriers) on the MI355X, with statistics"
BLOCKS=$(( (N + 511) / 512 ))
run "$BIN" run-kernel --gpu gfx950 "$OBJ" --kernel reduce_sum --grid $BLOCKS --block 256 \
  --arg in:"$OUT/in.bin" --arg out:"$OUT/sums.bin":$(( 4 * BLOCKS )) --arg u32:$N --stats
python3 scripts/demo_data.py reduce "$OUT" $N 256

step "7. What the GPU ran: the gfx942 (MI300X) code of saxpy"
say "The same text llvm-objdump -d prints, with the encoded dwords in a comment."
run "$BIN" disasm --mcpu gfx942 --kernel saxpy "$OBJ"

step "8. One kernel as JSON lines (first 3 instructions of saxpy)"
printf '%s$ %s%s\n' "$bold" "$BIN disasm --mcpu gfx942 --kernel saxpy --json $OBJ | head -n 3" "$off"
"$BIN" disasm --mcpu gfx942 --kernel saxpy --json "$OBJ" | head -n 3

step "Done"
say "Try: $BIN --help, $BIN run-kernel --help, $BIN disasm --help"
say "mirage's dashboard: run target/release/mirage serve and open the URL it prints."
