# The two quickstart commands (see README): `make conformance` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: conformance test test-all lint bench serve clean

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

# Each run is spread over twice as many pytest-xdist workers as the machine has CPUs: many tests wait on a
# child process or a bounded real-time deadline, and another worker uses the CPU meanwhile.
# tests/conftest.py puts the longest modules first and --maxschedchunk 1 hands tests out two at a time, so
# the long ones are spread over the workers from the start and none runs alone at the end (by default, and
# with worksteal, the first worker gets a quarter of the suite in one chunk: every long test). Every test
# has its own world and ports.
WORKERS ?= $(shell $(PYTHON) -c 'import os; print(2 * len(os.sched_getaffinity(0)))' 2>/dev/null || echo auto)
XDIST := -n $(WORKERS) --maxschedchunk 1

# Bytecode is written and shared: each test's child processes (serve, the controllers, a conformance run)
# would otherwise compile every module of the kit again (some environments set PYTHONDONTWRITEBYTECODE).
unexport PYTHONDONTWRITEBYTECODE

# make test: every test and every scenario in-process, except the few `slow` tests whose rule another test
# holds (tests/conftest.py); over HTTP and with the controllers as a process, the transport's own part
# (--transport-selection cover, features/selection.py): scenarios covering every step definition, feature
# file and profile over HTTP plus every @wire and @apiserver scenario, and every feature file, profile and
# When step with the controllers as a process.
test: $(STAMP)  ## unit and real-client tests, every feature in-process; each transport's own part over HTTP and as a process
	$(BIN)/python -m pytest -q $(XDIST) -m 'not slow' tests features \
		&& $(BIN)/python -m pytest -q $(XDIST) features --transport http --transport-selection cover \
		&& $(BIN)/python -m pytest -q $(XDIST) $(PROCESS_FEATURES) --transport process --transport-selection cover

# make test-all: everything, every feature in every transport (CI's nightly run; about 15 minutes on 2 CPUs).
test-all: $(STAMP)  ## every test, and every feature in-process, over HTTP and with the controllers as a process
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
