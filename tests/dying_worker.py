"""pytest plugin for tests/test_conformance_parallel.py (loaded through ``PYTEST_PLUGINS``): the worker
process of a ``--jobs N`` run that runs the scenario whose id contains ``LIFECYCLE_TCK_DIE_IN`` dies
at once, as an interpreter crash would (no report, no teardown). Never in the controller or in a
single-process run, which it would end."""

from __future__ import annotations

import os

import pytest

DIE_IN = "LIFECYCLE_TCK_DIE_IN"
EXIT_CODE = 70


def pytest_runtest_call(item: pytest.Item) -> None:
    """Die in the scenario ``LIFECYCLE_TCK_DIE_IN`` names, in a worker."""
    needle = os.environ.get(DIE_IN)
    if needle and needle in item.nodeid and hasattr(item.config, "workerinput"):
        os._exit(EXIT_CODE)
