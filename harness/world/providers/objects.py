"""The objects a user creates for the fake providers: a Cluster on a FakeCluster, a Machine with its
FakeBootstrapConfig and FakeMachine, the templates a MachineSet or MachineDeployment clones. Written once
for the tests and benchmarks that build worlds by hand (the Gherkin steps have their own sentences)."""

from __future__ import annotations

from typing import Any

from harness.kube.names.capi import (
    BOOTSTRAP_API_VERSION,
    CLUSTER_API_VERSION,
    CLUSTER_KIND,
    CONTROL_PLANE_LABEL,
    FAKE_BOOTSTRAP_CONFIG_KIND,
    FAKE_CLUSTER_KIND,
    FAKE_MACHINE_KIND,
    INFRASTRUCTURE_API_VERSION,
    MACHINE_KIND,
)
from harness.kube.names.core import DEFAULT_NAMESPACE

FAKE_MACHINE_TEMPLATE_KIND = "FakeMachineTemplate"
FAKE_BOOTSTRAP_CONFIG_TEMPLATE_KIND = "FakeBootstrapConfigTemplate"


def _ref(api_version: str, kind: str, name: str) -> dict[str, str]:
    return {"apiVersion": api_version, "kind": kind, "name": name}


def fake_cluster(name: str, namespace: str = DEFAULT_NAMESPACE, *, infrastructure: bool = True) -> list[dict[str, Any]]:
    """A FakeCluster and the Cluster whose ``spec.infrastructureRef`` names it, in creation order; with
    ``infrastructure=False`` the Cluster alone, with an empty spec."""
    if not infrastructure:
        return [{"apiVersion": CLUSTER_API_VERSION, "kind": CLUSTER_KIND,
                 "metadata": {"name": name, "namespace": namespace}, "spec": {}}]
    return [
        {"apiVersion": INFRASTRUCTURE_API_VERSION, "kind": FAKE_CLUSTER_KIND,
         "metadata": {"name": name, "namespace": namespace}},
        {"apiVersion": CLUSTER_API_VERSION, "kind": CLUSTER_KIND, "metadata": {"name": name, "namespace": namespace},
         "spec": {"infrastructureRef": _ref(INFRASTRUCTURE_API_VERSION, FAKE_CLUSTER_KIND, name)}},
    ]


def fake_machine(
    name: str,
    cluster: str,
    namespace: str = DEFAULT_NAMESPACE,
    *,
    control_plane: bool = False,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    owner: dict[str, Any] | None = None,
    spec: dict[str, Any] | None = None,
    bootstrap_annotations: dict[str, str] | None = None,
    infra_annotations: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    """A FakeBootstrapConfig, a FakeMachine and the Machine of ``cluster`` referencing both (all named
    ``name``), in creation order. The Machine always carries ``labels`` and ``annotations`` maps (empty when
    not given); ``spec`` adds to or overrides its spec."""
    bootstrap_meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if bootstrap_annotations is not None:
        bootstrap_meta["annotations"] = dict(bootstrap_annotations)
    infra_meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if infra_annotations is not None:
        infra_meta["annotations"] = dict(infra_annotations)
    machine_labels = dict(labels or {})
    if control_plane:
        machine_labels[CONTROL_PLANE_LABEL] = ""
    machine_meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": machine_labels,
                                    "annotations": dict(annotations or {})}
    if owner is not None:
        machine_meta["ownerReferences"] = [owner]
    machine_spec: dict[str, Any] = {
        "clusterName": cluster,
        "bootstrap": {"configRef": _ref(BOOTSTRAP_API_VERSION, FAKE_BOOTSTRAP_CONFIG_KIND, name)},
        "infrastructureRef": _ref(INFRASTRUCTURE_API_VERSION, FAKE_MACHINE_KIND, name),
        **(spec or {}),
    }
    return [
        {"apiVersion": BOOTSTRAP_API_VERSION, "kind": FAKE_BOOTSTRAP_CONFIG_KIND, "metadata": bootstrap_meta},
        {"apiVersion": INFRASTRUCTURE_API_VERSION, "kind": FAKE_MACHINE_KIND, "metadata": infra_meta},
        {"apiVersion": CLUSTER_API_VERSION, "kind": MACHINE_KIND, "metadata": machine_meta, "spec": machine_spec},
    ]


def fake_templates(
    infra: str, bootstrap: str, namespace: str = DEFAULT_NAMESPACE, *, infra_template: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """A FakeMachineTemplate (its ``spec.template`` is ``infra_template``, else an empty spec) and a
    FakeBootstrapConfigTemplate, for a MachineSet or MachineDeployment to clone."""
    return [
        {"apiVersion": INFRASTRUCTURE_API_VERSION, "kind": FAKE_MACHINE_TEMPLATE_KIND,
         "metadata": {"name": infra, "namespace": namespace},
         "spec": {"template": infra_template if infra_template is not None else {"spec": {}}}},
        {"apiVersion": BOOTSTRAP_API_VERSION, "kind": FAKE_BOOTSTRAP_CONFIG_TEMPLATE_KIND,
         "metadata": {"name": bootstrap, "namespace": namespace}, "spec": {"template": {"spec": {}}}},
    ]


def machine_template_spec(cluster: str, version: str, infra: str, bootstrap: str) -> dict[str, Any]:
    """A Machine template's ``spec`` cloning the fake templates ``infra`` and ``bootstrap`` (see
    :func:`fake_templates`)."""
    return {
        "clusterName": cluster,
        "version": version,
        "bootstrap": {"configRef": _ref(BOOTSTRAP_API_VERSION, FAKE_BOOTSTRAP_CONFIG_TEMPLATE_KIND, bootstrap)},
        "infrastructureRef": _ref(INFRASTRUCTURE_API_VERSION, FAKE_MACHINE_TEMPLATE_KIND, infra),
    }
