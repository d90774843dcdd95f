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

# The features with reference controllers also run with the controllers as a separate process.
PROCESS_FEATURES := $(wildcard features/test_machine_deletion_scenarios.py features/test_cluster_lifecycle_scenarios.py \
	features/test_runtime_hooks_scenarios.py features/test_rollout_hooks_scenarios.py features/test_addon_deletion_scenarios.py \
	features/test_hic_scenarios.py features/test_runtime_extension_scenarios.py)

# Each run is spread over the machine's CPUs (pytest-xdist): every test has its own world and ports.
XDIST := -n auto

test: $(STAMP)  ## unit and real-client tests; the features in-process, over HTTP, and with the controllers as a process
	$(BIN)/python -m pytest -q $(XDIST) tests features && $(BIN)/python -m pytest -q $(XDIST) features --transport http \
		&& $(BIN)/python -m pytest -q $(XDIST) $(PROCESS_FEATURES) --transport process

lint: $(STAMP)
	$(BIN)/ruff check harness controllers features tests benchmarks examples conftest.py
	$(BIN)/lint-imports

bench: $(STAMP)
	$(BIN)/python -m benchmarks

serve: $(STAMP)
	$(BIN)/lifecycle-tck serve

clean:
	rm -rf $(VENV) .tox reports
