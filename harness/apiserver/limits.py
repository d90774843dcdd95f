"""Size limits of stored objects, as kube-apiserver 1.32 and its etcd enforce them.

- ConfigMap and Secret data: at most 1 MiB (``MaxSecretSize``), a 422 from validation. A
  ConfigMap counts keys and values of ``data`` and ``binaryData``; a Secret counts the decoded
  values of ``data`` (and ``stringData``, which the apiserver folds into ``data``).
- Every stored object: etcd refuses a request over ``--max-request-bytes`` (1.5 MiB by default)
  and the apiserver relays the refusal unchanged: **500**, no reason, ``etcdserver: request is
  too large``, the one 500 upstream gives a client. Create, update and non-apply patch first try
  once more without ``managedFields``. The size here is the compact JSON encoding of the object
  (etcd holds protobuf for built-ins, a little smaller: the fake refuses slightly earlier).
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

import orjson

from harness.kube import errors

MAX_DATA_BYTES = 1024 * 1024
MAX_OBJECT_BYTES = 1536 * 1024
ETCD_TOO_LARGE_MESSAGE = "etcdserver: request is too large"
# What orjson's encoding may be shorter than the exact one (json.dumps) that decides: a few bytes
# per float written differently (``1e16`` for ``1e+16``, ``null`` for ``Infinity``). An object
# whose orjson encoding is this far under the limit fits without the exact, ten times slower count.
FAST_SIZE_SLACK = 64 * 1024
# field.NewPath("") prints as "[]": the error is about the whole ConfigMap.
CONFIGMAP_DATA_PATH = "[]"
SECRET_DATA_PATH = "data"


def _text_bytes(value: Any) -> int:
    return len(value.encode("utf-8", errors="surrogatepass")) if isinstance(value, str) else 0


def _decoded_bytes(value: Any) -> int:
    if not isinstance(value, str):
        return 0
    try:
        return len(base64.b64decode(value, validate=True))
    except (binascii.Error, ValueError):
        return len(value)  # not base64: validation says so elsewhere; count what was sent


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def data_size_errors(api_version: str, kind: str, obj: dict[str, Any]) -> list[errors.FieldError]:
    """The 422 field error of a ConfigMap or Secret whose data exceeds :data:`MAX_DATA_BYTES`."""
    if (api_version, kind) == ("v1", "ConfigMap"):
        total = sum(_text_bytes(k) + _text_bytes(v) for k, v in _mapping(obj.get("data")).items())
        total += sum(_text_bytes(k) + _decoded_bytes(v) for k, v in _mapping(obj.get("binaryData")).items())
        path = CONFIGMAP_DATA_PATH
    elif (api_version, kind) == ("v1", "Secret"):
        total = sum(_decoded_bytes(v) for v in _mapping(obj.get("data")).values())
        total += sum(_text_bytes(v) for v in _mapping(obj.get("stringData")).values())
        path = SECRET_DATA_PATH
    else:
        return []
    return [errors.too_long(path, MAX_DATA_BYTES)] if total > MAX_DATA_BYTES else []


def encoded_size(obj: dict[str, Any]) -> int:
    """The object's size as stored: its compact JSON encoding, in bytes."""
    return len(json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8", errors="surrogatepass"))


def too_large() -> errors.StatusError:
    """etcd's refusal as the apiserver relays it: 500 without a reason."""
    return errors.StatusError(errors.status(500, "", ETCD_TOO_LARGE_MESSAGE))


def _surely_fits(obj: dict[str, Any]) -> bool:
    """Whether ``obj`` is far enough under the limit that its exact size need not be counted.

    Every write is checked, and the exact count (Python's JSON encoder) was about a twelfth of the
    CPU of a write-heavy run (benchmarks/README.md); orjson encodes in C. Anything it cannot encode
    as the exact count does (integers past 64 bits, lone surrogates, keys that are not strings) is
    left to the exact count."""
    try:
        return len(orjson.dumps(obj)) <= MAX_OBJECT_BYTES - FAST_SIZE_SLACK
    except (TypeError, orjson.JSONEncodeError):
        return False


def fit(obj: dict[str, Any], *, retry_without_managed_fields: bool = True) -> None:
    """Check ``obj`` against etcd's request limit before it is stored; on a first refusal drop
    ``metadata.managedFields`` (in place) and try once more, as the apiserver's store does."""
    if _surely_fits(obj) or encoded_size(obj) <= MAX_OBJECT_BYTES:
        return
    meta = obj.get("metadata")
    if retry_without_managed_fields and isinstance(meta, dict) and meta.get("managedFields"):
        managed = meta.pop("managedFields")
        if encoded_size(obj) <= MAX_OBJECT_BYTES:
            return
        meta["managedFields"] = managed
    raise too_large()
