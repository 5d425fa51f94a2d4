# Two commands do all the set-up on a fresh clone: `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# `make demo` installs only what the demo needs (the base install and the server extra, about
# 25 packages), not the development set `make test` needs (with Playwright, ruff, mypy, ...).
DEMO_STAMP := $(VENV)/.demo-installed
# Peer virtualenvs, npm packages and other downloads live outside the clone, so that later runs
# (and CI on the same machine) reuse them; each is keyed by what it pins.
CACHE ?= $(HOME)/.cache/agui-chat
ROOT := $(CURDIR)
# Whether we may install Debian packages (only as root; elsewhere the tests that need them
# skip with a reason that says how to install them).
IS_ROOT := $(shell [ "$$(id -u)" = 0 ] && echo yes)

# Each lane of real components (Redis, Chromium, peers, npm servers) is a file in mk/ that
# appends its set-up target to TEST_DEPS.
TEST_DEPS :=
include $(sort $(wildcard mk/*.mk))

.PHONY: demo test test-deps lint bench bench-quick clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

$(DEMO_STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[server]'
	touch $(DEMO_STAMP)

demo: $(DEMO_STAMP)
	$(BIN)/agui-chat demo

lint: $(STAMP)
	$(BIN)/ruff check src tests samples bench
	$(BIN)/ruff format --check src tests samples bench
	$(BIN)/mypy --strict src

test-deps: $(STAMP) $(TEST_DEPS)

test: lint test-deps
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python bench/run.py

bench-quick: $(STAMP)
	$(BIN)/python bench/run.py --quick

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
