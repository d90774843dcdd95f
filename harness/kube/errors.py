"""Kubernetes ``Status`` errors, shaped exactly as kube-apiserver 1.32 writes them.

Every error a client can cause is a :class:`StatusError` carrying a ``Status`` dict; the HTTP
facade serialises it unchanged and the in-process client raises it unchanged. The constructors
below own the message templates (``apimachinery/pkg/api/errors``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

OPTIMISTIC_LOCK_MESSAGE = (
    "the object has been modified; please apply your changes to the latest version and try again"
)

# Field error types (``apimachinery/pkg/util/validation/field``): the cause reason and the text
# that starts the error body.
FIELD_VALUE_INVALID = "FieldValueInvalid"
FIELD_VALUE_REQUIRED = "FieldValueRequired"
FIELD_VALUE_FORBIDDEN = "FieldValueForbidden"
FIELD_VALUE_TOO_LONG = "FieldValueTooLong"
FIELD_VALUE_TOO_MANY = "FieldValueTooMany"
FIELD_VALUE_DUPLICATE = "FieldValueDuplicate"
FIELD_VALUE_NOT_SUPPORTED = "FieldValueNotSupported"
FIELD_VALUE_NOT_FOUND = "FieldValueNotFound"
FIELD_VALUE_TYPE_INVALID = "FieldValueTypeInvalid"  # a value of the wrong JSON type (CRD schemas)

_TYPE_TEXT = {
    FIELD_VALUE_INVALID: "Invalid value",
    FIELD_VALUE_REQUIRED: "Required value",
    FIELD_VALUE_FORBIDDEN: "Forbidden",
    FIELD_VALUE_TOO_LONG: "Too long",
    FIELD_VALUE_TOO_MANY: "Too many",
    FIELD_VALUE_DUPLICATE: "Duplicate value",
    FIELD_VALUE_NOT_SUPPORTED: "Unsupported value",
    FIELD_VALUE_NOT_FOUND: "Not found",
    FIELD_VALUE_TYPE_INVALID: "Invalid value",
}

# Types whose body omits the value, as ``field.Error.ErrorBody`` does.
_VALUE_OMITTED = {FIELD_VALUE_REQUIRED, FIELD_VALUE_FORBIDDEN, FIELD_VALUE_TOO_LONG, FIELD_VALUE_TOO_MANY}

_OMIT = object()


class GoLiteral(str):
    """A value already rendered as Go prints it (``0x0`` for a uint64), shown verbatim."""


def _format_value(value: Any) -> str:
    """Render a value the way Go's ``%#v`` does for the common JSON types."""
    if isinstance(value, GoLiteral):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


@dataclass
class FieldError:
    """One validation failure at a field path, rendered as ``field.Error`` renders it."""

    field: str
    type: str
    detail: str = ""
    value: Any = _OMIT

    def body(self) -> str:
        """The part of the message after ``<field>: `` (``field.Error.ErrorBody``)."""
        text = _TYPE_TEXT[self.type]
        if self.type not in _VALUE_OMITTED and self.value is not _OMIT:
            text = f"{text}: {_format_value(self.value)}"
        if self.detail:
            text = f"{text}: {self.detail}"
        return text

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}" if self.field else self.body()

    def cause(self) -> dict[str, Any]:
        return {"reason": self.type, "message": self.body(), "field": self.field}


def invalid(field_path: str, value: Any, detail: str) -> FieldError:
    return FieldError(field_path, FIELD_VALUE_INVALID, detail, value)


def required(field_path: str, detail: str = "") -> FieldError:
    return FieldError(field_path, FIELD_VALUE_REQUIRED, detail)


def forbidden(field_path: str, detail: str) -> FieldError:
    return FieldError(field_path, FIELD_VALUE_FORBIDDEN, detail)


def too_long(field_path: str, limit: int) -> FieldError:
    # 1.32 wording (the 1.31 one was "must have at most N bytes").
    return FieldError(field_path, FIELD_VALUE_TOO_LONG, f"may not be more than {limit} bytes")


def not_supported(field_path: str, value: Any, valid: list[str]) -> FieldError:
    quoted = ", ".join(json.dumps(v) for v in valid)
    return FieldError(field_path, FIELD_VALUE_NOT_SUPPORTED, f"supported values: {quoted}", value)


def duplicate(field_path: str, value: Any) -> FieldError:
    return FieldError(field_path, FIELD_VALUE_DUPLICATE, "", value)


@dataclass
class StatusError(Exception):
    """An API error: ``status`` is the complete ``Status`` object sent to the client."""

    status: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__init__(self.status.get("message", ""))

    @property
    def code(self) -> int:
        return int(self.status.get("code", 500))

    @property
    def reason(self) -> str:
        return str(self.status.get("reason", ""))

    @property
    def message(self) -> str:
        return str(self.status.get("message", ""))

    @property
    def details(self) -> dict[str, Any]:
        return dict(self.status.get("details") or {})

    def __str__(self) -> str:
        return f"({self.code} {self.reason}) {self.message}"


def status(
    code: int,
    reason: str,
    message: str,
    details: dict[str, Any] | None = None,
    *,
    success: bool = False,
) -> dict[str, Any]:
    """Build a ``Status`` object."""
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success" if success else "Failure",
    }
    if message:
        body["message"] = message
    if reason:
        body["reason"] = reason
    if details:
        body["details"] = details
    body["code"] = code
    return body


def _qualified(resource: str, group: str) -> str:
    return f"{resource}.{group}" if group else resource


def _details(name: str, group: str, kind: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if name:
        out["name"] = name
    if group:
        out["group"] = group
    out["kind"] = kind
    return out


def not_found(resource: str, group: str, name: str) -> StatusError:
    return StatusError(
        status(404, "NotFound", f'{_qualified(resource, group)} "{name}" not found', _details(name, group, resource))
    )


def already_exists(resource: str, group: str, name: str) -> StatusError:
    message = f'{_qualified(resource, group)} "{name}" already exists'
    return StatusError(status(409, "AlreadyExists", message, _details(name, group, resource)))


def conflict(resource: str, group: str, name: str, reason_text: str = OPTIMISTIC_LOCK_MESSAGE) -> StatusError:
    return StatusError(
        status(
            409,
            "Conflict",
            f'Operation cannot be fulfilled on {_qualified(resource, group)} "{name}": {reason_text}',
            _details(name, group, resource),
        )
    )


def invalid_object(kind: str, group: str, name: str, errors: list[FieldError]) -> StatusError:
    """422 ``Invalid`` with one cause per field error (``details.kind`` is the Kind).

    The message names each distinct error once (``ErrorList.ToAggregate`` drops repeats), while the
    causes keep every error, repeats included, as ``NewInvalid`` lists them.
    """
    texts = list(dict.fromkeys(str(e) for e in errors))
    text = ", ".join(texts)
    if len(texts) > 1:
        text = "[" + text + "]"
    details = _details(name, group, kind)
    details["causes"] = [e.cause() for e in errors]
    return StatusError(status(422, "Invalid", f'{_qualified(kind, group)} "{name}" is invalid: {text}', details))


def forbidden_error(
    resource: str, group: str, name: str, reason_text: str, causes: list[dict[str, Any]] | None = None
) -> StatusError:
    details = _details(name, group, resource)
    if causes:
        details["causes"] = causes
    subject = f'{_qualified(resource, group)} "{name}"' if name else _qualified(resource, group)
    return StatusError(status(403, "Forbidden", f"{subject} is forbidden: {reason_text}", details))


def bad_request(message: str) -> StatusError:
    return StatusError(status(400, "BadRequest", message))


def method_not_allowed(message: str) -> StatusError:
    return StatusError(status(405, "MethodNotAllowed", message))


def unsupported_media_type(content_type: str, accepted: list[str]) -> StatusError:
    return StatusError(
        status(
            415,
            "UnsupportedMediaType",
            "the body of the request was in an unknown format - accepted media types include: " + ", ".join(accepted),
        )
    )


def too_many_requests(
    message: str, retry_after: int = 0, causes: list[dict[str, Any]] | None = None
) -> StatusError:
    details: dict[str, Any] = {}
    if causes:
        details["causes"] = causes
    if retry_after > 0:
        details["retryAfterSeconds"] = retry_after
    headers = {"Retry-After": str(retry_after)} if retry_after > 0 else {}
    return StatusError(status(429, "TooManyRequests", message, details or None), headers)


def gone(message: str) -> StatusError:
    return StatusError(status(410, "Expired", message))


def timeout(message: str, retry_after: int = 0) -> StatusError:
    details = {"retryAfterSeconds": retry_after} if retry_after else None
    headers = {"Retry-After": str(retry_after)} if retry_after > 0 else {}
    return StatusError(status(504, "Timeout", f"Timeout: {message}", details), headers)


def internal(message: str) -> StatusError:
    return StatusError(
        status(500, "InternalError", f"Internal error occurred: {message}", {"causes": [{"message": message}]})
    )


def request_entity_too_large(message: str) -> StatusError:
    return StatusError(status(413, "RequestEntityTooLarge", message))


def unprocessable(message: str = "the server rejected our request due to an error in our request") -> StatusError:
    """422 ``Invalid`` without an object (a failed JSON patch ``test``)."""
    return StatusError(status(422, "Invalid", message))
