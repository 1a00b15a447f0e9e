# rocjitsu: the two commands of the README are `make demo` and `make test`.
SHELL := /bin/bash
CARGO ?= cargo

.PHONY: setup build demo test test-unit test-corpus test-diff fuzz bench fmt lint

setup:
	@bash scripts/setup.sh

build: setup
	$(CARGO) build --release --workspace

demo: build
	@bash scripts/demo.sh

test: setup
	$(CARGO) build --release --workspace
	$(CARGO) test --release --workspace

fmt:
	$(CARGO) fmt --all

lint:
	$(CARGO) clippy --workspace --all-targets -- -D warnings
