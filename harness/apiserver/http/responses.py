"""Responses: compact JSON bodies and Kubernetes ``Status`` errors.

Every error leaves as a ``Status`` with ``Content-Type: application/json`` exactly (lightkube
only recognises an API error by that header value), and carries the error's own headers
(``Retry-After``).
"""

from __future__ import annotations

import json
import logging
from typing import Any

from starlette.responses import Response

from harness.kube import errors
from harness.kube.names.meta import JSON_CONTENT_TYPE as JSON

log = logging.getLogger("lifecycle_tck.http")

NOT_FOUND_MESSAGE = "the server could not find the requested resource"
METHOD_NOT_ALLOWED_MESSAGE = "the server does not allow this method on the requested resource"
UNAUTHORIZED_MESSAGE = "Unauthorized"


def encode(body: Any) -> bytes:
    """Compact JSON on one line (watch framing depends on it); NaN and infinities are refused."""
    # Not orjson: its floats (``1e-05`` is ``0.00001`` to it) and NaN (``null``) differ from json's,
    # and telling whether a body holds any costs, in Python, about what json.dumps itself costs.
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()


def json_response(
    body: Any, status_code: int = 200, *, headers: dict[str, str] | None = None, media_type: str = JSON
) -> Response:
    """A JSON response whose Content-Type is ``media_type`` exactly (no charset is added); the body
    ends with a newline, as the apiserver's JSON encoder writes it."""
    return Response(encode(body) + b"\n", status_code=status_code, headers=headers, media_type=media_type)


def status_response(err: errors.StatusError) -> Response:
    """The error's ``Status`` with its HTTP code and headers."""
    return json_response(err.status, err.code, headers=dict(err.headers))


def path_not_found() -> errors.StatusError:
    """404 for a path no handler serves, as the apiserver's not-found handler writes it."""
    return errors.StatusError(errors.status(404, "NotFound", NOT_FOUND_MESSAGE))


def method_not_allowed() -> errors.StatusError:
    """405 for a verb the addressed resource does not serve."""
    return errors.method_not_allowed(METHOD_NOT_ALLOWED_MESSAGE)


def unauthorized() -> errors.StatusError:
    """401 for a request without the expected bearer token."""
    return errors.StatusError(errors.status(401, "Unauthorized", UNAUTHORIZED_MESSAGE))


def internal_error(exc: BaseException) -> Response:
    """500 ``InternalError`` for a bug on our side; the traceback goes to the log, not the client."""
    log.error("unhandled error while serving a request", exc_info=exc)
    return status_response(errors.internal(f"{type(exc).__name__}: {exc}"))


WARNING_HEADER = "Warning"


def warning_value(text: str) -> str:
    """A ``Warning`` header value as kube-apiserver writes it: code 299, agent ``-`` and the text
    quoted, with ``"`` and ``\\`` escaped (``NewWarningHeader``)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'299 - "{escaped}"'
