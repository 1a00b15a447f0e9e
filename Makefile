# rocjitsu: the two commands of the README are `make demo` and `make test`.
SHELL := /bin/bash
CARGO ?= cargo
PYTHON ?= python3
VENV_PY ?= $${ROCJITSU_CACHE:-$$HOME/.cache/rocjitsu}/triton-venv/bin/python

.PHONY: fuzz-decode fuzz-container fuzz-rpc setup build demo test test-unit test-corpus test-diff test-diff-sweep test-kernels fuzz bench bench-exec fmt lint corpus corpus-stats corpus-clean

setup:
	@bash scripts/setup.sh

build: setup
	$(CARGO) build --release --workspace

demo: build
	@bash scripts/demo.sh

# The kernel corpus (tests/corpus/src compiled for every target, with
# llvm-objdump's text): incremental, see scripts/corpus.py. The check confirms
# that the listings are what LLVM's C-API disassembler (the oracle) prints.
corpus: setup
	@python3 scripts/corpus.py build
	@python3 scripts/corpus_check.py

corpus-stats:
	@python3 scripts/corpus.py stats

corpus-clean:
	@python3 scripts/corpus.py clean

# Only the corpus test (crates/isa/tests/corpus.rs) against a fresh corpus.
test-corpus: corpus
	$(CARGO) test --release -p rocjitsu-isa --test corpus -- --nocapture

# The DBT targets run their own cargo tests when run alone; `make test` has
# run every cargo test already and passes SKIP_CARGO_TESTS=1.
SKIP_CARGO_TESTS ?=
CARGO_TEST = $(if $(SKIP_CARGO_TESTS),@echo "(done by cargo test --workspace:) cargo test",$(CARGO) test)

test: setup corpus
	$(CARGO) build --release --workspace
	$(MAKE) lint
	$(CARGO) test --release --workspace
	$(MAKE) test-kernels
	$(MAKE) test-dbt SKIP_CARGO_TESTS=1
	$(MAKE) test-dbt-guest SKIP_CARGO_TESTS=1
	$(MAKE) test-dbt-hooks DBT_HOOKS_ARGS=--no-hip-set
	$(MAKE) test-hip
	$(MAKE) test-hip-sid
	$(MAKE) test-rocm
	$(MAKE) test-daemon
	$(MAKE) test-mirage

# The executed-kernel tests (tests/kernels): every case run through
# `rocjitsu run-kernel` on every target and compared with its numpy
# reference; KERNELS_ARGS passes options, e.g. KERNELS_ARGS="-k gemm --target gfx942".
KERNELS_ARGS ?=
test-kernels: setup
	$(CARGO) build --release -p rocjitsu-cli
	$(PYTHON) scripts/kernels.py run $(KERNELS_ARGS)

# The DBT translator (crates/code/src/dbt): its unit tests, the rewrites
# against the VM (crates/gpu exec::dbt_tests), and the differential test:
# every gfx950 case of tests/kernels translated (`rocjitsu dbt translate`),
# run on the emulated gfx942 and compared with the native gfx950 run; prints
# the translation coverage. Fails if a translated run misses the case's numpy
# reference or differs from native, a fault case's report differs, the
# translator panics or errs without a DbtError (kernel, PC, instruction), or
# more cases fail closed than tests/dbt/fail_closed_max allows.
.PHONY: test-dbt bench-dbt
test-dbt: setup
	$(CARGO) build --release -p rocjitsu-cli
	$(CARGO_TEST) --release -p rocjitsu-code --lib dbt
	$(CARGO_TEST) --release -p rocjitsu-gpu --lib dbt_tests
	$(CARGO_TEST) --release -p rocjitsu-cli --test dbt
	$(PYTHON) scripts/kernels.py build --target gfx950
	$(PYTHON) scripts/kernels.py run --dbt $(KERNELS_ARGS)

# DBT figures: translation time per code object and per kernel (criterion,
# over build/kernels/gfx950 and build/corpus/gfx950), then the emulated run
# time of translated code on gfx942 over native gfx950 (one host thread per
# run, one run at a time; target at most 1.5x).
bench-dbt: setup
	$(CARGO) build --release -p rocjitsu-cli
	$(PYTHON) scripts/corpus.py build --target gfx950
	$(PYTHON) scripts/kernels.py build --target gfx950
	$(CARGO) bench -p rocjitsu-code --bench dbt
	$(PYTHON) scripts/corpus.py build --src tests/bench/src --out build/bench-kernels --target gfx950
	$(VENV_PY) scripts/bench_exec.py --dbt $(BENCH_ARGS)
	$(PYTHON) scripts/kernels.py run --dbt --no-build --jobs 1 --threads 1

# The HIP end-to-end programs (tests/hip): built with bookworm's hipcc for
# gfx90a and run, unmodified, under `rocjitsu --config <gfx90a config> --`;
# HIP_ARGS passes options to scripts/hip_tests.py, e.g. HIP_ARGS="-k atomics".
HIP_ARGS ?=
.PHONY: test-hip test-hip-sid test-abi-sid sysroot bench-kmd
test-hip: setup
	$(CARGO) build --release --workspace
	$(PYTHON) scripts/hip_tests.py run --target gfx90a $(HIP_ARGS)

# The same programs built with a modern hipcc and run inside a Debian sid
# sysroot (scripts/sysroot.sh builds it on first use): gfx942 (MI300X config)
# with sid's ROCm 6.4.3, gfx950 (MI355X config) with experimental's ROCm 7.2.4,
# since HIP 6.4.3 has no gfx950 device (its ROCr has).
test-hip-sid: setup
	$(CARGO) build --release --workspace
	@rc=0; \
	bash scripts/sysroot.sh --rocm 6 run -- python3 scripts/hip_tests.py run --target gfx942 $(HIP_ARGS) || rc=1; \
	bash scripts/sysroot.sh --rocm 7 run -- python3 scripts/hip_tests.py run --target gfx950 $(HIP_ARGS) || rc=1; \
	$(MAKE) test-abi-sid || rc=1; \
	exit $$rc

# AMD's own library test suites (Debian's lib*-tests gtest binaries, ROCm
# 7.2.4), unmodified, in the ROCm 7 sysroot under the launcher
# (scripts/rocm_suites.py): the CI tier is each suite's fixed cases plus a
# seeded sample; the full tier every case on gfx90a and gfx942 (by hand,
# long). ROCM_SUITES_ARGS passes options, e.g. ROCM_SUITES_ARGS="--seed 7 -v".
ROCM_SUITES_ARGS ?=
.PHONY: test-rocm test-rocm-full
test-rocm: setup
	$(CARGO) build --release --workspace
	bash scripts/sysroot.sh --rocm 7 install $$($(PYTHON) scripts/rocm_suites.py packages)
	bash scripts/sysroot.sh --rocm 7 run -- python3 scripts/rocm_suites.py run --tier ci $(ROCM_SUITES_ARGS)

test-rocm-full: setup
	$(CARGO) build --release --workspace
	bash scripts/sysroot.sh --rocm 7 install $$($(PYTHON) scripts/rocm_suites.py packages --tier full)
	bash scripts/sysroot.sh --rocm 7 run -- python3 scripts/rocm_suites.py run --tier full -j 2 --timeout 300 \
	  --config configs/gfx90a_cdna2_kmd.json,configs/gfx942_cdna3_kmd.json --json build/rocm-suites/full.json $(ROCM_SUITES_ARGS)

# kmd's ioctl argument layouts (crates/kmd/src/abi.rs) against the ROCm 7
# sysroot's headers (KFD 1.23, amdgpu_drm.h), every field required; the
# plain cargo test checks them against /usr/include's (KFD 1.11, no DRM).
test-abi-sid: setup
	@root=$$(bash scripts/sysroot.sh --rocm 7 build) && \
	ROCJITSU_KFD_HEADER=$$root/usr/include/linux/kfd_ioctl.h \
	ROCJITSU_DRM_HEADER=$$root/usr/include/drm/amdgpu_drm.h ROCJITSU_ABI_COMPLETE=1 \
	$(CARGO) test --release -p rocjitsu-kmd --test abi_headers -- --nocapture

# DBT guest mode's HSA tools library (crates/hsa-hooks) with the real ROCm of
# the sid sysroots; DBT_HOOKS_ARGS passes options, e.g. DBT_HOOKS_ARGS="--mode mixed".
DBT_HOOKS_ARGS ?=
.PHONY: test-dbt-hooks
test-dbt-hooks: setup
	$(CARGO) build --release -p rocjitsu-cli -p rocjitsu-preload -p rocjitsu-hsa-hooks
	bash scripts/dbt_hooks_test.sh $(DBT_HOOKS_ARGS)

# DBT guest mode's KFD layer and launcher: GuestKfd's and the dbt_guest
# config's tests, scripts/dbt_guest_test.sh (rocminfo without the hooks shows
# gfx942 and gfx950, ROCR_VISIBLE_DEVICES expansion, refused guest queues,
# launcher errors), then the HIP programs built for gfx950 only in guest mode
# with the simulator backend and with the hardware backend over a rocjitsu
# daemon serving gfx942: rocminfo on sid's ROCm 6.4.3, the programs on
# ROCm 7.2.4 (HIP 6.4.3 has no gfx950 device).
.PHONY: test-dbt-guest
test-dbt-guest: setup
	$(CARGO) build --release -p rocjitsu-cli -p rocjitsu-preload -p rocjitsu-hsa-hooks
	$(CARGO_TEST) --release -p rocjitsu-kmd --test guest
	$(CARGO_TEST) --release -p rocjitsu-config --lib
	$(CARGO_TEST) --release -p rocjitsu-cli guest
	@rc=0; \
	bash scripts/dbt_guest_test.sh || rc=1; \
	for b in simulator hardware; do \
	  bash scripts/sysroot.sh --rocm 6 run -- python3 scripts/hip_tests.py run --target gfx950 --guest $$b -k rocm || rc=1; \
	  bash scripts/sysroot.sh --rocm 7 run -- python3 scripts/hip_tests.py run --target gfx950 --guest $$b $(HIP_ARGS) || rc=1; \
	done; \
	exit $$rc

# Daemon mode: the HIP programs with a daemon per program (--daemon) and on
# one shared daemon (--attach), on gfx90a (bookworm's ROCm) and gfx942 (sid's
# ROCm 6.4.3); then scripts/daemon_tests.py: 2 and 8 concurrent clients, a
# client killed mid-kernel, a daemon killed under a client, a client past
# its connection and memory limits beside one that still runs.
.PHONY: test-daemon bench-daemon
test-daemon: setup
	$(CARGO) build --release --workspace
	@rc=0; \
	for m in daemon attach; do \
	  $(PYTHON) scripts/hip_tests.py run --target gfx90a --mode $$m $(HIP_ARGS) || rc=1; \
	  bash scripts/sysroot.sh --rocm 6 run -- python3 scripts/hip_tests.py run --target gfx942 --mode $$m $(HIP_ARGS) || rc=1; \
	done; \
	$(PYTHON) scripts/daemon_tests.py --target gfx90a || rc=1; \
	bash scripts/sysroot.sh --rocm 6 run -- python3 scripts/daemon_tests.py --target gfx942 || rc=1; \
	exit $$rc

# [daemon] figures: RPC round trip, the HIP set's wall time per mode, the
# [kmd] table in daemon mode (printed, never asserted).
bench-daemon: setup
	$(CARGO) build --release --workspace
	bash scripts/bench_daemon.sh $(BENCH_DAEMON_ARGS)
# mirage (mirage/): its unit and command-line tests, then the end-to-end
# tests (sessions and their processes, HIP programs in the sid sysroot,
# ranks across nodes, podman containers, a pty, cleanup after a killed
# supervisor), once the workspace (librocjitsu.so beside mirage) and the sid
# sysroot are built.
.PHONY: test-mirage
test-mirage: setup
	$(CARGO) build --release --workspace
	@bash scripts/sysroot.sh --rocm 6 build >/dev/null
	@bash scripts/sysroot.sh --rocm 7 build >/dev/null
	$(CARGO) test --release -p mirage-core -p mirage-host -p mirage-container -p mirage-builtin \
		-p mirage-backend-rocjitsu -p mirage-backend-rocjitsu-dbt -p mirage-backend-hotswap \
		-p mirage-ctl --features mirage-ctl/e2e

# The sid sysroots alone (Debian sid with ROCm 6.4.3, and with ROCm 7.2.4; cached under $ROCJITSU_CACHE).
sysroot: setup
	@bash scripts/sysroot.sh --rocm 6 build
	@bash scripts/sysroot.sh --rocm 7 build

# [kmd] figures: rocminfo wall time, empty-kernel launch latency, hipMemcpy
# bandwidth and an end-to-end vector add under the launcher (printed, never
# asserted); BENCH_KMD_ARGS passes options, e.g. "--launches 500".
BENCH_KMD_ARGS ?=
bench-kmd: setup
	$(CARGO) build --release --workspace
	bash scripts/bench_kmd.sh $(BENCH_KMD_ARGS)

# The differential test against LLVM 22 on seeded random words (also part of
# `make test`), with its report printed.
test-diff: setup
	$(CARGO) test --release -p llvm-oracle --test random_diff -- --nocapture

# Exhaustive sweeps against LLVM 22 (about 88M words, ~4.5 min on 2 cores;
# by hand, not part of `make test`): every gfx1100, gfx1151 and gfx1201 SOPP
# and SOPK opcode with every 16-bit immediate (crates/llvm-oracle/tests/sweep.rs).
test-diff-sweep: setup
	$(CARGO) test --release -p llvm-oracle --test sweep -- --nocapture

# Decode throughput on one core over the corpus's .text (criterion; the plain
# instructions/s figure per target is printed first).
bench: corpus
	$(CARGO) bench -p rocjitsu-isa --bench decode

# Execution-engine figures: wave-instructions/s of an ALU-bound and a
# memory-bound kernel on one host thread (every target), and the wall time of
# 1024^3 Triton GEMMs (fp16 on gfx942, fp8 on gfx950) at 1 thread and all
# threads; every result is checked against numpy.
bench-exec: setup
	$(PYTHON) scripts/corpus.py build --src tests/bench/src --out build/bench-kernels
	$(CARGO) build --release -p rocjitsu-cli
	$(VENV_PY) scripts/bench_exec.py $(BENCH_ARGS)

# Execution-plugin overhead: the ALU, triad and GEMM benchmarks (gfx942, one
# thread) without a plugin, with metrics and with trace, best of
# PLUGIN_REPS runs each, side by side with their ratios (target: metrics
# under 1.3x). BENCH_BASELINE=path/to/rocjitsu adds the run without a plugin
# on another build (e.g. one from before plugins).
PLUGIN_REPS ?= 3
BENCH_BASELINE ?=
.PHONY: bench-plugins
bench-plugins: setup
	$(PYTHON) scripts/corpus.py build --src tests/bench/src --out build/bench-kernels
	$(CARGO) build --release -p rocjitsu-cli
	$(VENV_PY) scripts/bench_exec.py --plugins --reps $(PLUGIN_REPS) $(if $(BENCH_BASELINE),--baseline $(BENCH_BASELINE)) $(BENCH_ARGS)

# libFuzzer over the decoder (crates/isa/fuzz/fuzz_targets/decode.rs) for
# FUZZ_TIME seconds. Needs the nightly toolchain (for -Zsanitizer=address) and
# a C++ compiler for libFuzzer; cargo-fuzz is not needed (`cargo fuzz run
# decode` in crates/isa/fuzz works too where it is installed). Findings go to
# crates/isa/fuzz/artifacts/, the growing input corpus to crates/isa/fuzz/corpus/.
FUZZ_TIME ?= 60
FUZZ_CARGO ?= cargo +nightly
FUZZ_HOST := $(shell rustc -vV 2>/dev/null | sed -n 's/^host: //p')
FUZZ_RUSTFLAGS := --cfg fuzzing -Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
	-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
	-Cllvm-args=-sanitizer-coverage-trace-compares -Zsanitizer=address -Cdebug-assertions -Coverflow-checks
# `make fuzz` runs both libFuzzer targets for FUZZ_TIME seconds each: the
# decoder (crates/isa/fuzz) and the code-object parser (crates/code/fuzz).
fuzz: fuzz-decode fuzz-container fuzz-rpc

fuzz-decode:
	$(call run_fuzz,crates/isa/fuzz,decode)

fuzz-container:
	$(call run_fuzz,crates/code/fuzz,container)

fuzz-rpc:
	$(call run_fuzz,crates/rpc/fuzz,message)

define run_fuzz
	cd $(1) && RUSTFLAGS="$(FUZZ_RUSTFLAGS)" $(FUZZ_CARGO) build --release --target $(FUZZ_HOST) --bin $(2)
	mkdir -p $(1)/corpus/$(2) $(1)/artifacts/$(2)
	$(1)/target/$(FUZZ_HOST)/release/$(2) $(1)/corpus/$(2) \
		-max_total_time=$(FUZZ_TIME) -max_len=65536 -artifact_prefix=$(1)/artifacts/$(2)/
endef

fmt:
	$(CARGO) fmt --all

# Formatting and clippy with warnings as errors (part of `make test`, after
# the release build: --release shares its build scripts and proc macros; a
# no-op when nothing changed, seconds for one changed crate).
lint:
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets --release -- -D warnings
