# Two commands do all the set-up on a fresh clone: `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench bench-quick clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/agui-chat demo

lint: $(STAMP)
	$(BIN)/ruff check src tests samples bench
	$(BIN)/ruff format --check src tests samples bench
	$(BIN)/mypy --strict src

test: lint
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python bench/run.py

bench-quick: $(STAMP)
	$(BIN)/python bench/run.py --quick

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
