"""The objects a Cluster's topology asks for, computed from its ClusterClass and templates.

A ClusterClass of this world (``cluster.x-k8s.io/v1beta1``) names:

- ``spec.infrastructure.ref``: a FakeClusterTemplate; the Cluster gets a FakeCluster named like it;
- ``spec.controlPlane.ref``: a KubeadmControlPlaneTemplate, and ``spec.controlPlane.machineInfrastructure.ref``
  a FakeMachineTemplate; the Cluster gets a KubeadmControlPlane named like it, whose Machines are cloned
  from that FakeMachineTemplate (referenced as it is, not copied per Cluster);
- ``spec.workers.machineDeployments[]``: ``class``, ``template.bootstrap.ref`` and
  ``template.infrastructure.ref``; each ``spec.topology.workers.machineDeployments[]`` entry (``class``,
  ``name``, ``replicas``, ``metadata``) gets a MachineDeployment ``<cluster>-<name>``; the entry's
  ``metadata`` labels and annotations go on the MachineDeployment and on its Machines' template.

Every object is labelled ``cluster.x-k8s.io/cluster-name`` and ``topology.cluster.x-k8s.io/owned`` and has
an owner reference to the Cluster. Names are deterministic (upstream adds a random suffix).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from controllers.machine.api import meta
from controllers.topology.api import CLUSTER_TOPOLOGY_OWNED_LABEL, DEPLOYMENT_TOPOLOGY_NAME_LABEL
from harness.client import Client
from harness.kube.names.capi import (
    CLUSTER_API_VERSION,
    CLUSTER_NAME_LABEL,
    CONTROL_PLANE_API_VERSION,
    FAKE_CLUSTER_KIND,
    INFRASTRUCTURE_API_VERSION,
    KUBEADM_CONTROL_PLANE_KIND,
    MACHINE_DEPLOYMENT_KIND,
    MACHINE_DEPLOYMENT_NAME_LABEL,
)
from harness.kube.objects import clone

DEFAULT_CONTROL_PLANE_REPLICAS = 1
DEFAULT_WORKER_REPLICAS = 1
MISSING_CLASS = "MachineDeployment class {name} not found in ClusterClass {cluster_class}"


class BlueprintError(Exception):
    """The ClusterClass or a template it names cannot be used."""


@dataclass
class Blueprint:
    """A ClusterClass and the templates it names."""

    cluster_class: dict[str, Any]
    infrastructure_template: dict[str, Any]
    control_plane_template: dict[str, Any]
    worker_classes: dict[str, dict[str, Any]] = field(default_factory=dict)


def _ref(obj: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    node: Any = obj
    for key in path:
        node = (node or {}).get(key) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else {}


def read_blueprint(client: Client, cluster_class: dict[str, Any]) -> Blueprint:
    """The templates of ``cluster_class`` (ApiError when one is missing)."""
    namespace = meta(cluster_class).get("namespace")
    spec = cluster_class.get("spec") or {}

    def get(ref: dict[str, Any]) -> dict[str, Any]:
        return client.get(str(ref.get("apiVersion", "")), str(ref.get("kind", "")), str(ref.get("name", "")),
                          ref.get("namespace") or namespace)

    workers = {str(md.get("class", "")): md for md in (spec.get("workers") or {}).get("machineDeployments") or []}
    return Blueprint(cluster_class, get(_ref(spec, ("infrastructure", "ref"))),
                     get(_ref(spec, ("controlPlane", "ref"))), workers)


def owner_ref(cluster: dict[str, Any]) -> dict[str, Any]:
    """The owner reference to the Cluster the topology objects carry."""
    return {
        "apiVersion": CLUSTER_API_VERSION,
        "kind": "Cluster",
        "name": meta(cluster)["name"],
        "uid": meta(cluster)["uid"],
    }


def _labels(cluster: dict[str, Any]) -> dict[str, str]:
    return {CLUSTER_NAME_LABEL: meta(cluster)["name"], CLUSTER_TOPOLOGY_OWNED_LABEL: ""}


def infrastructure_cluster(cluster: dict[str, Any], blueprint: Blueprint) -> dict[str, Any]:
    """The FakeCluster."""
    template = ((blueprint.infrastructure_template.get("spec") or {}).get("template") or {})
    return {"apiVersion": INFRASTRUCTURE_API_VERSION, "kind": FAKE_CLUSTER_KIND,
            "metadata": {"name": meta(cluster)["name"], "namespace": meta(cluster)["namespace"],
                         "labels": {**((template.get("metadata") or {}).get("labels") or {}), **_labels(cluster)},
                         "annotations": dict((template.get("metadata") or {}).get("annotations") or {}),
                         "ownerReferences": [owner_ref(cluster)]},
            "spec": clone(template.get("spec") or {})}


def control_plane(cluster: dict[str, Any], blueprint: Blueprint, version: str) -> dict[str, Any]:
    """The KubeadmControlPlane at ``version``."""
    template = ((blueprint.control_plane_template.get("spec") or {}).get("template") or {})
    topology = (cluster.get("spec") or {}).get("topology") or {}
    replicas = (topology.get("controlPlane") or {}).get("replicas", DEFAULT_CONTROL_PLANE_REPLICAS)
    machine_ref = _ref(blueprint.cluster_class.get("spec") or {}, ("controlPlane", "machineInfrastructure", "ref"))
    spec = clone(template.get("spec") or {})
    spec.update({"replicas": replicas, "version": version,
                 "machineTemplate": {**(spec.get("machineTemplate") or {}), "infrastructureRef": {
                     "apiVersion": machine_ref.get("apiVersion"), "kind": machine_ref.get("kind"),
                     "name": machine_ref.get("name"),
                     "namespace": machine_ref.get("namespace") or meta(cluster)["namespace"]}}})
    spec.setdefault("kubeadmConfigSpec", {})
    return {"apiVersion": CONTROL_PLANE_API_VERSION, "kind": KUBEADM_CONTROL_PLANE_KIND,
            "metadata": {"name": meta(cluster)["name"], "namespace": meta(cluster)["namespace"],
                         "labels": _labels(cluster), "ownerReferences": [owner_ref(cluster)]},
            "spec": spec}


def machine_deployment_name(cluster: dict[str, Any], topology_name: str) -> str:
    return f"{meta(cluster)['name']}-{topology_name}"


def machine_deployments(cluster: dict[str, Any], blueprint: Blueprint) -> list[tuple[str, dict[str, Any]]]:
    """``(topology name, MachineDeployment without version)`` for each worker of the topology."""
    topology = (cluster.get("spec") or {}).get("topology") or {}
    out = []
    for entry in (topology.get("workers") or {}).get("machineDeployments") or []:
        worker_class = blueprint.worker_classes.get(str(entry.get("class", "")))
        if worker_class is None:
            raise BlueprintError(MISSING_CLASS.format(name=entry.get("class"),
                                                      cluster_class=meta(blueprint.cluster_class).get("name")))
        name = machine_deployment_name(cluster, str(entry.get("name", "")))
        # The worker's metadata goes to the MachineDeployment and its Machines (upstream merges the
        # class's template metadata under it; this world's classes have none).
        topology_meta = entry.get("metadata") or {}
        extra_labels = {str(k): str(v) for k, v in (topology_meta.get("labels") or {}).items()}
        extra_annotations = {str(k): str(v) for k, v in (topology_meta.get("annotations") or {}).items()}
        labels = {**extra_labels, **_labels(cluster), DEPLOYMENT_TOPOLOGY_NAME_LABEL: str(entry.get("name", ""))}
        selector = {CLUSTER_NAME_LABEL: meta(cluster)["name"], DEPLOYMENT_TOPOLOGY_NAME_LABEL: str(entry.get("name"))}
        template = worker_class.get("template") or {}
        bootstrap, infra = _ref(template, ("bootstrap", "ref")), _ref(template, ("infrastructure", "ref"))
        namespace = meta(cluster)["namespace"]
        out.append((str(entry.get("name", "")), {
            "apiVersion": CLUSTER_API_VERSION, "kind": MACHINE_DEPLOYMENT_KIND,
            "metadata": {"name": name, "namespace": namespace, "labels": labels,
                         **({"annotations": extra_annotations} if extra_annotations else {}),
                         "ownerReferences": [owner_ref(cluster)]},
            "spec": {"clusterName": meta(cluster)["name"],
                     "replicas": entry.get("replicas", DEFAULT_WORKER_REPLICAS),
                     "selector": {"matchLabels": selector},
                     "template": {"metadata": {"labels": {**extra_labels, **selector,
                                                          MACHINE_DEPLOYMENT_NAME_LABEL: name},
                                               **({"annotations": extra_annotations} if extra_annotations else {})},
                                  "spec": {"clusterName": meta(cluster)["name"],
                                           "bootstrap": {"configRef": {**bootstrap,
                                                                       "namespace": bootstrap.get("namespace")
                                                                       or namespace}},
                                           "infrastructureRef": {**infra,
                                                                 "namespace": infra.get("namespace") or namespace}}}},
        }))
    return out
