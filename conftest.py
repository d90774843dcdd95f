"""Options shared by the test suite and the conformance suite."""

from __future__ import annotations

import pytest

TARGETS = ("reference",)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("lifecycle-tck")
    group.addoption("--target", default="reference", choices=TARGETS,
                    help="what the conformance scenarios run against (default: the reference controllers)")
