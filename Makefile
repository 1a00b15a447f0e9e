# rocjitsu: the two commands of the README are `make demo` and `make test`.
SHELL := /bin/bash
CARGO ?= cargo

.PHONY: setup build demo test test-unit test-corpus test-diff fuzz bench fmt lint corpus corpus-stats corpus-clean

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

test: setup corpus
	$(CARGO) build --release --workspace
	$(CARGO) test --release --workspace

fmt:
	$(CARGO) fmt --all

lint:
	$(CARGO) clippy --workspace --all-targets -- -D warnings
