"""The OpenAPI schemas of Kubernetes 1.32's built-in types, from a maintained source.

The definitions come from the ``kubernetes-validate`` package, which ships the 1.32 OpenAPI
definitions of kube-apiserver as standalone JSON Schema (``v1.32.0-local/_definitions.json``):
every type with its descriptions, Go formats (``int32``, ``int64``, ``date-time``, ``byte``), and
the ``x-kubernetes-*`` extensions (group-version-kind, list types, patch strategies). The
``kubernetes`` client's model classes were the alternative; they describe the newest release
(37.x is 1.37) rather than 1.32 and lose the integer widths the Go decoder checks.

The file (1.3 MB) is read on first use and cached, so importing the server stays fast. Only the
data file is read: the package's Python module (and its ``jsonschema`` dependency) is not imported.
"""

from __future__ import annotations

import functools
import importlib.util
import json
from pathlib import Path
from typing import Any

from harness.kube.names.core import KUBERNETES_VERSION

_DEFINITIONS_FILE = Path("kubernetes-json-schema") / f"{KUBERNETES_VERSION}-local" / "_definitions.json"
REF_PREFIX = "#/$defs/"
GVK_EXTENSION = "x-kubernetes-group-version-kind"

# Definitions whose Go type has its own JSON (un)marshalling; the decoder treats them by name.
INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
TIME = "io.k8s.apimachinery.pkg.apis.meta.v1.Time"
MICRO_TIME = "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime"
OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


class SchemasUnavailable(RuntimeError):
    """The ``kubernetes-validate`` data file is not installed."""


def _definitions_path() -> Path:
    spec = importlib.util.find_spec("kubernetes_validate")
    if spec is None or not spec.submodule_search_locations:
        raise SchemasUnavailable("the kubernetes-validate package (Kubernetes 1.32 schemas) is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / _DEFINITIONS_FILE


# Seed 004's proposed `spec.lifecycleHooks` on apps/v1 Deployment, StatefulSet and DaemonSet (the
# seed's Go types, as JSON): the world serves the API the seed proposes, so these fields are part of
# the schema (typed, not pruned, and shown by `kubectl explain`).
_APPS = "io.k8s.api.apps.v1."
_PROPOSED_DEFINITIONS: dict[str, dict[str, Any]] = {
    f"{_APPS}LifecycleHook": {
        "description": "A lifecycle hook: a Job run when a rollout reaches a progress point (proposal, seed 004).",
        "type": "object",
        "required": ["name", "trigger", "jobSpec"],
        "properties": {
            "name": {"description": "Name of the hook.", "type": "string"},
            "trigger": {"$ref": f"{REF_PREFIX}{_APPS}HookTrigger", "description": "Triggering config."},
            "failurePolicy": {"description": "Abort (default) or Ignore.", "type": "string"},
            "retainPolicy": {"description": "Always (default), OnFailure or Never.", "type": "string"},
            "jobSpec": {"$ref": f"{REF_PREFIX}io.k8s.api.batch.v1.JobSpec", "description": "The hook's Job."},
        },
    },
    f"{_APPS}HookTrigger": {
        "description": "When a lifecycle hook runs.",
        "type": "object",
        "properties": {
            "type": {"description": "ProgressAvailable (default).", "type": "string"},
            "progressAvailableParams": {"$ref": f"{REF_PREFIX}{_APPS}ProgressAvailableParams"},
        },
    },
    f"{_APPS}ProgressAvailableParams": {
        "description": "The progress point of a ProgressAvailable trigger.",
        "type": "object",
        "properties": {
            "progressPoint": {"$ref": f"{REF_PREFIX}{INT_OR_STRING}",
                              "description": "New available pods, as a number or a percentage of replicas."},
        },
    },
}
_LIFECYCLE_HOOKS_PROPERTY = {
    "description": "Lifecycle hooks of the rollout (proposal, seed 004).",
    "type": "array",
    "items": {"$ref": f"{REF_PREFIX}{_APPS}LifecycleHook"},
}
_WITH_LIFECYCLE_HOOKS = (f"{_APPS}DeploymentSpec", f"{_APPS}StatefulSetSpec", f"{_APPS}DaemonSetSpec")


@functools.cache
def definitions() -> dict[str, dict[str, Any]]:
    """Every 1.32 definition by its OpenAPI name (``io.k8s.api.core.v1.Pod``), with the fields
    seed 004 proposes; read once."""
    with _definitions_path().open("rb") as f:
        defs = dict(json.load(f)["$defs"])
    defs.update(_PROPOSED_DEFINITIONS)
    for name in _WITH_LIFECYCLE_HOOKS:
        spec = dict(defs[name])
        spec["properties"] = {**spec["properties"], "lifecycleHooks": _LIFECYCLE_HOOKS_PROPERTY}
        defs[name] = spec
    return defs


@functools.cache
def _by_gvk() -> dict[tuple[str, str], str]:
    out: dict[tuple[str, str], str] = {}
    for name, schema in definitions().items():
        gvks = schema.get(GVK_EXTENSION) or []
        if len(gvks) != 1:  # DeleteOptions, WatchEvent, ... are shared by every group
            continue
        gvk = gvks[0]
        api_version = f"{gvk['group']}/{gvk['version']}" if gvk.get("group") else gvk["version"]
        out[(api_version, gvk["kind"])] = name
    return out


def definition_name(api_version: str, kind: str) -> str | None:
    """The definition of a built-in kind (``("apps/v1", "Deployment")`` → its OpenAPI name)."""
    return _by_gvk().get((api_version, kind))


def has_kind(api_version: str, kind: str) -> bool:
    """Whether Kubernetes 1.32 defines ``kind`` in ``api_version``."""
    return definition_name(api_version, kind) is not None


def ref_name(schema: dict[str, Any]) -> str | None:
    """The definition a ``$ref`` node points at, or None."""
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith(REF_PREFIX):
        return ref[len(REF_PREFIX):]
    return None


def go_type_name(definition: str) -> str:
    """How Go prints the type of a definition: ``v1.PodSpec``, ``resource.Quantity``."""
    parts = definition.split(".")
    return f"{parts[-2]}.{parts[-1]}"


def struct_name(definition: str) -> str:
    """The bare Go struct name of a definition (``PodSpec``)."""
    return definition.rsplit(".", 1)[-1]
