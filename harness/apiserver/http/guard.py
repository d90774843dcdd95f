"""Browser-safety checks for the endpoints that change a world outside the Kubernetes API (the
admin API, the reference Runtime Extension's admin endpoint), and the Host header check.

A web page a developer opens can make the browser send requests to a loopback server: "simple"
cross-origin POSTs (``text/plain``, form encodings) go out without a CORS preflight, and DNS
rebinding lets a foreign page reach the server under a name it controls. So:

* a request whose ``Origin`` is not the server's own (scheme and host of the ``Host`` header) is
  refused with 403 ``Forbidden``; requests without ``Origin`` (kubectl, scripts) pass;
* a POST, or any request with a body, must declare ``Content-Type: application/json`` (415
  ``UnsupportedMediaType`` otherwise), which a browser cannot send cross-origin without a preflight;
* the ``Host`` header must name the address the server listens on, ``localhost`` or a loopback
  address (400 otherwise; a server listening on every address accepts any host, see :class:`HostCheck`).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit

from harness.kube import errors

JSON_MEDIA_TYPE = "application/json"
FOREIGN_ORIGIN = 'requests from origin "{}" are not allowed: the admin API only takes requests from its own origin'
NOT_JSON = 'the admin API only accepts "application/json" bodies, not "{}"'
HOST_REFUSED = 'host "{}" is not a name of this server (it answers to: {})'
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
WILDCARD_HOSTS = ("", "0.0.0.0", "::")
_BODY_METHODS = ("POST", "PUT", "PATCH")


def hostname(host_header: str) -> str:
    """The host part of a ``Host`` header value (``[::1]:8080`` → ``::1``), lower-cased."""
    value = host_header.strip().lower()
    if value.startswith("["):
        return value[1:].partition("]")[0]
    if value.count(":") > 1:  # a bare IPv6 address, no port
        return value
    return value.partition(":")[0]


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback IP addresses."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class HostCheck:
    """The host names a server answers to: the one it listens on, ``localhost`` and the loopback
    addresses. Listening on every address (``0.0.0.0``), it cannot know its names and accepts any."""

    def __init__(self, listen_host: str, extra: Iterable[str] = ()) -> None:
        self.any = listen_host.strip("[]") in WILDCARD_HOSTS
        self.names = {name.lower() for name in (listen_host.strip("[]"), *LOOPBACK_NAMES, *extra)}

    def check(self, headers: Mapping[str, str]) -> None:
        """400 ``BadRequest`` when the ``Host`` header names another server."""
        if self.any:
            return
        name = hostname(headers.get("host", ""))
        if name and name not in self.names:
            raise errors.bad_request(HOST_REFUSED.format(name, ", ".join(sorted(self.names))))


def check_origin(headers: Mapping[str, str], scheme: str) -> None:
    """403 ``Forbidden`` when the request comes from a web page of another origin."""
    origin = headers.get("origin")
    if origin is None:
        return
    own = f"{scheme}://{headers.get('host', '')}".lower()
    parts = urlsplit(origin.strip().lower())
    if f"{parts.scheme}://{parts.netloc}" != own or not parts.netloc:
        raise errors.StatusError(errors.status(403, "Forbidden", FOREIGN_ORIGIN.format(origin)))


def check_json_body(method: str, headers: Mapping[str, str]) -> None:
    """415 ``UnsupportedMediaType`` when a request that carries (or may carry) a body does not
    declare it as JSON."""
    has_body = method in _BODY_METHODS or headers.get("content-length", "0") not in ("", "0") or (
        "transfer-encoding" in headers)
    if not has_body:
        return
    content_type = headers.get("content-type", "")
    media = content_type.partition(";")[0].strip().lower()
    if media != JSON_MEDIA_TYPE:
        raise errors.StatusError(errors.status(415, "UnsupportedMediaType", NOT_JSON.format(content_type)))


def check_admin_request(method: str, headers: Mapping[str, str], scheme: str) -> None:
    """Both browser checks of an admin request: its origin, then its body's media type."""
    check_origin(headers, scheme)
    check_json_body(method, headers)
