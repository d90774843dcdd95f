"""The ExtensionConfig admission webhooks (``core/webhooks/admission/extensionconfig.go``) as an API
server admission plugin: defaulting, then validation, on creates and updates of the object (not of its
status).

Defaulting (``default.extensionconfig.runtime.addons.cluster.x-k8s.io``): ``spec.namespaceSelector``
becomes the empty selector (matches every namespace) when unset; ``spec.clientConfig.service.port``
becomes 443 when a service is given without a port.

Validation (``validation.extensionconfig.runtime.cluster.x-k8s.io``), upstream's texts and field paths:
the name is a DNS-1123 label; exactly one of ``url`` and ``service``; the URL parses and its scheme is
``https``; a service has a DNS-1035 name, a DNS-1123 namespace, a path starting with ``/`` and a valid
port; the namespace selector converts. A denial comes back as kube-apiserver relays a webhook's: 422
``Invalid``, the message prefixed ``admission webhook "<name>" denied the request: ``.
"""

from __future__ import annotations

import re
from typing import Any

from controllers.machine.errors import go_quote
from controllers.machine.webhooks import webhook_admitter
from controllers.runtime.api import API_GROUP, DEFAULT_SERVICE_PORT, EXTENSION_CONFIG_KIND
from harness.kube import errors as api_errors
from harness.kube.errors import FieldError
from harness.kube.selectors import label_selector_from_dict
from harness.kube.validation import is_dns1035_label, is_dns1123_label

VALIDATION_WEBHOOK = "validation.extensionconfig.runtime.cluster.x-k8s.io"

NAME_NOT_LABEL = "ExtensionConfig name should be a valid DNS1123 label name: {errors}"
URL_OR_SERVICE_REQUIRED = "either url or service must be defined"
ONLY_ONE_OF_URL_OR_SERVICE = "only one of url or service can be defined"
URL_INVALID = "must be a valid URL, e.g. https://example.com: {error}"
HTTPS_ONLY = "'https' is the only allowed URL scheme, e.g. https://example.com"
MUST_NOT_BE_EMPTY = "must not be empty"
PATH_INVALID = "must be a valid URL path e.g. /path/to/hook: {error}"
PATH_NO_SLASH = 'must start with "/" to be a valid URL path'
PORT_RANGE = "must be between 1 and 65535, inclusive"
SELECTOR_REQUIRED = "must be defined"
# url.ParseRequestURI's refusal of something that is neither an absolute URL nor an absolute path.
INVALID_REQUEST_URI = "parse {url}: invalid URI for request"
HTTPS = "https"
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
MAX_PORT = 65535


def _go_strings(items: list[str]) -> str:
    """Go's ``%s`` of a ``[]string``."""
    return "[" + " ".join(items) + "]"


def parse_request_uri(text: str) -> tuple[str, str] | None:
    """``url.ParseRequestURI`` reduced to what the webhook needs: ``(scheme, rest)`` of an absolute URL,
    ``("", text)`` of an absolute path, None when it is neither."""
    match = _SCHEME.match(text)
    if match:
        return match.group(1).lower(), text[match.end():]
    if text.startswith("/"):
        return "", text
    return None


def _service(spec: dict[str, Any]) -> dict[str, Any] | None:
    service = (spec.get("clientConfig") or {}).get("service")
    return service if isinstance(service, dict) else None


def default_extension_config(config: dict[str, Any]) -> None:
    """The defaulting webhook, in place."""
    spec = config.setdefault("spec", {})
    if spec.get("namespaceSelector") is None:
        spec["namespaceSelector"] = {}
    service = _service(spec)
    if service is not None and service.get("port") is None:
        service["port"] = DEFAULT_SERVICE_PORT


def validate_extension_config(config: dict[str, Any]) -> list[FieldError]:
    """The validation webhook's field errors (``validate`` and ``validateExtensionConfigSpec``)."""
    errs: list[FieldError] = []
    name = str((config.get("metadata") or {}).get("name", ""))
    label_errors = is_dns1123_label(name)
    if label_errors:
        errs.append(api_errors.invalid("metadata.name", name, NAME_NOT_LABEL.format(errors=_go_strings(label_errors))))
    spec = config.get("spec") or {}
    client_config = spec.get("clientConfig") or {}
    url = str(client_config.get("url") or "")
    service = _service(spec)
    if not url and service is None:
        errs.append(api_errors.required("spec.clientConfig", URL_OR_SERVICE_REQUIRED))
    if url and service is not None:
        errs.append(api_errors.forbidden("spec.clientConfig", ONLY_ONE_OF_URL_OR_SERVICE))
    if url:
        parsed = parse_request_uri(url)
        if parsed is None:
            errs.append(api_errors.invalid("spec.clientConfig.url", url,
                                           URL_INVALID.format(error=INVALID_REQUEST_URI.format(url=go_quote(url)))))
        elif parsed[0] != HTTPS:
            errs.append(api_errors.invalid("spec.clientConfig.url", url, HTTPS_ONLY))
    if service is not None:
        errs.extend(_validate_service(service))
    selector = spec.get("namespaceSelector")
    if selector is None:
        errs.append(api_errors.required("spec.namespaceSelector", SELECTOR_REQUIRED))
    else:
        try:
            label_selector_from_dict(selector)
        except ValueError as err:
            errs.append(api_errors.invalid("spec.namespaceSelector", selector, str(err)))
    return errs


def _validate_service(service: dict[str, Any]) -> list[FieldError]:
    errs: list[FieldError] = []
    path = "spec.clientConfig.service"
    name = str(service.get("name") or "")
    if not name:
        errs.append(api_errors.required(f"{path}.name", MUST_NOT_BE_EMPTY))
    errs.extend(api_errors.invalid(f"{path}.name", name, msg) for msg in is_dns1035_label(name))
    namespace = str(service.get("namespace") or "")
    if not namespace:
        errs.append(api_errors.required(f"{path}.namespace", MUST_NOT_BE_EMPTY))
    errs.extend(api_errors.invalid(f"{path}.namespace", namespace, msg) for msg in is_dns1123_label(namespace))
    service_path = str(service.get("path") or "")
    if service_path:
        if parse_request_uri(service_path) is None:
            errs.append(api_errors.invalid(f"{path}.path", service_path, PATH_INVALID.format(
                error=INVALID_REQUEST_URI.format(url=go_quote(service_path)))))
        if not service_path.startswith("/"):
            errs.append(api_errors.invalid(f"{path}.path", service_path, PATH_NO_SLASH))
    port = service.get("port")
    if isinstance(port, int) and not isinstance(port, bool) and not 1 <= port <= MAX_PORT:
        errs.append(api_errors.invalid(f"{path}.port", port, PORT_RANGE))
    return errs


# Admission plugin for ExtensionConfigs: default, then validate (creates and updates).
admit_extension_config = webhook_admitter(VALIDATION_WEBHOOK, default_extension_config,
                                          lambda new, _old: validate_extension_config(new))


# (API group, kind, plugin) for the composition root to install on the management cluster.
ADMISSION_PLUGINS = ((API_GROUP, EXTENSION_CONFIG_KIND, admit_extension_config),)
