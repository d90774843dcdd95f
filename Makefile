# The two quickstart commands (see README): `make conformance` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: conformance test lint bench serve clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test,lint]'
	touch $(STAMP)

conformance: $(STAMP)  ## run the conformance suite against the reference implementation
	$(BIN)/lifecycle-tck conformance

test: $(STAMP)  ## run the unit tests, the real-client tests and the features (in-process, then over HTTP)
	$(BIN)/python -m pytest -q tests features && $(BIN)/python -m pytest -q features --transport http

lint: $(STAMP)
	$(BIN)/ruff check harness controllers features tests benchmarks conftest.py
	$(BIN)/lint-imports

bench: $(STAMP)
	$(BIN)/python -m benchmarks

serve: $(STAMP)
	$(BIN)/lifecycle-tck serve

clean:
	rm -rf $(VENV) .tox reports
