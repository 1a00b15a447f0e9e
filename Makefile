# rocjitsu: the two commands of the README are `make demo` and `make test`.
SHELL := /bin/bash
CARGO ?= cargo
# What every target that runs the binaries builds first: the whole
# workspace. Building a subset (`-p rocjitsu-cli`) selects other features
# of shared dependencies (cargo unifies features over the packages it is
# asked for), and each such subset recompiles the JIT's code generator and
# the crates above it: about 2.5 minutes per subset on CI's two cores.
BUILD = $(CARGO) build --release --workspace
PYTHON ?= python3
VENV_PY ?= $${ROCJITSU_CACHE:-$$HOME/.cache/rocjitsu}/triton-venv/bin/python

.PHONY: fuzz-decode fuzz-container fuzz-rpc setup build demo test test-unit test-corpus test-diff test-diff-deep test-diff-sweep test-kernels fuzz bench bench-exec fmt lint corpus corpus-stats corpus-clean

setup:
	@bash scripts/setup.sh

build: setup dashboard
	$(BUILD)

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

# Only the corpus test (crates/isa/tests/it/corpus.rs) against a fresh corpus.
test-corpus: corpus
	$(CARGO) test --release -p rocjitsu-isa --test it corpus:: -- --nocapture

# The DBT targets run their own cargo tests when run alone; `make test` has
# run every cargo test already and passes SKIP_CARGO_TESTS=1.
SKIP_CARGO_TESTS ?=
CARGO_TEST = $(if $(SKIP_CARGO_TESTS),@echo "(done by cargo test --workspace:) cargo test",$(CARGO) test)

# Every step runs even when an earlier one failed (a CI run then reports
# every failing step, not the first); the last line fails if any did.
test: setup corpus dashboard
	@rm -f build/stage-times.txt
	@bash scripts/stage.sh setup-corpus-dashboard true
	-@bash scripts/stage.sh build $(BUILD)
	-@bash scripts/stage.sh lint $(MAKE) lint
	-@bash scripts/stage.sh cargo-test $(CARGO) test --release --workspace --no-fail-fast
	-@bash scripts/stage.sh test-kernels $(MAKE) test-kernels
	-@bash scripts/stage.sh test-hazards $(MAKE) test-hazards
	-@bash scripts/stage.sh test-jit $(MAKE) test-jit SKIP_CARGO_TESTS=1
	-@bash scripts/stage.sh test-dbt $(MAKE) test-dbt SKIP_CARGO_TESTS=1
	-@bash scripts/stage.sh test-dbi $(MAKE) test-dbi SKIP_CARGO_TESTS=1
	-@bash scripts/stage.sh test-dbt-guest $(MAKE) test-dbt-guest SKIP_CARGO_TESTS=1
	-@bash scripts/stage.sh test-dbt-hooks $(MAKE) test-dbt-hooks DBT_HOOKS_ARGS=--no-hip-set
	-@bash scripts/stage.sh test-hip $(MAKE) test-hip
	-@bash scripts/stage.sh test-hip-plugins $(MAKE) test-hip-plugins
	-@bash scripts/stage.sh test-hip-sid $(MAKE) test-hip-sid
	-@bash scripts/stage.sh test-rocm $(MAKE) test-rocm
	-@bash scripts/stage.sh test-daemon $(MAKE) test-daemon
	-@bash scripts/stage.sh test-checkpoint $(MAKE) test-checkpoint
	-@bash scripts/stage.sh test-mirage $(MAKE) test-mirage SKIP_CARGO_TESTS=1
	-@bash scripts/stage.sh test-frameworks $(MAKE) test-frameworks
	-@bash scripts/stage.sh test-dashboard $(MAKE) test-dashboard SKIP_CARGO_TESTS=1
	@bash scripts/stage.sh --check

# The executed-kernel tests (tests/kernels): every case run through
# `rocjitsu run-kernel` on every target and compared with its numpy
# reference, then on RDNA3 (gfx1100), RDNA3.5 (gfx1151), RDNA4 (gfx1201),
# RDNA2 (gfx1030) and RDNA1 (gfx1010) in wave32 and wave64 (the default run
# is the CDNA targets; the gfx1201 run adds about 40 s on 2 cores: 23 s
# building its 26 units, 15 s running its 207 cases; GFX10 runs the clang
# cases only, Triton has no GFX10 backend, about 50 s for both targets);
# KERNELS_ARGS passes options, e.g. KERNELS_ARGS="-k gemm".
KERNELS_ARGS ?=
test-kernels: setup
	$(BUILD)
	$(PYTHON) scripts/kernels.py run $(KERNELS_ARGS)
	$(PYTHON) scripts/kernels.py run --target gfx1100 --target gfx1100w64 $(KERNELS_ARGS)
	$(PYTHON) scripts/kernels.py run --target gfx1151 --target gfx1151w64 $(KERNELS_ARGS)
	$(PYTHON) scripts/kernels.py run --target gfx1201 --target gfx1201w64 $(KERNELS_ARGS)
	$(PYTHON) scripts/kernels.py run --target gfx1030 --target gfx1030w64 $(KERNELS_ARGS)
	$(PYTHON) scripts/kernels.py run --target gfx1010 --target gfx1010w64 $(KERNELS_ARGS)

# The gfx1201 run of test-kernels alone.
.PHONY: test-kernels-gfx1201
test-kernels-gfx1201: setup
	$(BUILD)
	$(PYTHON) scripts/kernels.py run --target gfx1201 --target gfx1201w64 $(KERNELS_ARGS)

# The hazards plugin's waitcnt-deletion test (scripts/hazard_deletion.py):
# every s_waitcnt of a kernel deleted in turn, the plugin's reports for wave
# 0 compared with an independent counter model over llvm-objdump's listing.
# test-hazards runs the CI tier (a fixed set of cases), test-hazards-full
# every case on every target (long; by hand).
.PHONY: test-hazards test-hazards-full
test-hazards: setup
	$(BUILD)
	$(PYTHON) scripts/hazard_deletion.py --ci

test-hazards-full: setup
	$(BUILD)
	$(PYTHON) scripts/hazard_deletion.py

# The translation tier (crates/gpu/src/jit) against the interpreter: its
# unit tests and the seeded differential fuzzer (random SALU/VALU sequences,
# f32-heavy ones and ones with loads and stores; JIT_FUZZ_CASES per target
# and mix), then every tests/kernels case with
# `run-kernel --exec check` (interpreter, then every block translated, from
# the same buffers: registers of every wave, buffers, fault and instruction
# count must agree, besides the numpy reference).
JIT_FUZZ_CASES ?= 600
.PHONY: test-jit fuzz-jit
test-jit: setup
	$(BUILD)
	$(if $(SKIP_CARGO_TESTS),@echo "(done by cargo test --workspace:) jit tests",ROCJITSU_JIT_FUZZ_CASES=$(JIT_FUZZ_CASES) $(CARGO) test --release -p rocjitsu-gpu --lib jit::)
	$(PYTHON) scripts/kernels.py run --exec check $(KERNELS_ARGS)

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
	$(BUILD)
	$(CARGO_TEST) --release -p rocjitsu-code --lib dbt
	$(CARGO_TEST) --release -p rocjitsu-gpu --lib dbt_tests
	$(CARGO_TEST) --release -p rocjitsu-cli --test it dbt::
	$(PYTHON) scripts/kernels.py build --target gfx950
	$(PYTHON) scripts/kernels.py run --dbt $(KERNELS_ARGS)

# Binary instrumentation (crates/code/src/dbi, docs/dbi.md): its unit tests,
# bbcount and memtrace on the emulator against the coverage plugin and the
# VM's memory events, then the CI tier of `kernels.py run --dbi`: the cases
# of DBI_ARGS (default: every case on gfx942) instrumented with bbcount, run,
# checked against their numpy reference and the coverage plugin's counts of
# the original. DBI_ARGS="" runs every case on every target.
DBI_ARGS ?= --target gfx942
.PHONY: test-dbi
test-dbi: setup
	$(BUILD)
	$(CARGO_TEST) --release -p rocjitsu-code --lib dbi
	$(CARGO_TEST) --release -p rocjitsu-cli --test it -- dbi:: dbi_memtrace::
	$(PYTHON) scripts/kernels.py run --dbi $(DBI_ARGS) $(KERNELS_ARGS)

# DBT figures: translation time per code object and per kernel (criterion,
# over build/kernels/gfx950 and build/corpus/gfx950), then the emulated run
# time of translated code on gfx942 over native gfx950 (one host thread per
# run, one run at a time; target at most 1.5x).
bench-dbt: setup
	$(BUILD)
	$(PYTHON) scripts/corpus.py build --target gfx950
	$(PYTHON) scripts/kernels.py build --target gfx950
	$(CARGO) bench -p rocjitsu-code --bench dbt
	$(PYTHON) scripts/corpus.py build --src tests/bench/src --out build/bench-kernels --target gfx950
	$(VENV_PY) scripts/bench_exec.py --dbt $(BENCH_ARGS)
	$(PYTHON) scripts/kernels.py run --dbt --no-build --jobs 1 --threads 1

# The HIP end-to-end programs (tests/hip): built with bookworm's hipcc for
# gfx90a and run, unmodified, under `rocjitsu --config <gfx90a config> --`;
# HIP_ARGS passes options to scripts/hip_tests.py, e.g. HIP_ARGS="-k atomics".
# Then a few of them, with rocminfo, on the MI100 config (gfx908).
HIP_ARGS ?=
HIP_GFX908_PROGRAMS ?= rocminfo,rocm_agent_enumerator,vector_add,atomics,reduction_shared,scratch,peer_copy
.PHONY: test-hip test-hip-sid test-abi-sid sysroot bench-kmd
test-hip: setup
	$(BUILD)
	$(PYTHON) scripts/hip_tests.py run --target gfx90a $(HIP_ARGS)
	$(PYTHON) scripts/hip_tests.py run --target gfx908 -k $(HIP_GFX908_PROGRAMS) $(HIP_ARGS)

# The checking plugins under unmodified HIP programs: a few of tests/hip (LDS,
# barriers, scratch, several kernels and streams) run with --plugin hazards and
# --plugin races in local and daemon modes; a report fails the program.
HIP_PLUGIN_PROGRAMS ?= vector_add,reduction_shared,dynamic_shared,scratch,multi_kernel,streams_events
.PHONY: test-hip-plugins
test-hip-plugins: setup
	$(BUILD)
	$(PYTHON) scripts/hip_tests.py run --target gfx90a -k $(HIP_PLUGIN_PROGRAMS) --plugin hazards --plugin races
	$(PYTHON) scripts/hip_tests.py run --target gfx90a -k $(HIP_PLUGIN_PROGRAMS) --plugin hazards --plugin races --mode daemon --no-build

# The same programs built with a modern hipcc and run inside a Debian sid
# sysroot (scripts/sysroot.sh builds it on first use): gfx942 (MI300X config)
# with sid's ROCm 6.4.3, gfx950 (MI355X config) with experimental's ROCm 7.2.4,
# since HIP 6.4.3 has no gfx950 device (its ROCr has); then the Radeon PRO
# W7900 (gfx1100): rocminfo and rocm_agent_enumerator under both ROCms and a
# few programs (wave32 kernels, LDS, barriers, scratch, device properties); the
# whole set on it is `make test-hip-gfx1100`.
HIP_GFX1100_PROGRAMS ?= rocminfo,rocm_agent_enumerator,vector_add,reduction_shared,scratch,device_props
# The Strix Halo APU (gfx1151): the same, with managed memory.
HIP_GFX1151_PROGRAMS ?= rocminfo,rocm_agent_enumerator,vector_add,reduction_shared,device_props,managed
# The Radeon AI PRO R9700 (gfx1201, RDNA4): wave32 kernels, LDS, scratch.
HIP_GFX1201_PROGRAMS ?= rocminfo,rocm_agent_enumerator,vector_add,reduction_shared,scratch,device_props
test-hip-sid: setup
	$(BUILD)
	@rc=0; \
	bash scripts/sysroot.sh --rocm 6 run -- python3 scripts/hip_tests.py run --target gfx942 $(HIP_ARGS) || rc=1; \
	bash scripts/sysroot.sh --rocm 7 run -- python3 scripts/hip_tests.py run --target gfx950 $(HIP_ARGS) || rc=1; \
	bash scripts/sysroot.sh --rocm 6 run -- python3 scripts/hip_tests.py run --target gfx1100 -k rocminfo,rocm_agent_enumerator,vector_add || rc=1; \
	bash scripts/sysroot.sh --rocm 7 run -- python3 scripts/hip_tests.py run --target gfx1100 -k $(HIP_GFX1100_PROGRAMS) || rc=1; \
	bash scripts/sysroot.sh --rocm 6 run -- python3 scripts/hip_tests.py run --target gfx1151 -k rocminfo,rocm_agent_enumerator,vector_add || rc=1; \
	bash scripts/sysroot.sh --rocm 7 run -- python3 scripts/hip_tests.py run --target gfx1151 -k $(HIP_GFX1151_PROGRAMS) || rc=1; \
	bash scripts/sysroot.sh --rocm 6 run -- python3 scripts/hip_tests.py run --target gfx1201 -k rocminfo,rocm_agent_enumerator,vector_add || rc=1; \
	bash scripts/sysroot.sh --rocm 7 run -- python3 scripts/hip_tests.py run --target gfx1201 -k $(HIP_GFX1201_PROGRAMS) || rc=1; \
	$(MAKE) test-abi-sid || rc=1; \
	exit $$rc

# By hand: every HIP program on the W7900 (gfx1100) under ROCm 7.2.4.
.PHONY: test-hip-gfx1100
test-hip-gfx1100: setup
	$(BUILD)
	bash scripts/sysroot.sh --rocm 7 run -- python3 scripts/hip_tests.py run --target gfx1100 $(HIP_ARGS)

# By hand: every HIP program on the Strix Halo APU (gfx1151) under ROCm 7.2.4.
.PHONY: test-hip-gfx1151
test-hip-gfx1151: setup
	$(BUILD)
	bash scripts/sysroot.sh --rocm 7 run -- python3 scripts/hip_tests.py run --target gfx1151 $(HIP_ARGS)

# By hand: every HIP program on the Radeon AI PRO R9700 (gfx1201) under ROCm 7.2.4.
.PHONY: test-hip-gfx1201
test-hip-gfx1201: setup
	$(BUILD)
	bash scripts/sysroot.sh --rocm 7 run -- python3 scripts/hip_tests.py run --target gfx1201 $(HIP_ARGS)

# AMD's own library test suites (Debian's lib*-tests gtest binaries, ROCm
# 7.2.4), unmodified, in the ROCm 7 sysroot under the launcher
# (scripts/rocm_suites.py): the CI tier is each suite's fixed cases plus a
# seeded sample; the full tier every case on gfx90a and gfx942 (by hand,
# long). ROCM_SUITES_ARGS passes options, e.g. ROCM_SUITES_ARGS="--seed 7 -v".
ROCM_SUITES_ARGS ?=
.PHONY: test-rocm test-rocm-full
test-rocm: setup
	$(BUILD)
	bash scripts/sysroot.sh --rocm 7 install $$($(PYTHON) scripts/rocm_suites.py packages)
	bash scripts/sysroot.sh --rocm 7 run -- python3 scripts/rocm_suites.py run --tier ci $(ROCM_SUITES_ARGS)

test-rocm-full: setup
	$(BUILD)
	bash scripts/sysroot.sh --rocm 7 install $$($(PYTHON) scripts/rocm_suites.py packages --tier full)
	bash scripts/sysroot.sh --rocm 7 run -- python3 scripts/rocm_suites.py run --tier full -j 2 --timeout 300 \
	  --config configs/gfx90a_cdna2_kmd.json,configs/gfx942_cdna3_kmd.json --json build/rocm-suites/full.json $(ROCM_SUITES_ARGS)

# kmd's ioctl argument layouts (crates/kmd/src/abi.rs) against the ROCm 7
# sysroot's headers (KFD 1.23, amdgpu_drm.h), every field required; the
# plain cargo test checks them against /usr/include's (KFD 1.11, no DRM).
# --workspace, not -p rocjitsu-kmd: the same feature set as make test's
# cargo test, so its test binaries are reused (a -p subset unifies other
# features and recompiles the dependency graph); the filter selects kmd's
# abi_headers module.
test-abi-sid: setup
	@root=$$(bash scripts/sysroot.sh --rocm 7 build) && \
	ROCJITSU_KFD_HEADER=$$root/usr/include/linux/kfd_ioctl.h \
	ROCJITSU_DRM_HEADER=$$root/usr/include/drm/amdgpu_drm.h ROCJITSU_ABI_COMPLETE=1 \
	$(CARGO) test --release --workspace --test it abi_headers:: -- --nocapture

# DBT guest mode's HSA tools library (crates/hsa-hooks) with the real ROCm of
# the sid sysroots; DBT_HOOKS_ARGS passes options, e.g. DBT_HOOKS_ARGS="--mode mixed".
DBT_HOOKS_ARGS ?=
.PHONY: test-dbt-hooks
test-dbt-hooks: setup
	$(BUILD)
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
	$(BUILD)
	$(CARGO_TEST) --release -p rocjitsu-kmd --test it guest::
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
	$(BUILD)
	@rc=0; \
	for m in daemon attach; do \
	  $(PYTHON) scripts/hip_tests.py run --target gfx90a --mode $$m $(HIP_ARGS) || rc=1; \
	  bash scripts/sysroot.sh --rocm 6 run -- python3 scripts/hip_tests.py run --target gfx942 --mode $$m $(HIP_ARGS) || rc=1; \
	done; \
	$(PYTHON) scripts/daemon_tests.py --target gfx90a || rc=1; \
	bash scripts/sysroot.sh --rocm 6 run -- python3 scripts/daemon_tests.py --target gfx942 || rc=1; \
	exit $$rc

# Checkpoint and restore in daemon mode with the real ROCm 5.2.3: a HIP
# program checkpointed mid-way, its daemon killed and restored, must print
# what an uninterrupted run prints; bad checkpoints are refused.
.PHONY: test-checkpoint
test-checkpoint: setup
	$(BUILD)
	$(PYTHON) scripts/checkpoint_test.py --target gfx90a

# [daemon] figures: RPC round trip, the HIP set's wall time per mode, the
# [kmd] table in daemon mode (printed, never asserted).
bench-daemon: setup
	$(BUILD)
	bash scripts/bench_daemon.sh $(BENCH_DAEMON_ARGS)
# mirage (mirage/): its unit and command-line tests, then the end-to-end
# tests (sessions and their processes, HIP programs in the sid sysroot,
# ranks across nodes, podman containers, a pty, cleanup after a killed
# supervisor), once the workspace (librocjitsu.so beside mirage) and the sid
# sysroot are built.
.PHONY: test-mirage
test-mirage: setup
	$(BUILD)
	@bash scripts/sysroot.sh --rocm 6 build >/dev/null
	@bash scripts/sysroot.sh --rocm 7 build >/dev/null
	$(CARGO_TEST) --release -p mirage-core -p mirage-host -p mirage-container -p mirage-builtin \
		-p mirage-backend-rocjitsu -p mirage-backend-rocjitsu-dbt -p mirage-backend-hotswap \
		-p mirage-ctl
	$(CARGO) test --release --workspace --test e2e

# ML frameworks from the registries, unmodified, on the emulated GPUs
# (scripts/frameworks.py, tests/frameworks): Triton 3.9 through its own HIP
# runtime on gfx942 (ROCm 6.4.3) and gfx950 (ROCm 7.2.4), tinygrad 0.14's
# AMD backend (its own KFD ioctls, AQL/PM4 and SDMA queues) with its
# test_tiny.py, CuPy for ROCm 7, ONNX Runtime's ROCm build (an MLP and a CNN
# against its CPU provider on gfx942, a clear refusal on gfx950). `setup`
# downloads the wheels on the host (cached) and installs venvs and Debian
# packages into the sysroots. FRAMEWORKS_ARGS passes options, e.g.
# FRAMEWORKS_ARGS="-k triton --threads 1".
FRAMEWORKS_ARGS ?=
.PHONY: test-frameworks test-frameworks-full
test-frameworks: setup
	$(BUILD)
	$(PYTHON) scripts/frameworks.py setup
	$(PYTHON) scripts/frameworks.py run $(FRAMEWORKS_ARGS)

# The full tier, by hand: larger sizes, CuPy on gfx950, two torchrun-style
# ranks on a 2-GPU node through mirage (Debian's CPU torch for the
# rendezvous, hip-python for the GPU work), and with
# TINYGRAD_REPO=<a tinygrad checkout> tinygrad's test_ops.py under the
# emulator and under tinygrad's own mock GPU, side by side (long).
TINYGRAD_REPO ?=
test-frameworks-full: setup
	$(BUILD)
	$(PYTHON) scripts/frameworks.py setup --tier full
	$(PYTHON) scripts/frameworks.py run --tier full $(if $(TINYGRAD_REPO),--tinygrad-repo $(TINYGRAD_REPO)) \
	  --json build/frameworks/full.json $(FRAMEWORKS_ARGS)

# Framework figures (printed, never asserted): Triton's 1024^3 fp16 matmul
# through Triton's HIP runtime against the same code object through
# run-kernel, at 1 and all host threads; with BENCH_FRAMEWORKS_ARGS=--smoke
# also the CI cases' wall times at each thread count.
BENCH_FRAMEWORKS_ARGS ?=
.PHONY: bench-frameworks
bench-frameworks: setup
	$(BUILD)
	$(PYTHON) scripts/frameworks.py setup
	$(PYTHON) scripts/frameworks.py bench $(BENCH_FRAMEWORKS_ARGS)

# mirage's dashboard (mirage/dashboard/web): React + TypeScript built by
# Vite into dist/, which `mirage serve` embeds (mirage/daemon). npm installs
# from the lockfile when node_modules is missing or older than it. Without
# npm nothing is built and `mirage serve` answers a page saying how.
DASHBOARD := mirage/dashboard/web
.PHONY: dashboard test-dashboard
dashboard:
	@if command -v npm >/dev/null; then \
	  cd $(DASHBOARD) && \
	  { [ node_modules/.package-lock.json -nt package-lock.json ] || npm ci --no-audit --no-fund; } && \
	  npm run build; \
	else echo "dashboard: npm not found; not built (mirage serve says how to build it)"; fi

# `mirage serve`: the API's tests (auth, stores, OpenAPI document, sessions,
# executions and WebSockets against real sessions), then the dashboard in
# Debian's chromium against a running `mirage serve` (screenshots in
# build/dashboard/screenshots).
test-dashboard: setup dashboard
	$(BUILD)
	$(CARGO_TEST) --release -p mirage-daemon
	$(PYTHON) scripts/hip_tests.py build --target gfx90a -k vector_add
	$(PYTHON) scripts/hip_tests.py build --target gfx90a -k long_kernel
	cd $(DASHBOARD) && node tests/browser.mjs --mirage ../../../target/release/mirage \
	  --programs ../../../build/hip/gfx90a --out ../../../build/dashboard/screenshots

# The sid sysroots alone (Debian sid with ROCm 6.4.3, and with ROCm 7.2.4; cached under $ROCJITSU_CACHE).
sysroot: setup
	@bash scripts/sysroot.sh --rocm 6 build
	@bash scripts/sysroot.sh --rocm 7 build

# [kmd] figures: rocminfo wall time, empty-kernel launch latency, hipMemcpy
# bandwidth and an end-to-end vector add under the launcher (printed, never
# asserted); BENCH_KMD_ARGS passes options, e.g. "--launches 500".
BENCH_KMD_ARGS ?=
bench-kmd: setup
	$(BUILD)
	bash scripts/bench_kmd.sh $(BENCH_KMD_ARGS)

# The differential test against LLVM 22 on seeded random words (also part of
# `make test`), with its report printed.
test-diff: setup
	$(CARGO) test --release -p llvm-oracle --test random_diff -- --nocapture

# gfx1201's, gfx908's and GFX10's differentials (all words, and per
# encoding family) with 1,000,000 words each (per wave size on RDNA; by
# hand; `make test` runs 200,000 for all words and 50,000 per family).
test-diff-deep: setup
	ROCJITSU_DIFF_CASES=1000000 $(CARGO) test --release -p llvm-oracle --test random_diff -- --nocapture _words_gfx1201_wave
	ROCJITSU_DIFF_CASES=1000000 $(CARGO) test --release -p llvm-oracle --test random_diff -- --nocapture _words_gfx908
	ROCJITSU_DIFF_CASES=1000000 $(CARGO) test --release -p llvm-oracle --test random_diff -- --nocapture _words_gfx10

# Exhaustive sweeps against LLVM 22 (about 88M words, ~4.5 min on 2 cores;
# by hand, not part of `make test`): every gfx1100, gfx1151 and gfx1201 SOPP
# and SOPK opcode with every 16-bit immediate (crates/llvm-oracle/tests/sweep.rs).
test-diff-sweep: setup
	$(CARGO) test --release -p llvm-oracle --test sweep -- --nocapture

# Decode throughput on one core over the corpus's .text (criterion; the plain
# instructions/s figure per target is printed first).
bench: corpus
	$(CARGO) bench -p rocjitsu-isa --bench decode

# simdojo's event rate: the synthetic MI300X-sized model (8 XCDs x 38 CUs)
# at each thread count of BENCH_SIMDOJO_THREADS, partitioned per XCD and per
# shader engine, with the scaling over the first count; every run's final
# state must equal the first's. BENCH_SIMDOJO_ARGS passes more options
# (--sim-us N, --repeat N, --cut xcd|se, --topology configs/timing/mi300x.json).
BENCH_SIMDOJO_THREADS ?= 1,2,4,8,16
BENCH_SIMDOJO_ARGS ?=
.PHONY: bench-simdojo
bench-simdojo:
	$(CARGO) bench -p rocjitsu-simdojo --bench event_rate -- --threads $(BENCH_SIMDOJO_THREADS) $(BENCH_SIMDOJO_ARGS)

# Calibration of the timing model (clocked mode): pointer-chase latencies
# at L1, L2, MALL and HBM footprints, a STREAM triad and an MFMA loop, each
# modelled figure against its published measurement with the error (target
# within 20%; sources in configs/timing/README.md), and clocked mode's
# slowdown over functional mode. BENCH_TIMING_ARGS: --quick, --threads N,
# --reps N.
BENCH_TIMING_ARGS ?=
.PHONY: bench-timing
bench-timing:
	$(PYTHON) scripts/corpus.py build --src tests/bench/timing --out build/bench-timing --target gfx942
	$(BUILD)
	$(PYTHON) scripts/bench_timing.py $(BENCH_TIMING_ARGS)

# Execution-engine figures: wave-instructions/s of an ALU-bound and a
# memory-bound kernel on one host thread (every target), and the wall time of
# 1024^3 Triton GEMMs (fp16 on gfx942, fp8 on gfx950) at 1 thread and all
# threads; every result is checked against numpy.
bench-exec: setup
	$(PYTHON) scripts/corpus.py build --src tests/bench/src --out build/bench-kernels
	$(BUILD)
	$(VENV_PY) scripts/bench_exec.py $(BENCH_ARGS)

# Execution-plugin overhead: the ALU, triad and GEMM benchmarks (gfx942, one
# thread) without a plugin and with each built-in plugin (metrics, trace,
# hazards, races, coverage), best of PLUGIN_REPS interleaved runs each, side
# by side with their ratios (targets: metrics under 1.3x, hazards and races
# under 3x). BENCH_BASELINE=path/to/rocjitsu adds the run without a plugin
# on another build (e.g. one from before plugins).
PLUGIN_REPS ?= 3
BENCH_BASELINE ?=
.PHONY: bench-plugins
bench-plugins: setup
	$(PYTHON) scripts/corpus.py build --src tests/bench/src --out build/bench-kernels
	$(BUILD)
	$(VENV_PY) scripts/bench_exec.py --plugins --reps $(PLUGIN_REPS) $(if $(BENCH_BASELINE),--baseline $(BENCH_BASELINE)) $(BENCH_ARGS)

# [stack] figures (scripts/bench_stack.sh): rocBLAS SGEMM/HGEMM 1024^3 and
# 2048^3 per call, rocPRIM radix sort of 16 Mi keys, hipMemcpy and managed
# memory throughput, on gfx942 (ROCm 7.2.4 sysroot) at 1 and all host
# threads. BENCH_STACK_ARGS: e.g. --target gfx90a, --threads 1,16.
BENCH_STACK_ARGS ?=
.PHONY: bench-stack
bench-stack: setup
	$(BUILD)
	bash scripts/sysroot.sh --rocm 7 install librocblas-dev librocprim-dev
	bash scripts/sysroot.sh --rocm 7 run -- bash scripts/bench_stack.sh $(BENCH_STACK_ARGS)

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
fuzz: fuzz-decode fuzz-container fuzz-rpc fuzz-jit

fuzz-decode:
	$(call run_fuzz,crates/isa/fuzz,decode)

fuzz-container:
	$(call run_fuzz,crates/code/fuzz,container)

fuzz-rpc:
	$(call run_fuzz,crates/rpc/fuzz,message)

# The translation tier against the interpreter on random ALU sequences
# (crates/gpu/fuzz/fuzz_targets/jit_diff.rs; the bounded seeded run is
# `cargo test -p rocjitsu-gpu --lib jit::fuzz`, part of `make test`).
fuzz-jit:
	$(call run_fuzz,crates/gpu/fuzz,jit_diff)

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
