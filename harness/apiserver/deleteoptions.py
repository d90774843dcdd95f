"""The JSON types of ``DeleteOptions``, checked before a delete (or an eviction) changes anything.

The apiserver decodes DeleteOptions into a Go struct, so a field of the wrong JSON type is refused
before any write: ``json: cannot unmarshal string into Go struct field
DeleteOptions.gracePeriodSeconds of type int64``. Inside an Eviction the field path starts with
``deleteOptions.`` and the message names the Eviction (the create handler's decode error).
"""

from __future__ import annotations

from typing import Any

from harness.apiserver.decoding import json_kind
from harness.kube import errors

# field -> (Go type as the decoder names it, accepted Python types); null is always accepted
# (every field is a pointer or a slice).
_FIELDS: dict[str, tuple[str, tuple[type, ...]]] = {
    "kind": ("string", (str,)),
    "apiVersion": ("string", (str,)),
    "gracePeriodSeconds": ("int64", (int,)),
    "preconditions": ("v1.Preconditions", (dict,)),
    "orphanDependents": ("bool", (bool,)),
    "propagationPolicy": ("v1.DeletionPropagation", (str,)),
    "dryRun": ("[]string", (list,)),
    "ignoreStoreReadErrorWithClusterBreakingPotential": ("bool", (bool,)),
}
_PRECONDITIONS = {"uid": "types.UID", "resourceVersion": "string"}
INT64_MAX = 2**63 - 1


def _refuse(owner: str, value: Any, struct: str, path: str, go_type: str) -> errors.StatusError:
    shown = json_kind(value)
    if shown == "number" and go_type == "int64":
        shown = f"number {value}"  # a number that does not fit an integer is named with its literal
    message = f"json: cannot unmarshal {shown} into Go struct field {struct}.{path} of type {go_type}"
    return errors.bad_request(f'{owner} in version "v1" cannot be handled as a {owner}: {message}')


def check(options: Any, *, owner: str = "DeleteOptions", prefix: str = "") -> None:
    """400 ``BadRequest`` unless ``options`` has DeleteOptions' JSON shape (None is no options).

    ``owner``: the kind whose decode failed (``Eviction`` for its ``deleteOptions``); ``prefix``:
    the path of the options inside it (``deleteOptions.``)."""
    struct = "DeleteOptions"
    if options is None:
        return
    if not isinstance(options, dict):
        if prefix:
            raise _refuse(owner, options, owner, prefix.rstrip("."), "v1.DeleteOptions")
        raise errors.bad_request(
            f'{owner} in version "v1" cannot be handled as a {owner}: json: cannot unmarshal '
            f"{json_kind(options)} into Go value of type v1.DeleteOptions"
        )
    for field, value in options.items():
        if value is None or field not in _FIELDS:
            continue
        go_type, accepted = _FIELDS[field]
        wrong = not isinstance(value, accepted) or (bool not in accepted and isinstance(value, bool))
        if field == "gracePeriodSeconds" and not wrong and not -INT64_MAX - 1 <= value <= INT64_MAX:
            wrong = True
        if wrong:
            raise _refuse(owner, value, struct, prefix + field, go_type)
        if field == "dryRun":
            for item in value:
                if not isinstance(item, str):
                    raise _refuse(owner, item, struct, f"{prefix}dryRun", "string")
        if field == "preconditions":
            for key, go in _PRECONDITIONS.items():
                item = value.get(key)
                if item is not None and not isinstance(item, str):
                    raise _refuse(owner, item, "Preconditions", f"{prefix}preconditions.{key}", go)
