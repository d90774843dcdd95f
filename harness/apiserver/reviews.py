"""The create-only review resources kubectl and controllers ask before they act.

``SelfSubjectAccessReview``, ``SubjectAccessReview``, ``LocalSubjectAccessReview`` and
``SelfSubjectRulesReview`` (``authorization.k8s.io/v1``; ``kubectl auth can-i``) and
``SelfSubjectReview`` (``authentication.k8s.io/v1``; ``kubectl auth whoami``). Nothing is stored:
the answer is the request with its ``status`` filled in, 201. The fake authorises every
authenticated user for everything (as ``system:masters`` is on a kind cluster), so every access
review is allowed and the rules review lists ``*``.
"""

from __future__ import annotations

from typing import Any

from harness.apiserver import builtins, decoding
from harness.apiserver.resources import ResourceType
from harness.kube import errors

# Groups every user of the fake belongs to (cluster-admin through system:masters, as kind's admin).
USER_GROUPS = ["system:masters", "system:authenticated"]
ALL_RULES = {
    "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
    "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
    "incomplete": False,
}


REVIEWS: tuple[ResourceType, ...] = (
    builtins.SELF_SUBJECT_ACCESS_REVIEW, builtins.SUBJECT_ACCESS_REVIEW, builtins.LOCAL_SUBJECT_ACCESS_REVIEW,
    builtins.SELF_SUBJECT_RULES_REVIEW, builtins.SELF_SUBJECT_REVIEW,
)


def is_review(rt: ResourceType) -> bool:
    """Whether ``rt`` is one of the create-only review resources."""
    return rt in REVIEWS


def answer(rt: ResourceType, namespace: str | None, body: Any, user: str) -> dict[str, Any]:
    """The review with its status: decoded as its type (wrong types are the usual 400)."""
    if not isinstance(body, dict):
        raise errors.bad_request("the body of the request was not a JSON object")
    decoding.check_type_meta(rt.kind, body)
    review = decoding.decode(rt, body)
    out: dict[str, Any] = {"kind": rt.kind, "apiVersion": rt.api_version,
                           "metadata": {**(review.get("metadata") or {}), "creationTimestamp": None}}
    if "spec" in review or rt is not builtins.SELF_SUBJECT_REVIEW:
        out["spec"] = review.get("spec") or {}
    if rt is builtins.LOCAL_SUBJECT_ACCESS_REVIEW:
        attributes = out["spec"].get("resourceAttributes") or {}
        if attributes.get("namespace") not in (None, "", namespace):
            raise errors.bad_request(
                f"spec.resourceAttributes.namespace must match namespace: {namespace}"
            )
    if rt is builtins.SELF_SUBJECT_REVIEW:
        out["status"] = {"userInfo": {"username": user, "groups": list(USER_GROUPS)}}
    elif rt is builtins.SELF_SUBJECT_RULES_REVIEW:
        out["status"] = {key: value if not isinstance(value, list) else [dict(v) for v in value]
                         for key, value in ALL_RULES.items()}
    else:
        out["status"] = {"allowed": True}
    return out
