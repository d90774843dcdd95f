"""Manifests the kubectl tests apply: a test's own custom resource definition and pod-template workloads,
built once here so each test states only what is particular to it (its schema, replicas, image)."""

from __future__ import annotations

from typing import Any

import yaml

EXAMPLE_GROUP = "example.com"


def example_crd(
    kind: str,
    spec_properties: dict[str, Any],
    *,
    spec_description: str | None = None,
    short_names: list[str] | None = None,
    printer_columns: list[dict[str, Any]] | None = None,
) -> str:
    """A namespaced ``example.com/v1`` CRD for ``kind`` (plural: lower-case kind + ``s``) whose ``spec``
    has the given structural schema properties, as YAML for ``kubectl apply``."""
    singular = kind.lower()
    names: dict[str, Any] = {"kind": kind, "plural": f"{singular}s", "singular": singular, "listKind": f"{kind}List"}
    if short_names:
        names["shortNames"] = list(short_names)
    spec_schema: dict[str, Any] = {"type": "object"}
    if spec_description is not None:
        spec_schema["description"] = spec_description
    spec_schema["properties"] = spec_properties
    version: dict[str, Any] = {"name": "v1", "served": True, "storage": True}
    if printer_columns:
        version["additionalPrinterColumns"] = list(printer_columns)
    version["schema"] = {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec_schema}}}
    return manifests({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{singular}s.{EXAMPLE_GROUP}"},
        "spec": {"group": EXAMPLE_GROUP, "names": names, "scope": "Namespaced", "versions": [version]},
    })


def node(name: str) -> dict[str, Any]:
    """A bare Node object: where the served world's Pods may land."""
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}


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
