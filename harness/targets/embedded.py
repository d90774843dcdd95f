"""The fake API server inside a user's own tests: what the pytest plugin's fixtures hand out
(harness/pytest_plugin.py wires them; DESIGN.md "pytest plugin").

* :class:`KubeWorld`: a world in the test's thread on a virtual clock (an
  :class:`~harness.world.scene.InProcessScene`: clients, ``advance``, ``settle``, ``audit``, the
  simulators' knobs), plus ``faults`` and ``load``.
* :class:`KubeServer`: a world served over HTTP on a free loopback port for real clients (kubectl,
  the ``kubernetes`` client, kopf): an :class:`~harness.world.http_scene.HttpScene` (the server the
  suite's ``--transport http`` uses), plus ``url``, ``kubeconfig`` and ``faults``. Its clock is
  virtual too: time moves only when the test calls ``advance``.

Which simulators and reference controllers a world runs is the ``--kube-controllers`` option or the
``kube_controllers`` marker: ``all`` (the default), ``none``, ``simulators`` (every simulator, no
reference controller), or names (:data:`harness.world.world.SIMULATORS`,
:data:`~harness.world.world.MANAGEMENT_SIMULATORS`, :data:`controllers.registry.CONTROLLERS`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from harness.apiserver.faults import injector_of
from harness.apiserver.http import write_kubeconfig
from harness.targets.serve import UsageError, controller_names
from harness.world.fixtures import apply_documents, read_documents
from harness.world.http_scene import HttpScene
from harness.world.scene import InProcessScene
from harness.world.world import MANAGEMENT_SIMULATORS, SIMULATORS, World
from harness.world.world import REFERENCE_CONTROLLERS as CONTROLLERS

ALL = "all"
NONE = "none"
# Every simulator (kubelet, scheduler, ..., fake providers) and no reference controller: for a test
# whose own controller plays the part of one.
SIMULATORS_ONLY = "simulators"
FAULTS_PATH = "/faults"


class PluginUsageError(UsageError):
    """An option or marker of the plugin that cannot be used; the message says which."""


def choose(spec: Iterable[str]) -> tuple[list[str], list[str]]:
    """(simulators, reference controllers) that ``spec`` names: ``all``, ``none``, ``simulators``,
    or names, each item possibly a comma-separated list. PluginUsageError names what is unknown."""
    items = [n.strip() for raw in spec for n in str(raw).split(",") if n.strip()]
    names: list[str] = []
    for item in items or [ALL]:
        if item == SIMULATORS_ONLY:
            names += [*SIMULATORS, *MANAGEMENT_SIMULATORS]
            continue
        try:
            names += controller_names(item)
        except UsageError as err:
            raise PluginUsageError(f"kube_controllers: {err} (or all, none, simulators)") from None
    unique = list(dict.fromkeys(names))
    return [n for n in unique if n not in CONTROLLERS], [n for n in unique if n in CONTROLLERS]


def new_world(spec: Iterable[str]) -> World:
    """A fresh world on a virtual clock running what ``spec`` names (see :func:`choose`)."""
    simulators, controllers = choose(spec)
    return World(simulators=simulators, controllers=controllers)


def _fault_rule(rule: dict[str, Any] | None, fields: dict[str, Any]) -> dict[str, Any]:
    """A fault rule from a dict and/or keywords (``fault="Conflict", count=1, verbs=["update"]``)."""
    return {**(rule or {}), **fields}


class KubeWorld(InProcessScene):
    """A world in this thread on a virtual clock (the ``kube_world`` fixture): ``client(cluster,
    user)``, ``advance(seconds)``, ``settle()``, ``now()``, ``audit(**filters)``, ``configure(simulator,
    **knobs)``, ``set_enabled(...)``, ``call(...)``, the world itself as ``world``; plus :meth:`faults`
    and :meth:`load`."""

    def faults(self, rule: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
        """Add a fault rule (harness/apiserver/http/faults.py; in-process only the error faults
        apply) and return it with its ``id``; FaultRuleError says why a rule is refused."""
        return injector_of(self.world.clusters).add(_fault_rule(rule, fields)).to_dict()

    def load(self, *paths: str | os.PathLike[str]) -> None:
        """Create every object of these YAML files or folders (CRDs first), then settle."""
        apply_documents(self.world.client(), read_documents(paths))
        self.world.settle()


class KubeServer(HttpScene):
    """A world served over HTTP on a free loopback port (the ``kube_server`` fixture): ``url``,
    ``kubeconfig`` (a file with the context ``management`` and one per workload cluster),
    ``advance(seconds)``, ``audit(**filters)``, ``faults(...)``, and every :class:`HttpScene` call
    (``client``, ``configure``, ``set_enabled``, ``http``, ...). Stop it with :meth:`close`."""

    def __init__(self, world: World, kubeconfig: Path) -> None:
        """Serve ``world`` and write its kubeconfig to ``kubeconfig``; PluginUsageError (the server
        stopped again) when that file cannot be written."""
        super().__init__(world)
        self.url = self.server.base_url
        self.kubeconfig = Path(kubeconfig)
        try:
            write_kubeconfig(world.clusters, self.kubeconfig)
        except OSError as err:
            self.close()
            raise PluginUsageError(f"cannot write the kubeconfig {self.kubeconfig}: {err.strerror or err}") from None
        # The server's thread adds and removes workload clusters: the kubeconfig follows.
        world.on_clusters_changed(lambda _name: write_kubeconfig(world.clusters, kubeconfig))

    def faults(self, rule: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
        """Add a fault rule (``POST /harness/v1/faults``; harness/apiserver/http/faults.py): the
        requests it matches get a 409, 429, 500, an expired list, a dropped watch or latency. The
        rule comes back with its ``id`` and ``fired`` count; a bad rule raises the Status."""
        return dict(self._post(FAULTS_PATH, _fault_rule(rule, fields)))

    def injected(self) -> dict[str, Any]:
        """The fault rules and every fault injected so far (``GET /harness/v1/faults``)."""
        return dict(self._get(FAULTS_PATH))
