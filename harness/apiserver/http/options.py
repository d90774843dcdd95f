"""Query parameters as Kubernetes options: dryRun, booleans and integers as the apiserver parses
them, list options, and DeleteOptions from query parameters or a body."""

from __future__ import annotations

from typing import Any

from starlette.datastructures import QueryParams

from harness.apiserver import decoding, deleteoptions
from harness.kube import errors
from harness.kube.names.meta import META_GROUP

DRY_RUN_ALL = "All"
_TRUE = ("1", "t", "T", "TRUE", "true", "True")
_FALSE = ("0", "f", "F", "FALSE", "false", "False")


def parse_bool(name: str, value: str | None, default: bool = False) -> bool:
    """A boolean query parameter, read as Go's strconv.ParseBool; 400 for other text."""
    if value is None or value == "":
        return default
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise errors.bad_request(f'strconv.ParseBool: parsing "{value}": invalid syntax ({name})')


def parse_int(name: str, value: str | None) -> int | None:
    """An integer query parameter; None when absent, 400 when not a number."""
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError:
        raise errors.bad_request(f'strconv.ParseInt: parsing "{value}": invalid syntax ({name})') from None


def dry_run(query: QueryParams, options_kind: str) -> bool:
    """True for ``dryRun=All``; any other value is 422 on the verb's ``<options_kind>``."""
    values = query.getlist("dryRun")
    for value in values:
        if value != DRY_RUN_ALL:
            raise errors.invalid_object(
                options_kind, META_GROUP, "", [errors.not_supported("dryRun", value, [DRY_RUN_ALL])]
            )
    return bool(values)


def field_validation(query: QueryParams, options_kind: str) -> str:
    """The ``fieldValidation`` directive (empty means Warn); another value is 422 on the verb's
    ``<options_kind>``, listing the supported values as upstream does."""
    value = query.get("fieldValidation") or ""
    if value not in decoding.DIRECTIVES:
        raise errors.invalid_object(
            options_kind, META_GROUP, "",
            [errors.not_supported("fieldValidation", value, list(decoding.DIRECTIVES))],
        )
    return value


def delete_options(query: QueryParams, body: Any) -> dict[str, Any]:
    """DeleteOptions from query parameters (lightkube) overlaid with a JSON body (kubectl, the
    Python client); the body wins where both set a field."""
    options: dict[str, Any] = {}
    grace = parse_int("gracePeriodSeconds", query.get("gracePeriodSeconds"))
    if grace is not None:
        options["gracePeriodSeconds"] = grace
    if query.get("propagationPolicy"):
        options["propagationPolicy"] = query["propagationPolicy"]
    if query.get("orphanDependents"):
        options["orphanDependents"] = parse_bool("orphanDependents", query["orphanDependents"])
    if query.getlist("dryRun"):
        options["dryRun"] = query.getlist("dryRun")
    if body is not None:
        deleteoptions.check(body)
        options.update({k: v for k, v in body.items() if k not in ("kind", "apiVersion")})
    for value in options.get("dryRun") or []:
        if value != DRY_RUN_ALL:
            raise errors.invalid_object(
                "DeleteOptions", META_GROUP, "", [errors.not_supported("dryRun", value, [DRY_RUN_ALL])]
            )
    return options
