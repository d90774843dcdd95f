"""What the reference Runtime Extension answers, and what it remembers of each call.

Answers, first match wins:

1. **Scripted** through the admin endpoint (or :meth:`HookResponder.script`): a response, or a misbehaviour,
   for a hook, either for one Cluster (``<namespace>/<name>``) or for every Cluster.
2. **The ConfigMap convention of Cluster API's test extension** (``test/extension/handlers/lifecycle``):
   when the request's settings carry ``extensionConfigName``, the answer is the value of the key
   ``<Hook>-preloadedResponse`` of the ConfigMap ``<cluster>-<extensionConfigName>-test-extension-hookresponses``
   in the Cluster's namespace, YAML or JSON with case-insensitive field names
   (``{"Status": "Success", "RetryAfterSeconds": 5}``). Without such a key: ``Success`` and, for a blocking
   hook, ``RetryAfterSeconds`` 5 when the setting ``defaultAllHandlersToBlocking`` is ``"true"``, else 0.
   After each call the extension records ``<Hook>-actualResponseStatus`` in that ConfigMap
   (``Status: <S>, RetryAfterSeconds: <n>`` for blocking hooks, ``<S>`` for the others) and creates the
   ConfigMap, with every hook's default preloaded response, when it does not exist.
3. Otherwise: a non-blocking ``Success``. (Upstream's test extension answers ``Failure`` without the
   ``extensionConfigName`` setting; this one stays usable without settings.)

The ConfigMaps are read and written by :meth:`HookResponder.sync` with a client of the management cluster,
never while a call is answered: the controller that calls the extension may be the API server's own
thread, waiting for the answer. The standalone extension syncs from a background thread
(:class:`ConfigMapSync`); scenarios sync between their steps.

Misbehaviours (scripted): ``hang`` (answer after ``hang_seconds`` of wall time, or, for an extension
held on a world's virtual clock, be cancelled once that clock passes the call's deadline), ``redirect`` (307 to
another path), ``garbage`` (200 with a body that is not JSON), ``error`` (500), ``no-status`` (200 with
``{}``). Discovery can be scripted to ``hang`` too (:meth:`HookResponder.set_discovery_behaviour`): it then
answers only after ``discovery_hang_seconds``, longer than the Runtime SDK's fixed 10 s discovery deadline.

Each call records the ``timeout`` its query asked for (``?timeout=10s``), discovery calls included.
"""

from __future__ import annotations

import copy
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import yaml

from harness.client import MERGE, ApiError, Client
from harness.kube.names.runtime_sdk import CATALOG, DISCOVERY, FAILURE_POLICY_FAIL, HOOKS_API_VERSION, STATUS_SUCCESS

EXTENSION_CONFIG_NAME_SETTING = "extensionConfigName"
DEFAULT_ALL_HANDLERS_TO_BLOCKING_SETTING = "defaultAllHandlersToBlocking"
CONFIGMAP_NAME = "{cluster}-{extension_config}-test-extension-hookresponses"
CONFIGMAP_SUFFIX = "-test-extension-hookresponses"
PRELOADED_KEY = "{hook}-preloadedResponse"
ACTUAL_KEY = "{hook}-actualResponseStatus"
RETRY_STATUS = "Status: {status}, RetryAfterSeconds: {retry}"
BLOCKING_DEFAULT_RETRY_SECONDS = 5
ANY_CLUSTER = "*"
TRUE = "true"

HANG = "hang"
REDIRECT = "redirect"
GARBAGE = "garbage"
ERROR = "error"
NO_STATUS = "no-status"
MISBEHAVIOURS = (HANG, REDIRECT, GARBAGE, ERROR, NO_STATUS)
DEFAULT_HANG_SECONDS = 5.0
# Longer than the Runtime SDK's discovery deadline (10 s), so a hanging discovery is given up by the caller.
DEFAULT_DISCOVERY_HANG_SECONDS = 15.0

# The handler names of Cluster API's test extension (test/extension/main.go).
HANDLER_NAMES = {
    "BeforeClusterCreate": "before-cluster-create",
    "AfterControlPlaneInitialized": "after-control-plane-initialized",
    "BeforeClusterUpgrade": "before-cluster-upgrade",
    "AfterControlPlaneUpgrade": "after-control-plane-upgrade",
    "AfterClusterUpgrade": "after-cluster-upgrade",
    "BeforeClusterDelete": "before-cluster-delete",
}


@dataclass
class Call:
    """One call the extension answered: the hook (``Discovery`` for discovery), the handler named in the
    path, the request body, the answer (None for a misbehaviour), the wall-clock time it arrived and the
    ``timeout`` of its query (``""`` when it had none)."""

    hook: str
    handler: str
    request: dict[str, Any]
    response: dict[str, Any] | None
    behaviour: str | None
    at: float
    timeout: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"hook": self.hook, "handler": self.handler, "request": self.request, "response": self.response,
                "behaviour": self.behaviour, "at": self.at, "timeout": self.timeout}


@dataclass
class Answer:
    """What to do for a call: answer ``response``, or misbehave as ``behaviour`` says."""

    response: dict[str, Any] | None = None
    behaviour: str | None = None


def _field(data: dict[str, Any], name: str) -> Any:
    for key, value in data.items():
        if str(key).lower() == name.lower():
            return value
    return None


def parse_preloaded(text: str) -> dict[str, Any]:
    """A preloaded response (YAML or JSON, case-insensitive field names) as a response body."""
    data = yaml.safe_load(text) or {}
    if not isinstance(data, dict):
        raise ValueError(f"a preloaded response is a mapping, not {text!r}")
    out: dict[str, Any] = {}
    for name in ("status", "message", "retryAfterSeconds"):
        value = _field(data, name)
        if value is not None:
            out[name] = value
    return out


def default_response(hook: str, settings: dict[str, str]) -> dict[str, Any]:
    """The answer when nothing is scripted (see the module docstring)."""
    out: dict[str, Any] = {"status": STATUS_SUCCESS}
    if CATALOG[hook].retry:
        blocking = settings.get(DEFAULT_ALL_HANDLERS_TO_BLOCKING_SETTING, "").lower() == TRUE
        out["retryAfterSeconds"] = BLOCKING_DEFAULT_RETRY_SECONDS if blocking else 0
    return out


def actual_status(hook: str, response: dict[str, Any]) -> str:
    """The ``<Hook>-actualResponseStatus`` value the test extension records."""
    status = response.get("status", "")
    if CATALOG[hook].retry:
        return RETRY_STATUS.format(status=status, retry=int(response.get("retryAfterSeconds") or 0))
    return str(status)


def _configmap_key(request: dict[str, Any]) -> tuple[str, str] | None:
    """``(namespace, ConfigMap name)`` for a request whose settings name the ExtensionConfig."""
    extension_config = (request.get("settings") or {}).get(EXTENSION_CONFIG_NAME_SETTING)
    meta = (request.get("cluster") or {}).get("metadata") or {}
    if not extension_config or not meta.get("name"):
        return None
    return str(meta.get("namespace", "")), CONFIGMAP_NAME.format(cluster=meta["name"],
                                                                  extension_config=extension_config)


@dataclass
class HookResponder:
    """The extension's state: its discovery answer, scripted answers, ConfigMap answers and the calls."""

    failure_policy: str = FAILURE_POLICY_FAIL
    timeout_seconds: int | None = None
    hang_seconds: float = DEFAULT_HANG_SECONDS
    discovery_hang_seconds: float = DEFAULT_DISCOVERY_HANG_SECONDS
    discovery: dict[str, Any] | None = None
    discovery_behaviour: str | None = None
    calls: list[Call] = field(default_factory=list)
    _scripted: dict[tuple[str, str], Answer] = field(default_factory=dict)
    _configmaps: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    _pending: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # -- discovery ---------------------------------------------------------------------------------

    def discovery_response(self, timeout: str = "") -> dict[str, Any]:
        """The DiscoveryResponse: the scripted one, else the six handlers with this extension's policy. The
        call is recorded (hook ``Discovery``) with the query's ``timeout``."""
        response = self._discovery_response()
        with self._lock:
            self.calls.append(Call(DISCOVERY, "", {}, copy.deepcopy(response), self.discovery_behaviour, time.time(),
                                   timeout))
        return response

    def _discovery_response(self) -> dict[str, Any]:
        with self._lock:
            if self.discovery is not None:
                return {"apiVersion": HOOKS_API_VERSION, "kind": "DiscoveryResponse", **copy.deepcopy(self.discovery)}
        handlers = []
        for hook, name in HANDLER_NAMES.items():
            handler: dict[str, Any] = {"name": name, "requestHook": {"apiVersion": HOOKS_API_VERSION, "hook": hook},
                                       "failurePolicy": self.failure_policy}
            if self.timeout_seconds is not None:
                handler["timeoutSeconds"] = self.timeout_seconds
            handlers.append(handler)
        return {"apiVersion": HOOKS_API_VERSION, "kind": "DiscoveryResponse", "status": STATUS_SUCCESS,
                "handlers": handlers}

    def set_discovery(self, response: dict[str, Any] | None) -> None:
        """Answer discovery with ``response`` (``status``, ``message``, ``handlers``); None: the default."""
        with self._lock:
            self.discovery = copy.deepcopy(response)

    def set_discovery_behaviour(self, behaviour: str | None) -> None:
        """Make discovery ``hang`` (None: answer at once)."""
        if behaviour not in (None, HANG):
            raise ValueError(f"discovery can only {HANG!r}, not {behaviour!r}")
        with self._lock:
            self.discovery_behaviour = behaviour

    # -- scripting ---------------------------------------------------------------------------------

    def script(self, hook: str, *, response: dict[str, Any] | None = None, behaviour: str | None = None,
               cluster: str = ANY_CLUSTER) -> None:
        """Answer ``hook`` for ``cluster`` (``namespace/name``, or every Cluster) with ``response`` or a
        misbehaviour; neither: forget what was scripted."""
        if hook not in CATALOG:
            raise ValueError(f"unknown hook {hook!r}; known: {', '.join(CATALOG)}")
        if behaviour is not None and behaviour not in MISBEHAVIOURS:
            raise ValueError(f"unknown behaviour {behaviour!r}; known: {', '.join(MISBEHAVIOURS)}")
        with self._lock:
            if response is None and behaviour is None:
                self._scripted.pop((cluster, hook), None)
            else:
                self._scripted[(cluster, hook)] = Answer(copy.deepcopy(response), behaviour)

    def reset(self) -> None:
        """Forget scripted answers, the discovery answer and the calls."""
        with self._lock:
            self._scripted.clear()
            self.discovery = None
            self.discovery_behaviour = None
            self.calls.clear()

    # -- answering ---------------------------------------------------------------------------------

    def answer(self, hook: str, handler: str, request: dict[str, Any], timeout: str = "") -> Answer:
        """What to answer to a call of ``hook``, recorded with the query's ``timeout`` (see the module
        docstring for the order)."""
        meta = (request.get("cluster") or {}).get("metadata") or {}
        cluster = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
        settings = {str(k): str(v) for k, v in (request.get("settings") or {}).items()}
        key = _configmap_key(request)
        with self._lock:
            scripted = self._scripted.get((cluster, hook)) or self._scripted.get((ANY_CLUSTER, hook))
            if scripted is not None:
                answer = Answer(copy.deepcopy(scripted.response), scripted.behaviour)
            elif key is not None:
                preloaded = self._configmaps.get(key, {}).get(PRELOADED_KEY.format(hook=hook))
                try:
                    response = parse_preloaded(preloaded) if preloaded else default_response(hook, settings)
                except (ValueError, yaml.YAMLError) as err:
                    response = {"status": "Failure", "message": f"cannot read the preloaded response: {err}"}
                answer = Answer(response)
            else:
                answer = Answer(default_response(hook, settings))
            if answer.response is not None:
                answer.response = {"apiVersion": HOOKS_API_VERSION, "kind": CATALOG[hook].response_kind,
                                   **answer.response}
                if key is not None:
                    self._pending.setdefault(key, {})[ACTUAL_KEY.format(hook=hook)] = actual_status(
                        hook, answer.response)
            self.calls.append(Call(hook, handler, copy.deepcopy(request), copy.deepcopy(answer.response),
                                   answer.behaviour, time.time(), timeout))
        return answer

    def calls_of(self, hook: str | None = None) -> list[Call]:
        """The calls so far of ``hook`` (``Discovery`` for discovery calls), or of every lifecycle hook,
        oldest first."""
        with self._lock:
            return [c for c in self.calls if c.hook == hook or (hook is None and c.hook != DISCOVERY)]

    # -- ConfigMaps --------------------------------------------------------------------------------

    def sync(self, client: Client) -> list[tuple[str, str]]:
        """Write what calls recorded into their ConfigMaps (creating missing ones), then read every
        ``*-test-extension-hookresponses`` ConfigMap of the cluster ``client`` reaches; the
        ``(namespace, name)`` of those whose preloaded responses changed since the last sync."""
        with self._lock:
            pending, self._pending = self._pending, {}
        for (namespace, name), values in pending.items():
            try:
                client.patch("v1", "ConfigMap", name, {"data": values}, namespace=namespace, patch_type=MERGE)
            except ApiError as err:
                if err.code != 404:
                    raise
                data = {PRELOADED_KEY.format(hook=h): json.dumps(_capitalised(default_response(h, {})))
                        for h in CATALOG}
                data.update(values)
                try:
                    client.create({"apiVersion": "v1", "kind": "ConfigMap",
                                   "metadata": {"name": name, "namespace": namespace}, "data": data})
                except ApiError as create_err:
                    if create_err.code not in (403, 404, 409):
                        raise
        found: dict[tuple[str, str], dict[str, str]] = {}
        for item in client.list("v1", "ConfigMap")["items"]:
            meta = item.get("metadata") or {}
            if str(meta.get("name", "")).endswith(CONFIGMAP_SUFFIX):
                found[(str(meta.get("namespace", "")), str(meta["name"]))] = dict(item.get("data") or {})
        with self._lock:
            before, self._configmaps = self._configmaps, found
        return sorted(key for key, data in found.items() if _preloaded(data) != _preloaded(before.get(key, {})))


def _preloaded(data: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in data.items() if k.endswith(PRELOADED_KEY.format(hook=""))}


def _capitalised(response: dict[str, Any]) -> dict[str, Any]:
    """A response with the Go field names the test extension writes (``Status``, ``RetryAfterSeconds``)."""
    return {key[0].upper() + key[1:]: value for key, value in response.items()}


class ConfigMapSync:
    """Syncs a responder's ConfigMaps every ``interval`` seconds of wall time, from a daemon thread."""

    def __init__(self, responder: HookResponder, client: Client, interval: float = 1.0,
                 on_change: Callable[[str, str], None] | None = None) -> None:
        self.responder = responder
        self.client = client
        self.interval = interval
        # Told (namespace, name) of each ConfigMap whose preloaded responses the extension now answers with.
        self.on_change = on_change
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="extension-configmap-sync", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                changed = self.responder.sync(self.client)
            except (ApiError, ConnectionError, OSError) as err:
                self.errors.append(str(err))
                continue
            if self.on_change is not None:
                for namespace, name in changed:
                    self.on_change(namespace, name)

    def stop(self, timeout: float = 5.0) -> None:
        """Stop syncing and wait (bounded) for the thread."""
        self._stop.set()
        self._thread.join(timeout)
