"""Revisions of a pod template: the template hash (``pod-template-hash``, ControllerRevision names),
template equality as the workload controllers judge it, and revision numbers.

The hash follows upstream's recipe in spirit (``controller.ComputeHash``): a 32-bit FNV-1a over the
template (here its canonical JSON) and the collision count, written as its decimal digits mapped onto
the alphabet of ``rand.SafeEncodeString`` (no vowels, no confusable digits), so names look like
``web-5d8f7c9b4``. The values differ from a real cluster's (Go's struct dump is not reproducible), which
nothing depends on.
"""

from __future__ import annotations

import json
from typing import Any

from harness.apiserver.defaults import default_pod_spec
from harness.kube.names.meta import RANDOM_ALPHABET
from harness.kube.objects import clone

FNV_OFFSET = 2166136261
FNV_PRIME = 16777619


def _fnv32a(data: bytes) -> int:
    value = FNV_OFFSET
    for byte in data:
        value ^= byte
        value = (value * FNV_PRIME) & 0xFFFFFFFF
    return value


def normalized(template: dict[str, Any]) -> dict[str, Any]:
    """A pod template with the API server's pod defaults applied, so a template written by a client
    compares equal to the same template stored (defaulted) in a ReplicaSet or ControllerRevision."""
    out = clone(template or {})
    out.setdefault("metadata", {})
    # Go clients send an empty template timestamp as ``creationTimestamp: null`` (kubectl rollout undo
    # does); a real API server decodes it to nothing, so it is not a difference.
    out["metadata"] = {k: v for k, v in out["metadata"].items() if v is not None}
    for key in ("labels", "annotations"):
        if key in out["metadata"] and not out["metadata"][key]:
            del out["metadata"][key]
    pod_spec = out.setdefault("spec", {})
    if isinstance(pod_spec, dict):
        default_pod_spec(pod_spec)
    return out


def template_hash(template: dict[str, Any], collision_count: int | None = None) -> str:
    """The hash of a pod template (and the collision count, when set) as a short safe string."""
    text = json.dumps(normalized(template), sort_keys=True, separators=(",", ":"))
    if collision_count:
        text += f"#{collision_count}"
    digits = str(_fnv32a(text.encode()))
    return "".join(RANDOM_ALPHABET[ord(c) % len(RANDOM_ALPHABET)] for c in digits)


def templates_equal(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two pod templates are the same once defaulted."""
    return normalized(a) == normalized(b)


def revision_of(annotations: dict[str, str], key: str) -> int:
    """An int revision annotation (0 when absent or unreadable)."""
    try:
        return int(annotations.get(key, "0"))
    except ValueError:
        return 0
