"""The conformance suite's target options (``--target`` and each target's own), shared by the test
suite and the conformance suite: the root conftest.py of a checkout and features/conftest.py both
load this plugin (pytest loads it once), so an installed kit, which has no root conftest, has them too."""

from __future__ import annotations

import pytest

# reference: the reference controllers in the scenario's world; reference-process: the same controllers
# as a separate process over HTTP (features/conftest.py then uses the process transport); hic: a
# third-party hook implementing controller (--hic-command, --hic-config; harness/targets/hic.py).
TARGETS = ("reference", "reference-process", "hic", "controller", "machine-controller", "extension")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("lifecycle-tck")
    group.addoption("--target", default="reference", choices=TARGETS,
                    help="what the conformance scenarios run against (default: the reference controllers)")
    group.addoption("--hic-command", default=None,
                    help="--target hic: the command that runs the HIC under test (KUBECONFIG and "
                         "LIFECYCLE_TCK_HIC_CONFIG are set for it)")
    group.addoption("--hic-config", default=None, help="--target hic: the HIC config (YAML) saying what it claims")
    # --target extension: a Runtime Extension at a URL (harness/targets/extension.py).
    group.addoption("--extension-url", default=None,
                    help="--target extension: the base URL of the Runtime Extension under test (https)")
    group.addoption("--ca-file", default=None,
                    help="--target extension: the PEM file of the CA that signs the extension's certificate")
    # --target controller (and its alias machine-controller): harness/targets/machine_controller.py.
    group.addoption("--controller-command", default=None,
                    help="--target controller/machine-controller: the command that runs the controller under test")
    group.addoption("--stdio-control", action="store_true", default=False,
                    help="--target controller/machine-controller: the command speaks the stdio control protocol "
                         "(lockstep)")
    group.addoption("--profile", action="append", default=None,
                    help="--target controller: a controller profile the command claims (repeatable)")
    group.addoption("--wall-budget", type=float, default=None,
                    help="--target controller/machine-controller without --stdio-control: the virtual seconds a "
                         "scenario may let pass in wall time (default 10)")
