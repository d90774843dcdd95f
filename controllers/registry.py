"""The reference controllers, by name: ``name -> "module:Class"``. Each class takes the management
cluster's client and is a :class:`harness.client.Controller` whose ``name`` is its key here."""

from __future__ import annotations

import importlib
from typing import Any

CONTROLLERS: dict[str, str] = {
    "machine": "controllers.machine.controller:MachineController",
    "deployment": "controllers.rollout.deployment:DeploymentController",
    "statefulset": "controllers.rollout.statefulset:StatefulSetController",
    "daemonset": "controllers.rollout.daemonset:DaemonSetController",
    "cluster": "controllers.cluster.controller:ClusterController",
    "machineset": "controllers.machineset.machineset:MachineSetController",
    "machinedeployment": "controllers.machineset.machinedeployment:MachineDeploymentController",
    "extensionconfig": "controllers.runtime.controller:ExtensionConfigController",
    "topology": "controllers.topology.controller:TopologyController",
    "addons": "controllers.addons.controller:AddonController",
}

# Admission plugins of the kinds the reference controllers own ("module:attribute" of a sequence of
# (API group, kind, plugin)), installed on the management cluster by the composition root: they belong
# to the API the controllers serve, so they apply whichever implementation runs the controllers.
ADMISSION: tuple[str, ...] = ("controllers.machine.webhooks:ADMISSION_PLUGINS",
                              "controllers.rollout.webhooks:ADMISSION_PLUGINS",
                               "controllers.runtime.webhooks:ADMISSION_PLUGINS",
                               "controllers.machineset.webhooks:ADMISSION_PLUGINS",
                               "controllers.addons.webhooks:ADMISSION_PLUGINS")


def _resolve(path: str) -> Any:
    module, _, attribute = path.partition(":")
    return getattr(importlib.import_module(module), attribute)


def load(name: str) -> Any:
    """The controller class registered as ``name`` (KeyError for an unknown name)."""
    return _resolve(CONTROLLERS[name])


def admission_plugins() -> list[tuple[str, str, Any]]:
    """Every (API group, kind, admission plugin) of :data:`ADMISSION`."""
    return [entry for path in ADMISSION for entry in _resolve(path)]
