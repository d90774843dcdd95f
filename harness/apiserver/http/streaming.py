"""The pod subresources kube-apiserver hands to a kubelet: ``log``, ``exec``, ``attach`` and
``portforward``, answered as the apiserver answers them when the node has no reachable kubelet.

The checks made before a kubelet would be contacted are upstream's (pod, container, host, node,
node address; pkg/registry/core/pod/strategy.go). Past them:

* ``log`` is served from the simulated pod itself: the annotation ``harness.test/log`` (its value
  is the log text; the Job simulator writes what a hook Job's container was given and how it
  ended) with ``container``, ``tailLines``, ``limitBytes``, ``timestamps``, ``sinceSeconds`` /
  ``sinceTime`` (every line is stamped with the pod's start) and ``follow`` (what there is, then
  the end), as ``text/plain``;
* ``exec``, ``attach`` and ``portforward`` have no container runtime behind them: without upgrade
  headers the answer is upstream's 400 ``Upgrade request required``; with them it is the 500 the
  apiserver gives when it cannot dial the kubelet (``error dialing backend: dial tcp
  <node-ip>:10250: connect: connection refused``), which kubectl prints as ``Error from server``.
  A WebSocket handshake (the Python clients' way) gets the same answer as its HTTP response
  (``WebSocketAnsweredOverHttp`` in harness/apiserver/http/app.py).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from harness.apiserver import builtins
from harness.apiserver.http import options
from harness.apiserver.server import APIServer
from harness.apiserver.subresources import streams
from harness.clock import parse_rfc3339
from harness.kube import errors

# Declared (verbs, discovery) in harness/apiserver/subresources/streams.py; answered here.
LOG = streams.LOG.name
PORTFORWARD = streams.PORTFORWARD.name
LOG_ANNOTATION = "harness.test/log"
KUBELET_PORT = 10250
TEXT_PLAIN = "text/plain"


def _containers(pod: dict[str, Any]) -> list[str]:
    spec = pod.get("spec") or {}
    return [c.get("name", "") for c in spec.get("containers") or [] if isinstance(c, dict)]


def _all_containers(pod: dict[str, Any]) -> list[str]:
    spec = pod.get("spec") or {}
    names = []
    for key in ("initContainers", "containers", "ephemeralContainers"):
        names += [c.get("name", "") for c in spec.get(key) or [] if isinstance(c, dict)]
    return names


def _container(pod: dict[str, Any], requested: str | None) -> str:
    """The container addressed (validateContainer / the log default): 400 when ambiguous or unknown."""
    name = pod["metadata"]["name"]
    if not requested:
        containers = _containers(pod)
        if len(containers) == 1:
            return containers[0]
        raise errors.bad_request(
            f"a container name must be specified for pod {name}, choose one of: [{' '.join(containers)}]"
        )
    if requested not in _all_containers(pod):
        raise errors.bad_request(f"container {requested} is not valid for pod {name}")
    return requested


def _node_address(server: APIServer, node_name: str) -> str:
    """The node's preferred address (InternalIP first), or upstream's 404 / 500."""
    try:
        node = server.get(builtins.NODE, None, node_name)
    except errors.StatusError:
        raise errors.not_found("nodes", "", node_name) from None
    addresses = (node.get("status") or {}).get("addresses") or []
    # kubeadm (and so kind) run the apiserver with --kubelet-preferred-address-types=InternalIP,...
    for address in addresses:
        if isinstance(address, dict) and address.get("type") == "InternalIP" and address.get("address"):
            return str(address["address"])
    for address in addresses:
        if isinstance(address, dict) and address.get("address"):
            return str(address["address"])
    raise _plain_error("no preferred addresses found; known addresses: []")


def _wants_upgrade(request: Request) -> bool:
    connection = request.headers.get("connection", "").lower()
    return "upgrade" in connection and bool(request.headers.get("upgrade"))


def serve(server: APIServer, request: Request, namespace: str, name: str, subresource: str) -> Response:
    """The answer to ``pods/<name>/<subresource>`` for a subresource of :mod:`.subresources.streams`."""
    if subresource == LOG:
        if request.method != "GET":
            raise errors.method_not_allowed("the server does not allow this method on the requested resource")
        return _log(server, request, namespace, name)
    if request.method not in ("GET", "POST"):
        raise errors.method_not_allowed("the server does not allow this method on the requested resource")
    pod = server.get(builtins.POD, namespace, name)
    query = request.query_params
    if subresource != PORTFORWARD:
        _container(pod, query.get("container"))
    node = (pod.get("spec") or {}).get("nodeName")
    if not node:
        raise errors.bad_request(f"pod {name} does not have a host assigned")
    address = _node_address(server, node)
    if not _wants_upgrade(request):
        raise errors.bad_request("Upgrade request required")
    # No container runtime stands behind the simulated node: the kubelet cannot be dialled.
    raise _plain_error(f"error dialing backend: dial tcp {address}:{KUBELET_PORT}: connect: connection refused")


def _plain_error(message: str) -> errors.StatusError:
    """A 500 for an error that is not a StatusError upstream: no reason, just the message."""
    return errors.StatusError(errors.status(500, "", message))


def _log_options(name: str, request: Request) -> dict[str, Any]:
    query = request.query_params
    parsed: dict[str, Any] = {}
    problems: list[errors.FieldError] = []
    for key in ("tailLines", "limitBytes", "sinceSeconds"):
        value = options.parse_int(key, query.get(key))
        if value is None:
            continue
        floor = 0 if key == "tailLines" else 1
        if value < floor:
            problems.append(errors.invalid(key, value, f"must be greater than {'or equal to ' if floor == 0 else ''}0"))
        parsed[key] = value
    for key in ("timestamps", "follow", "previous"):
        parsed[key] = options.parse_bool(key, query.get(key))
    since_time = query.get("sinceTime")
    if since_time:
        try:
            parsed["sinceTime"] = parse_rfc3339(since_time)
        except ValueError:
            raise errors.bad_request(f'parsing time "{since_time}" as "2006-01-02T15:04:05Z07:00": '
                                     "cannot parse as RFC3339") from None
        if "sinceSeconds" in parsed:
            problems.append(errors.forbidden("sinceSeconds", "at most one of `sinceTime` or `sinceSeconds` may be "
                                             "specified"))
    if problems:
        raise errors.invalid_object("PodLogOptions", "", name, problems)
    return parsed


def _log(server: APIServer, request: Request, namespace: str, name: str) -> Response:
    pod = server.get(builtins.POD, namespace, name)
    opts = _log_options(name, request)
    container = _container(pod, request.query_params.get("container"))
    node = (pod.get("spec") or {}).get("nodeName")
    if not node:
        return Response(b"", status_code=204)  # upstream streams nothing for an unscheduled pod
    _node_address(server, node)
    _check_started(pod, container)
    text = str(((pod.get("metadata") or {}).get("annotations") or {}).get(LOG_ANNOTATION, ""))
    if opts["previous"]:
        raise errors.bad_request(
            f'previous terminated container "{container}" in pod "{name}" not found'
        )
    lines = text.splitlines(keepends=True)
    # Every line of a simulated log was written when the pod started: "since" keeps all or none.
    started = _epoch(_started(pod))
    since = opts.get("sinceTime")
    if "sinceSeconds" in opts:
        since = server.clock.now() - opts["sinceSeconds"]
    if since is not None and started is not None and started < since:
        lines = []
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    if "tailLines" in opts:
        lines = lines[len(lines) - opts["tailLines"]:] if opts["tailLines"] else []
    if opts["timestamps"]:
        stamp = _nano(_started(pod))
        lines = [f"{stamp} {line}" for line in lines]
    body = "".join(lines).encode()
    if "limitBytes" in opts:
        body = body[: opts["limitBytes"]]
    return Response(body, status_code=200, media_type=TEXT_PLAIN)


def _check_started(pod: dict[str, Any], container: str) -> None:
    """A container the kubelet reports as waiting has no log yet: the kubelet's 400 passes through."""
    status = pod.get("status") or {}
    for key in ("initContainerStatuses", "containerStatuses"):
        for entry in status.get(key) or []:
            if not isinstance(entry, dict) or entry.get("name") != container:
                continue
            waiting = (entry.get("state") or {}).get("waiting")
            if isinstance(waiting, dict) and not entry.get("lastState"):
                reason = waiting.get("reason") or "ContainerCreating"
                raise errors.bad_request(
                    f'container "{container}" in pod "{pod["metadata"]["name"]}" is waiting to start: {reason}'
                )


def _started(pod: dict[str, Any]) -> str:
    status = pod.get("status") or {}
    return str(status.get("startTime") or pod["metadata"].get("creationTimestamp") or "1970-01-01T00:00:00Z")


def _epoch(text: str) -> float | None:
    try:
        return parse_rfc3339(text)
    except ValueError:
        return None


def _nano(rfc3339: str) -> str:
    """The kubelet's log timestamp (RFC 3339 with nanoseconds) of a seconds-precision time."""
    try:
        moment = datetime.strptime(rfc3339, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return rfc3339
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000000000Z")
