"""Cloning a Machine's infrastructure machine and bootstrap config from their templates
(``external.CreateFromTemplate`` of Cluster API v1.10): ``spec.template`` of the template object
becomes an object of the template's kind without the ``Template`` suffix, under the given name, with
the template's labels and annotations plus the given ones, the ``cluster.x-k8s.io/cluster-name``
label, the ``cluster.x-k8s.io/cloned-from-name`` and ``cluster.x-k8s.io/cloned-from-groupkind``
annotations, and the given owner reference.
"""

from __future__ import annotations

from typing import Any

from controllers.machine.api import group_of
from controllers.machine.errors import ReconcileError
from harness.client import Client
from harness.kube.names.capi import CLONED_FROM_GROUP_KIND_ANNOTATION, CLONED_FROM_NAME_ANNOTATION, CLUSTER_NAME_LABEL

TEMPLATE_SUFFIX = "Template"
MISSING_TEMPLATE = "missing Spec.Template on {gvk} {name}"


def group_kind(ref: dict[str, Any]) -> str:
    """``schema.GroupKind.String()`` of a reference: ``Kind.group`` (``Kind`` for the core group)."""
    group = group_of(str(ref.get("apiVersion", "")))
    return f"{ref.get('kind', '')}.{group}" if group else str(ref.get("kind", ""))


def clone_from_template(client: Client, template_ref: dict[str, Any], *, namespace: str, name: str, cluster: str,
                        labels: dict[str, str], annotations: dict[str, str],
                        owner: dict[str, Any]) -> dict[str, str]:
    """Create the object cloned from the template ``template_ref`` names; a reference to it. Raises
    ApiError (the template is missing, the create is refused) or :class:`ReconcileError`."""
    api_version, kind = str(template_ref.get("apiVersion", "")), str(template_ref.get("kind", ""))
    template = client.get(api_version, kind, str(template_ref.get("name", "")),
                          template_ref.get("namespace") or namespace)
    source = (template.get("spec") or {}).get("template")
    if not isinstance(source, dict):
        raise ReconcileError(MISSING_TEMPLATE.format(gvk=f"{api_version}, Kind={kind}",
                                                     name=f'"{template_ref.get("name", "")}"'))
    source_meta = source.get("metadata") or {}
    obj_labels = {**(source_meta.get("labels") or {}), **labels, CLUSTER_NAME_LABEL: cluster}
    obj_annotations = {**(source_meta.get("annotations") or {}), **annotations,
                       CLONED_FROM_NAME_ANNOTATION: str(template_ref.get("name", "")),
                       CLONED_FROM_GROUP_KIND_ANNOTATION: group_kind(template_ref)}
    clone_kind = kind.removesuffix(TEMPLATE_SUFFIX)
    client.create({
        "apiVersion": api_version, "kind": clone_kind,
        "metadata": {"name": name, "namespace": namespace, "labels": obj_labels, "annotations": obj_annotations,
                     "ownerReferences": [owner]},
        "spec": dict(source.get("spec") or {}),
    })
    return {"apiVersion": api_version, "kind": clone_kind, "name": name, "namespace": namespace}
