"""Reading a profile's manifests from the management cluster and putting them into, or taking them out
of, a workload cluster.

Manifests: every value of each referenced ConfigMap's ``data`` (a Secret's ``data``, base64) is YAML, one
or more documents separated by ``---`` lines, each an object. The whole set -- every reference, every key,
every document -- is read and parsed before anything is applied, so a missing reference
(:class:`ReferenceNotFound`) or a manifest that does not parse (:class:`DeployError`, naming the document
as upstream's ``failed to get policy from Data ...``) deploys nothing of the profile and is reported.
Upstream parses all the keys of one ConfigMap before deploying it too, but goes ConfigMap by ConfigMap;
here a profile is all or nothing.

Deployed objects carry the reference labels and the owner annotations of libsveltos
(:data:`~controllers.addons.api.OWNERSHIP_LABELS`, :data:`~controllers.addons.api.OWNERSHIP_ANNOTATIONS`);
removal deletes only objects whose owner annotations name the profile (``LeavePolicies`` on stop-matching
strips the marks instead). What a profile deployed is found again from the kinds recorded in
``featureSummaries[].deployedGroupVersionKind`` (``Kind.version.group``), as upstream lists them.
"""

from __future__ import annotations

import base64
import binascii
import copy
import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

import yaml

from controllers.addons.api import (
    APPLY_FAILED,
    CLUSTER_PROFILE_KIND,
    DEFAULT_TIER,
    MANIFEST_INVALID,
    MANIFEST_NOT_OBJECT,
    OWNER_KIND_ANNOTATION,
    OWNER_NAME_ANNOTATION,
    OWNER_TIER_ANNOTATION,
    OWNERSHIP_ANNOTATIONS,
    OWNERSHIP_LABELS,
    POLICY_HASH_ANNOTATION,
    REFERENCE_KIND_INVALID,
    REFERENCE_KIND_LABEL,
    REFERENCE_NAME_LABEL,
    REFERENCE_NAMESPACE_LABEL,
    REFERENCE_NOT_FOUND,
    REMOVE_FAILED,
)
from harness.client import ApiError, Client, find_in
from harness.kube.names.core import DEFAULT_NAMESPACE

# Documents of one manifest are separated by a line holding only "---" (upstream's CustomSplit).
DOCUMENT_SEPARATOR = re.compile(r"^---[ \t]*$", re.MULTILINE)


class DeployError(Exception):
    """The profile's manifests cannot be read or parsed: nothing was deployed."""


class ReferenceNotFound(DeployError):
    """A referenced ConfigMap or Secret does not exist (upstream: non-retriable until it appears)."""


class ClusterUnreachable(Exception):
    """The workload cluster's API did not answer."""


@dataclass(frozen=True)
class Manifest:
    """One object to deploy and the ConfigMap/Secret it came from."""

    obj: dict[str, Any]
    ref_kind: str
    ref_name: str
    ref_namespace: str


def gvk_string(obj: dict[str, Any]) -> str:
    """``Kind.version.group`` (``Kind.v1.`` for the core group), as upstream records deployed kinds."""
    group, _, version = str(obj.get("apiVersion", "")).rpartition("/")
    return f"{obj.get('kind', '')}.{version}.{group}"


def api_version_of(gvk: str) -> tuple[str, str]:
    """``(apiVersion, kind)`` of a ``Kind.version.group`` string."""
    kind, _, rest = gvk.partition(".")
    version, _, group = rest.partition(".")
    return (f"{group}/{version}" if group else version), kind


def read_manifests(client: Client, policy_refs: list[dict[str, Any]], default_namespace: str) -> list[Manifest]:
    """Every object of the referenced ConfigMaps/Secrets, in reference and key order; DeployError."""
    out: list[Manifest] = []
    for ref in policy_refs:
        kind, name = str(ref.get("kind", "")), str(ref.get("name", ""))
        namespace = str(ref.get("namespace") or default_namespace)
        if kind not in ("ConfigMap", "Secret"):
            raise DeployError(REFERENCE_KIND_INVALID.format(kind=kind))
        source = find_in(client, "v1", kind, name, namespace)
        if source is None:
            raise ReferenceNotFound(REFERENCE_NOT_FOUND.format(kind=kind, namespace=namespace, name=name))
        for key in sorted(source.get("data") or {}):
            text = (source.get("data") or {})[key]
            if kind == "Secret":
                try:
                    text = base64.b64decode(text, validate=True).decode()
                except (binascii.Error, UnicodeDecodeError, ValueError) as err:
                    raise DeployError(MANIFEST_INVALID.format(section=str(text), error=err)) from None
            for section in DOCUMENT_SEPARATOR.split(str(text)):
                document = _parse(section)
                if document is not None:
                    out.append(Manifest(document, kind, name, namespace))
    return out


def _parse(section: str) -> dict[str, Any] | None:
    """One document of a manifest: the object, None for an empty document; DeployError."""
    try:
        document = yaml.safe_load(section)
    except yaml.YAMLError as err:
        raise DeployError(MANIFEST_INVALID.format(section=section.strip(), error=str(err).replace("\n", " "))) \
            from None
    if document is None:
        return None
    if not isinstance(document, dict) or not document.get("apiVersion") or not document.get("kind") \
            or not isinstance(document.get("metadata"), dict) or not document["metadata"].get("name"):
        raise DeployError(MANIFEST_INVALID.format(section=section.strip(), error=MANIFEST_NOT_OBJECT))
    return document


def content_hash(manifests: list[Manifest]) -> str:
    """A hash of what would be deployed (a changed manifest changes it)."""
    data = json.dumps([[m.ref_kind, m.ref_namespace, m.ref_name, m.obj] for m in manifests], sort_keys=True)
    return hashlib.sha256(data.encode()).hexdigest()


def probe(workload: Client, cluster: str) -> None:
    """ClusterUnreachable unless the workload cluster's API answers."""
    try:
        workload.discover()
    except (ApiError, ConnectionError, OSError) as err:
        raise ClusterUnreachable(str(err)) from None


def _namespaced_kinds(workload: Client) -> dict[tuple[str, str], bool]:
    return {(r["apiVersion"], r["kind"]): bool(r.get("namespaced")) for r in workload.discover()}


def deploy(workload: Client, manifests: list[Manifest], profile: str, digest: str) -> None:
    """Create or update every manifest's object in the workload cluster, marked as the profile's;
    ClusterUnreachable when the cluster does not answer, DeployError when an object is refused."""
    try:
        scopes = _namespaced_kinds(workload)
    except (ApiError, ConnectionError, OSError) as err:
        raise ClusterUnreachable(str(err)) from None
    for manifest in manifests:
        obj = copy.deepcopy(manifest.obj)
        meta = obj.setdefault("metadata", {})
        if scopes.get((obj["apiVersion"], obj["kind"]), True) and not meta.get("namespace"):
            meta["namespace"] = DEFAULT_NAMESPACE
        meta.setdefault("labels", {}).update({REFERENCE_KIND_LABEL: manifest.ref_kind,
                                              REFERENCE_NAME_LABEL: manifest.ref_name,
                                              REFERENCE_NAMESPACE_LABEL: manifest.ref_namespace})
        meta.setdefault("annotations", {}).update({OWNER_KIND_ANNOTATION: CLUSTER_PROFILE_KIND,
                                                   OWNER_NAME_ANNOTATION: profile, OWNER_TIER_ANNOTATION: DEFAULT_TIER,
                                                   POLICY_HASH_ANNOTATION: digest})
        try:
            current = find_in(workload, obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace"))
            if current is None:
                workload.create(obj)
            else:
                meta["resourceVersion"] = current["metadata"].get("resourceVersion")
                workload.update(obj)
        except (ConnectionError, OSError) as err:
            raise ClusterUnreachable(str(err)) from None
        except ApiError as err:
            raise DeployError(APPLY_FAILED.format(kind=obj["kind"], name=meta["name"], error=err)) from None


def owned_objects(workload: Client, gvks: list[str], profile: str) -> list[dict[str, Any]]:
    """The objects of the recorded kinds whose owner annotations name ``profile``."""
    out = []
    for gvk in gvks:
        api_version, kind = api_version_of(gvk)
        try:
            items = workload.list(api_version, kind)["items"]
        except (ConnectionError, OSError) as err:
            raise ClusterUnreachable(str(err)) from None
        except ApiError as err:
            if err.code == 404:
                continue  # the kind is not served (any more): nothing of it to remove
            raise ClusterUnreachable(str(err)) from None
        for item in items:
            annotations = (item.get("metadata") or {}).get("annotations") or {}
            if annotations.get(OWNER_KIND_ANNOTATION) == CLUSTER_PROFILE_KIND \
                    and annotations.get(OWNER_NAME_ANNOTATION) == profile:
                out.append({**item, "apiVersion": api_version, "kind": kind})
    return out


def remove(workload: Client, obj: dict[str, Any]) -> None:
    """Delete one deployed object (already gone is fine)."""
    meta = obj["metadata"]
    try:
        workload.delete(obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace"))
    except (ConnectionError, OSError) as err:
        raise ClusterUnreachable(str(err)) from None
    except ApiError as err:
        if err.code != 404:
            raise DeployError(REMOVE_FAILED.format(kind=obj["kind"], name=meta["name"], error=err)) from None


def leave(workload: Client, obj: dict[str, Any]) -> None:
    """Keep one deployed object but strip the marks that make it the profile's (LeavePolicies)."""
    meta = obj["metadata"]
    patch = {"metadata": {"labels": {k: None for k in OWNERSHIP_LABELS if k in (meta.get("labels") or {})},
                          "annotations": {k: None for k in OWNERSHIP_ANNOTATIONS
                                          if k in (meta.get("annotations") or {})}}}
    try:
        workload.patch(obj["apiVersion"], obj["kind"], meta["name"], patch, namespace=meta.get("namespace"))
    except (ConnectionError, OSError) as err:
        raise ClusterUnreachable(str(err)) from None
    except ApiError as err:
        if err.code != 404:
            raise DeployError(REMOVE_FAILED.format(kind=obj["kind"], name=meta["name"], error=err)) from None
