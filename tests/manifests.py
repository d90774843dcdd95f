"""Objects the HTTP and kubectl tests create: a test's own custom resource definitions and pod-template
workloads, built once here so each test states only what is particular to it (its schema, replicas, image)."""

from __future__ import annotations

from typing import Any

import yaml

EXAMPLE_GROUP = "example.com"


PRESERVE_UNKNOWN_FIELDS: dict[str, Any] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}


def crd(
    kind: str,
    *,
    group: str = EXAMPLE_GROUP,
    spec_properties: dict[str, Any] | None = None,
    spec_description: str | None = None,
    schema: dict[str, Any] | None = None,
    short_names: list[str] | None = None,
    printer_columns: list[dict[str, Any]] | None = None,
    status_subresource: bool = False,
) -> dict[str, Any]:
    """A namespaced CRD serving ``<group>/v1`` ``kind`` (plural: lower-case kind + ``s``). Its schema is
    ``schema`` when given, else an object whose ``spec`` has ``spec_properties``, else one that keeps every
    field (``x-kubernetes-preserve-unknown-fields``)."""
    singular = kind.lower()
    names: dict[str, Any] = {"kind": kind, "plural": f"{singular}s", "singular": singular, "listKind": f"{kind}List"}
    if short_names:
        names["shortNames"] = list(short_names)
    if schema is None and spec_properties is not None:
        spec_schema: dict[str, Any] = {"type": "object"}
        if spec_description is not None:
            spec_schema["description"] = spec_description
        spec_schema["properties"] = spec_properties
        schema = {"type": "object", "properties": {"spec": spec_schema}}
    version: dict[str, Any] = {"name": "v1", "served": True, "storage": True}
    if status_subresource:
        version["subresources"] = {"status": {}}
    if printer_columns:
        version["additionalPrinterColumns"] = list(printer_columns)
    version["schema"] = {"openAPIV3Schema": schema if schema is not None else dict(PRESERVE_UNKNOWN_FIELDS)}
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{singular}s.{group}"},
        "spec": {"group": group, "names": names, "scope": "Namespaced", "versions": [version]},
    }


def example_crd(kind: str, spec_properties: dict[str, Any], **options: Any) -> str:
    """:func:`crd` in ``example.com`` with the given ``spec`` properties, as YAML for ``kubectl apply``."""
    return manifests(crd(kind, spec_properties=spec_properties, **options))


def node(name: str) -> dict[str, Any]:
    """A bare Node object: where the served world's Pods may land."""
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}


def demo_pod(node_name: str | None = None) -> str:
    """The Pod ``default/p1`` (label ``app: demo``, one busybox container), bound to ``node_name`` when
    given, as YAML for ``kubectl apply``."""
    spec: dict[str, Any] = {"nodeName": node_name} if node_name else {}
    spec["containers"] = [{"name": "c", "image": "busybox"}]
    return manifests({"apiVersion": "v1", "kind": "Pod",
                      "metadata": {"name": "p1", "namespace": "default", "labels": {"app": "demo"}}, "spec": spec})


def workload(
    kind: str,
    name: str,
    containers: list[dict[str, Any]],
    *,
    replicas: int | None = None,
    annotations: dict[str, str] | None = None,
    spec: dict[str, Any] | None = None,
    pod_spec: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """An ``apps/v1`` workload (Deployment, ReplicaSet, StatefulSet, DaemonSet) in ``default`` selecting its
    Pods by ``app: <name>``; ``spec`` and ``pod_spec`` add fields to the workload's and the Pod template's spec."""
    metadata: dict[str, Any] = {"name": name, "namespace": "default"}
    if annotations:
        metadata["annotations"] = dict(annotations)
    body: dict[str, Any] = {}
    if replicas is not None:
        body["replicas"] = replicas
    body.update(spec or {})
    body["selector"] = {"matchLabels": {"app": name}}
    body["template"] = {"metadata": {"labels": {"app": name}},
                        "spec": {**(pod_spec or {}), "containers": containers}}
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": metadata, "spec": body}


def manifests(*objects: dict[str, Any]) -> str:
    """Objects as one multi-document YAML stream, in order, for ``kubectl apply -f -``."""
    return yaml.safe_dump_all(objects, sort_keys=False)
