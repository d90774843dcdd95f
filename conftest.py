"""Options shared by the test suite and the conformance suite."""

from __future__ import annotations

import pytest

# reference: the reference controllers in the scenario's world; reference-process: the same controllers
# as a separate process over HTTP (features/conftest.py then uses the process transport); hic: a
# third-party hook implementing controller (--hic-command, --hic-config; harness/targets/hic.py).
TARGETS = ("reference", "reference-process", "hic")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("lifecycle-tck")
    group.addoption("--target", default="reference", choices=TARGETS,
                    help="what the conformance scenarios run against (default: the reference controllers)")
    group.addoption("--hic-command", default=None,
                    help="--target hic: the command that runs the HIC under test (KUBECONFIG and "
                         "LIFECYCLE_TCK_HIC_CONFIG are set for it)")
    group.addoption("--hic-config", default=None, help="--target hic: the HIC config (YAML) saying what it claims")
