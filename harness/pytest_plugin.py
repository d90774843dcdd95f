"""The kit's pytest plugin (entry point ``pytest11`` ``lifecycle_tck``; DESIGN.md "pytest plugin"):
a user's own tests get the fake API server with no conftest of theirs.

* ``kube_world``: a fresh world in the test's thread on a virtual clock
  (:class:`harness.targets.embedded.KubeWorld`);
* ``kube_server``: a fresh world served over HTTP on a free loopback port, stopped after the test
  (:class:`harness.targets.embedded.KubeServer`: ``url``, ``kubeconfig``, ``advance``, ``audit``,
  ``faults``, ...);
* ``--kube-controllers SPEC`` and the marker ``@pytest.mark.kube_controllers(*names)``: which
  simulators and reference controllers run (``all``, ``none``, ``simulators`` or names);
* ``--kube-export-kubeconfig`` and the marker ``@pytest.mark.kube_export_kubeconfig``: ``KUBECONFIG``
  names the ``kube_server``'s kubeconfig during the test.

Wiring only: the work is in harness/targets/embedded.py, imported when a fixture is first used, so
a pytest run that uses neither fixture loads nothing of the kit and behaves as without the plugin.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from harness.targets.embedded import KubeServer, KubeWorld

CONTROLLERS_OPTION = "--kube-controllers"
EXPORT_OPTION = "--kube-export-kubeconfig"
CONTROLLERS_MARKER = "kube_controllers"
EXPORT_MARKER = "kube_export_kubeconfig"
KUBECONFIG_ENV = "KUBECONFIG"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("lifecycle-tck-fixtures", "Lifecycle TCK fixtures (kube_world, kube_server)")
    group.addoption(CONTROLLERS_OPTION, default=None, metavar="SPEC",
                    help="what the kube_world and kube_server worlds run: all (default), none, simulators "
                         "(no reference controller), or a comma-separated list of simulators and reference "
                         "controllers; the kube_controllers marker overrides it per test")
    group.addoption(EXPORT_OPTION, action="store_true", default=False,
                    help="set KUBECONFIG to the kube_server's kubeconfig during each test that uses it")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{CONTROLLERS_MARKER}(*names): what this test's kube_world or kube_server runs "
                   "(all, none, simulators, or simulator and reference controller names)")
    config.addinivalue_line(
        "markers", f"{EXPORT_MARKER}: set KUBECONFIG to this test's kube_server kubeconfig")


def _spec(request: pytest.FixtureRequest) -> list[str]:
    marker = request.node.get_closest_marker(CONTROLLERS_MARKER)
    if marker is not None:
        return [str(arg) for arg in marker.args]
    option = request.config.getoption(CONTROLLERS_OPTION)
    return [str(option)] if option else []


@pytest.fixture
def kube_world(request: pytest.FixtureRequest) -> KubeWorld:
    """A fresh world in this thread on a virtual clock (harness/targets/embedded.py ``KubeWorld``)."""
    from harness.resources import ResourceError
    from harness.targets.embedded import KubeWorld, PluginUsageError, new_world

    try:
        return KubeWorld(new_world(_spec(request)))
    except (PluginUsageError, ResourceError) as err:
        pytest.fail(f"kube_world: {err}", pytrace=False)


@pytest.fixture
def kube_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KubeServer]:
    """A fresh world served over HTTP on a free loopback port, stopped after the test
    (harness/targets/embedded.py ``KubeServer``)."""
    from harness.resources import ResourceError
    from harness.targets.embedded import KubeServer, PluginUsageError, new_world

    try:
        server = KubeServer(new_world(_spec(request)), tmp_path_factory.mktemp("kube-server") / "kubeconfig")
    except (PluginUsageError, ResourceError) as err:
        pytest.fail(f"kube_server: {err}", pytrace=False)
    with pytest.MonkeyPatch.context() as env:
        if request.config.getoption(EXPORT_OPTION) or request.node.get_closest_marker(EXPORT_MARKER):
            env.setenv(KUBECONFIG_ENV, str(server.kubeconfig))
        try:
            yield server
        finally:
            server.close()
