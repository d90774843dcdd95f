"""The Runtime SDK client (``internal/runtime/client``): discovery, calling one extension handler, and
calling every handler of a hook with the answers aggregated.

The registry is the API: a hook's handlers are the ``status.handlers`` of every ExtensionConfig that is
not being deleted (so a controller restarted, or running as another process, sees the same set; a
failed re-discovery leaves the previous handlers in place, as upstream keeps the previous registration).
Handlers are called in the order of their registered names (upstream's order is a Go map's).

Failure policy (reference §1.4): only errors of the call itself -- no answer (connection refused,
deadline, TLS), an HTTP status other than 200, a body that does not decode -- are subject to ``Ignore``,
which turns them into a non-blocking Success with an empty message. A ``Failure`` status, an unknown or
missing status, a namespace selector that cannot be evaluated, an unknown handler: errors whatever the
policy says.

Aggregation (``CallAllExtensions``): handlers whose ExtensionConfig's ``namespaceSelector`` matches the
labels of the Cluster's Namespace are called one after the other; the first error ends the round (later
handlers are not called) and is the result. When all succeed: ``Success``, the lowest non-zero
``retryAfterSeconds``, the non-empty messages joined with ``", "``. No matching handler: an empty Success.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from controllers.machine.errors import go_quote
from controllers.runtime import transport
from controllers.runtime.api import (
    API_VERSION,
    CATALOG,
    DEFAULT_HANDLER_TIMEOUT_SECONDS,
    DISCOVERY_HOOK,
    DISCOVERY_TIMEOUT_SECONDS,
    EXTENSION_CONFIG_KIND,
    FAILURE_POLICY_FAIL,
    FAILURE_POLICY_IGNORE,
    HOOKS_API_VERSION,
    HOOKS_GROUP,
    HOOKS_VERSION,
    MAX_HANDLER_TIMEOUT_SECONDS,
    STATUS_FAILURE,
    STATUS_SUCCESS,
    Hook,
    handler_name,
    hook_path,
)
from harness.client import ApiError, Client
from harness.kube.groupversion import parse_group_version
from harness.kube.names.capi import CONVERSION_DATA_ANNOTATION
from harness.kube.names.core import LAST_APPLIED_CONFIGURATION_ANNOTATION
from harness.kube.selectors import label_selector_from_dict
from harness.kube.validation import is_dns1123_label

# Annotations cleanupCluster drops from the Cluster sent in a request.

# Error texts (pkg/errors wrapping joins them with ": ").
CALL_ALL_FAILED = "failed to call extension handlers for hook {hook}"
GET_ALL_FAILED = "failed to get extension handlers for hook {hook}"
GET_HANDLER_FAILED = "failed to get extension handler {name}"
CALL_FAILED = "failed to call extension handler {name}"
HANDLER_NOT_REGISTERED = "handler with name {name} has not been registered"
HOOK_MISMATCH = "failed to call extension handler {name}: handler does not match GroupHook {hook}"
NAMESPACE_NOT_MATCHED = "failed to call extension handler {name}: namespaceSelector did not match object {key}"
MATCH_NAMESPACE_FAILED = "failed to match namespace: failed to get namespace {namespace}: {error}"
HTTP_CALL_FAILED = "http call failed"
STATUS_NOT_200 = "got response with status code {code} != 200: response : {body}"
DECODE_FAILED = "failed to decode response: {error}"
FAILURE_RESPONSE = "failed to {operation} {target}: got failure response with message: {message}"
UNKNOWN_STATUS = "failed to {operation} {target}: got unknown response status {status} with message: {message}"
CALL_OPERATION = "call extension handler"
DISCOVER_OPERATION = "discover extension"
DISCOVER_FAILED = "failed to discover extension {name}"
VALIDATE_DISCOVERY_FAILED = "failed to validate discovery response"
DUPLICATE_HANDLER = "duplicate name for handler {name} found"
HANDLER_NAME_INVALID = "handler name {name} is not valid: {errors}"
TIMEOUT_OUT_OF_RANGE = "handler {name} timeoutSeconds {timeout} must be between 0 and 30"
FAILURE_POLICY_INVALID = 'handler {name} failurePolicy {policy} must equal "Ignore" or "Fail"'
API_VERSION_INVALID = "handler {name} requestHook APIVersion {api_version} is not valid: {error}"
NOT_IN_CATALOG = "handler {name} requestHook {api_version}/{hook} is not in the Runtime SDK catalog"


class RuntimeSDKError(Exception):
    """A Runtime SDK error; ``str()`` is upstream's error chain."""


class CallingError(RuntimeSDKError):
    """``errCallingExtensionHandler``: the call got no usable answer; the only kind ``Ignore`` ignores."""


@dataclass
class Registration:
    """One registered handler (``runtimeregistry.ExtensionRegistration``)."""

    name: str  # <handler>.<extension config>
    extension_config: str
    hook: str
    api_version: str
    timeout_seconds: int
    failure_policy: str
    client_config: dict[str, Any]
    namespace_selector: dict[str, Any] | None
    settings: dict[str, str] = field(default_factory=dict)

    @property
    def handler(self) -> str:
        """The handler's own name: the registered name without ``.<extension config>``."""
        return self.name.removesuffix("." + self.extension_config)


@dataclass
class CallRecord:
    """What one handler call did (kept for observability and tests)."""

    hook: str
    handler: str
    response: dict[str, Any] | None
    error: str | None


def _wrap(outer: str, inner: object) -> str:
    return f"{outer}: {inner}"


def clean_cluster(cluster: dict[str, Any]) -> dict[str, Any]:
    """``cleanupCluster``: a copy without managedFields, the last-applied and conversion-data annotations,
    and with an empty v1beta1 status (whose two non-omitempty booleans read false)."""
    out = copy.deepcopy(cluster)
    meta = out.setdefault("metadata", {})
    meta.pop("managedFields", None)
    annotations = meta.get("annotations")
    if isinstance(annotations, dict):
        annotations = {k: v for k, v in annotations.items()
                       if k not in (LAST_APPLIED_CONFIGURATION_ANNOTATION, CONVERSION_DATA_ANNOTATION)}
        meta["annotations"] = annotations
    out["status"] = {"infrastructureReady": False, "controlPlaneReady": False}
    return out


def validate_discovery_response(response: dict[str, Any]) -> list[dict[str, Any]]:
    """``defaultAndValidateDiscoveryResponse``: the handlers with failurePolicy (Fail) and timeoutSeconds
    (10) defaulted; RuntimeSDKError with every problem (one, or ``[a, b]``) otherwise."""
    handlers = [dict(h) for h in response.get("handlers") or [] if isinstance(h, dict)]
    problems: list[str] = []
    seen: set[str] = set()
    for handler in handlers:
        if handler.get("failurePolicy") is None:
            handler["failurePolicy"] = FAILURE_POLICY_FAIL
        if handler.get("timeoutSeconds") is None:
            handler["timeoutSeconds"] = DEFAULT_HANDLER_TIMEOUT_SECONDS
        name = str(handler.get("name", ""))
        if name in seen:
            problems.append(DUPLICATE_HANDLER.format(name=name))
        seen.add(name)
        label_errors = is_dns1123_label(name)
        if label_errors:
            problems.append(HANDLER_NAME_INVALID.format(name=name, errors="[" + " ".join(label_errors) + "]"))
        timeout = handler["timeoutSeconds"]
        if not isinstance(timeout, int) or not 0 <= timeout <= MAX_HANDLER_TIMEOUT_SECONDS:
            problems.append(TIMEOUT_OUT_OF_RANGE.format(name=name, timeout=timeout))
        policy = handler["failurePolicy"]
        if policy not in (FAILURE_POLICY_FAIL, FAILURE_POLICY_IGNORE):
            problems.append(FAILURE_POLICY_INVALID.format(name=name, policy=policy))
        request_hook = handler.get("requestHook") or {}
        api_version, hook = str(request_hook.get("apiVersion", "")), str(request_hook.get("hook", ""))
        try:
            group, version = parse_group_version(api_version)
        except ValueError as err:
            problems.append(API_VERSION_INVALID.format(name=name, api_version=api_version, error=err))
        else:
            if (group, version) != (HOOKS_GROUP, HOOKS_VERSION) or hook not in CATALOG:
                problems.append(NOT_IN_CATALOG.format(name=name, api_version=api_version, hook=hook))
    if problems:
        text = problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]"
        raise RuntimeSDKError(_wrap(VALIDATE_DISCOVERY_FAILED, text))
    return handlers


def _response_status_error(response: dict[str, Any], operation: str, target: str) -> str | None:
    """``validateResponseStatus``: None for Success, else upstream's text for Failure or an unknown status."""
    status = response.get("status")
    if status == STATUS_SUCCESS:
        return None
    message = response.get("message") or ""
    if status == STATUS_FAILURE:
        return FAILURE_RESPONSE.format(operation=operation, target=go_quote(target), message=message)
    return UNKNOWN_STATUS.format(operation=operation, target=go_quote(target), status=go_quote(str(status or "")),
                                 message=message)


def _http_call(endpoint: transport.Endpoint, path: str, body: dict[str, Any], timeout: int,
               now: Callable[[], float] | None = None) -> dict[str, Any]:
    """``httpCall``: the decoded answer; CallingError for the errors the failure policy covers. ``now``:
    the clock the deadline is also measured on (the world's; see controllers/runtime/transport.py)."""
    try:
        code, data, _url = transport.post(endpoint, path, body, timeout, now)
    except transport.TransportError as err:
        raise CallingError(_wrap(HTTP_CALL_FAILED, err)) from None
    if code != 200:
        text = data.decode(errors="replace")
        if len(text) > transport.QUOTED_BODY_BYTES:
            text = text[:transport.QUOTED_BODY_BYTES] + "..."
        raise CallingError(_wrap(HTTP_CALL_FAILED, STATUS_NOT_200.format(code=code, body=go_quote(text))))
    try:
        decoded = json.loads(data)
        if not isinstance(decoded, dict):
            raise ValueError(f"json: cannot unmarshal {type(decoded).__name__} into Go value of type struct")
    except ValueError as err:
        raise CallingError(_wrap(HTTP_CALL_FAILED, DECODE_FAILED.format(error=err))) from None
    return decoded


class RuntimeClient:
    """Discovery and hook calls for the controllers, through ``client`` (the management cluster)."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.calls: list[CallRecord] = []
        self.max_records = 1000

    # -- discovery ---------------------------------------------------------------------------------

    def discover(self, extension_config: dict[str, Any]) -> list[dict[str, Any]]:
        """``Discover``: the ExtensionConfig's new ``status.handlers`` (``<handler>.<config>`` names,
        defaults applied); RuntimeSDKError with upstream's text when discovery fails."""
        name = str(extension_config["metadata"]["name"])
        outer = DISCOVER_FAILED.format(name=go_quote(name))
        try:
            endpoint = transport.resolve(self.client, (extension_config.get("spec") or {}).get("clientConfig") or {})
            request = {"apiVersion": HOOKS_API_VERSION, "kind": DISCOVERY_HOOK.request_kind}
            response = _http_call(endpoint, hook_path(DISCOVERY_HOOK.name), request, DISCOVERY_TIMEOUT_SECONDS,
                                  self.client.now)
        except (transport.ConfigError, RuntimeSDKError) as err:
            raise RuntimeSDKError(_wrap(outer, err)) from None
        problem = _response_status_error(response, DISCOVER_OPERATION, name)
        if problem is not None:
            raise RuntimeSDKError(problem)
        try:
            handlers = validate_discovery_response(response)
        except RuntimeSDKError as err:
            raise RuntimeSDKError(_wrap(outer, err)) from None
        return [{
            "name": handler_name(str(h.get("name", "")), name),
            "requestHook": {"apiVersion": str((h.get("requestHook") or {}).get("apiVersion", "")),
                            "hook": str((h.get("requestHook") or {}).get("hook", ""))},
            "timeoutSeconds": h["timeoutSeconds"],
            "failurePolicy": h["failurePolicy"],
        } for h in handlers]

    # -- registry ----------------------------------------------------------------------------------

    def registrations(self) -> list[Registration]:
        """Every registered handler, by name (see the module docstring)."""
        out = []
        for config in self.client.list(API_VERSION, EXTENSION_CONFIG_KIND)["items"]:
            meta = config.get("metadata") or {}
            if meta.get("deletionTimestamp"):
                continue
            spec = config.get("spec") or {}
            for handler in (config.get("status") or {}).get("handlers") or []:
                request_hook = handler.get("requestHook") or {}
                out.append(Registration(
                    name=str(handler.get("name", "")), extension_config=str(meta.get("name", "")),
                    hook=str(request_hook.get("hook", "")), api_version=str(request_hook.get("apiVersion", "")),
                    timeout_seconds=int(handler.get("timeoutSeconds") or 0),
                    failure_policy=str(handler.get("failurePolicy") or FAILURE_POLICY_FAIL),
                    client_config=spec.get("clientConfig") or {}, namespace_selector=spec.get("namespaceSelector"),
                    settings=dict(spec.get("settings") or {}),
                ))
        return sorted(out, key=lambda r: r.name)

    def _match_namespace(self, selector: dict[str, Any] | None, namespace: str) -> bool:
        """``matchNamespace``: an empty selector matches without reading the Namespace."""
        parsed = label_selector_from_dict(selector or {})
        if parsed is None or parsed.empty:
            return True
        try:
            ns = self.client.get("v1", "Namespace", namespace)
        except ApiError as err:
            raise RuntimeSDKError(MATCH_NAMESPACE_FAILED.format(namespace=namespace, error=err)) from None
        return parsed.matches((ns.get("metadata") or {}).get("labels") or {})

    def handlers_for(self, hook: Hook, namespace: str) -> list[Registration]:
        """``GetAllExtensions``: the handlers of ``hook`` whose namespace selector matches ``namespace``."""
        out = []
        for registration in self.registrations():
            if registration.hook != hook.name or parse_group_version(registration.api_version)[0] != HOOKS_GROUP:
                continue
            try:
                matches = self._match_namespace(registration.namespace_selector, namespace)
            except RuntimeSDKError as err:
                raise RuntimeSDKError(_wrap(GET_ALL_FAILED.format(hook=go_quote(hook.group_hook())), _wrap(
                    GET_HANDLER_FAILED.format(name=go_quote(registration.name)), err))) from None
            if matches:
                out.append(registration)
        return out

    # -- calls -------------------------------------------------------------------------------------

    def call_all(self, hook_name: str, cluster: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
        """``CallAllExtensions`` for a lifecycle hook about ``cluster``: the aggregated response
        (``status``, ``message`` and, for retry hooks, ``retryAfterSeconds``); RuntimeSDKError on the
        first handler error."""
        hook = CATALOG[hook_name]
        outer = CALL_ALL_FAILED.format(hook=go_quote(hook.group_hook()))
        namespace = str((cluster.get("metadata") or {}).get("namespace", ""))
        try:
            handlers = self.handlers_for(hook, namespace)
        except RuntimeSDKError as err:
            raise RuntimeSDKError(_wrap(outer, err)) from None
        responses = []
        for registration in handlers:
            try:
                responses.append(self.call(hook, registration, namespace, request))
            except RuntimeSDKError as err:
                raise RuntimeSDKError(_wrap(outer, err)) from None
        return aggregate(hook, responses)

    def call(self, hook: Hook, registration: Registration, namespace: str, request: dict[str, Any]) -> dict[str, Any]:
        """``CallExtension``: one handler's response, the failure policy applied."""
        name = registration.name
        if registration.hook != hook.name:
            raise RuntimeSDKError(HOOK_MISMATCH.format(name=go_quote(name), hook=go_quote(hook.group_hook())))
        try:
            matches = self._match_namespace(registration.namespace_selector, namespace)
        except RuntimeSDKError:
            raise RuntimeSDKError(CALL_FAILED.format(name=go_quote(name))) from None
        if not matches:
            cluster_name = str(((request.get("cluster") or {}).get("metadata") or {}).get("name", ""))
            raise RuntimeSDKError(NAMESPACE_NOT_MATCHED.format(name=go_quote(name), key=f"{namespace}/{cluster_name}"))
        timeout = registration.timeout_seconds or DEFAULT_HANDLER_TIMEOUT_SECONDS
        body = {"apiVersion": HOOKS_API_VERSION, "kind": hook.request_kind, **copy.deepcopy(request)}
        body["settings"] = {**registration.settings, **(request.get("settings") or {})}
        outer = CALL_FAILED.format(name=go_quote(name))
        try:
            endpoint = transport.resolve(self.client, registration.client_config)
        except transport.ConfigError as err:
            raise RuntimeSDKError(_wrap(outer, _wrap(HTTP_CALL_FAILED, err))) from None
        try:
            response = _http_call(endpoint, hook_path(hook.name, registration.handler), body, timeout,
                                  self.client.now)
        except CallingError as err:
            if registration.failure_policy == FAILURE_POLICY_IGNORE:
                self._record(hook, name, None, str(err))
                return {"status": STATUS_SUCCESS, "message": ""}
            self._record(hook, name, None, str(err))
            raise RuntimeSDKError(_wrap(outer, err)) from None
        self._record(hook, name, response, None)
        problem = _response_status_error(response, CALL_OPERATION, name)
        if problem is not None:
            raise RuntimeSDKError(problem)
        return response

    def _record(self, hook: Hook, handler: str, response: dict[str, Any] | None, error: str | None) -> None:
        self.calls.append(CallRecord(hook.name, handler, response, error))
        if len(self.calls) > self.max_records:
            del self.calls[: len(self.calls) - self.max_records]


def _retry_after(response: dict[str, Any]) -> int:
    value = response.get("retryAfterSeconds") or 0
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def aggregate(hook: Hook, responses: list[dict[str, Any]]) -> dict[str, Any]:
    """``aggregateSuccessfulResponses``: Success, lowest non-zero retryAfterSeconds (retry hooks only),
    the non-empty messages joined with ``", "``."""
    out: dict[str, Any] = {"apiVersion": HOOKS_API_VERSION, "kind": hook.response_kind, "status": STATUS_SUCCESS}
    if hook.retry:
        retries = [r for r in (_retry_after(resp) for resp in responses) if r != 0]
        out["retryAfterSeconds"] = min(retries) if retries else 0
    out["message"] = ", ".join(str(r.get("message")) for r in responses if r.get("message"))
    return out
