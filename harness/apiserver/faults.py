"""Fault injection: the server answers some requests with the errors a real apiserver gives under stress.

A :class:`FaultRule` says which requests it hits (cluster, verbs, resource, namespace, name, users)
and what they get:

* ``Conflict``: 409 ``Conflict``, ``Operation cannot be fulfilled on <resource> "<name>": the object
  has been modified; please apply your changes to the latest version and try again``;
* ``TooManyRequests``: 429 ``TooManyRequests``, ``Too many requests, please try again later.``,
  with ``Retry-After`` (and ``details.retryAfterSeconds``) when ``retryAfterSeconds`` is given;
* ``InternalError``: 500 ``InternalError``, ``Internal error occurred: <text>``;
* ``Expired``: on a list or watch that names a ``resourceVersion`` (not ``0``): a list answers 410
  ``Expired`` ``too old resource version: <asked> (<current>)``; a watch answers 200 and a single
  in-stream ``ERROR`` event carrying that Status, then ends, as the watch cache does;
* ``DropWatch``: the watch stream ends (cleanly, as a connection the apiserver closes) after
  ``afterEvents`` events (default 0);
* ``Latency``: the request waits ``seconds`` of wall time (at most :data:`MAX_LATENCY_SECONDS`) before
  it is served; other rules still apply to it.

A rule fires by ``rate`` (each matching request with that probability, drawn from its own
``random.Random(seed)``, so a run is reproducible), by ``count`` (the next N matching requests), or
both (by rate, at most N times). Rules are tried in the order they were added: every ``Latency``
rule that fires applies, then the first other rule that fires. What was injected is recorded.

Rules as JSON (``POST /harness/v1/faults``)::

    {"fault": "TooManyRequests", "cluster": "management", "verbs": ["update", "patch"],
     "resource": "machines.cluster.x-k8s.io", "namespace": "default", "name": "m1",
     "users": ["..."], "userPrefix": "system:serviceaccount:", "exceptUsers": ["..."],
     "rate": 0.1, "count": 3, "seed": 0, "retryAfterSeconds": 1, "seconds": 0.2, "afterEvents": 0}

Every field but ``fault`` and one of ``rate``/``count`` is optional. ``resource`` is a plural,
optionally group-qualified (``machines.cluster.x-k8s.io``; unqualified it matches every group) and
optionally with a subresource (``pods/eviction``; without one it matches the resource and all its
subresources). Verbs are Kubernetes verbs: ``get list watch create update patch delete
deletecollection``.

The injector of a world is kept on its :class:`~harness.apiserver.clusters.ClusterSet` (attribute
``faults``), so the HTTP facade and in-process clients of the same world consult the same rules.
In-process clients (harness/client/inprocess.py) apply only the error faults, and never to watches:
an in-process watch has no stream to end and nobody re-establishes it, and virtual time has no
latency.
"""

from __future__ import annotations

import asyncio
import random
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from harness.kube import errors
from harness.kube.names.faults import (
    CONFLICT,
    DROP_WATCH,
    ERROR_FAULTS,
    EXPIRED,
    FAULTS,
    INTERNAL_ERROR,
    LATENCY,
    TOO_MANY_REQUESTS,
)

GET, LIST, WATCH = "get", "list", "watch"
CREATE, UPDATE, PATCH, DELETE, DELETECOLLECTION = "create", "update", "patch", "delete", "deletecollection"
VERBS = (GET, LIST, WATCH, CREATE, UPDATE, PATCH, DELETE, DELETECOLLECTION)
READS = (GET, LIST)
WRITES = (CREATE, UPDATE, PATCH, DELETE)
# Which verbs a fault can answer at all (a rule naming no verbs gets these).
_FAULT_VERBS = {
    EXPIRED: (LIST, WATCH),
    DROP_WATCH: (WATCH,),
}
# kube-apiserver's max-in-flight and priority-and-fairness filters say this on a 429.
TOO_MANY_REQUESTS_MESSAGE = "Too many requests, please try again later."
INTERNAL_ERROR_TEXT = "fault injected by the test harness (rule {})"
EXPIRED_MESSAGE = "too old resource version: {} ({})"
MAX_LATENCY_SECONDS = 30.0
# How many injections are remembered (the newest).
INJECTED_KEPT = 10_000

RULE_INVALID = "fault rule: {}"


class FaultRuleError(ValueError):
    """A fault rule that cannot be used; the message says which field and why."""


@dataclass(frozen=True)
class FaultRequest:
    """What the injector needs to know of a request."""

    cluster: str
    verb: str
    group: str
    resource: str
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    user: str = ""
    resource_version: str = ""


@dataclass
class FaultRule:
    """One rule (see the module docstring); ``fired`` counts its injections."""

    id: int
    fault: str
    cluster: str | None = None
    verbs: tuple[str, ...] = ()
    resource: str | None = None
    namespace: str | None = None
    name: str | None = None
    users: tuple[str, ...] = ()
    user_prefix: str | None = None
    except_users: tuple[str, ...] = ()
    rate: float | None = None
    count: int | None = None
    seed: int = 0
    retry_after_seconds: int | None = None
    seconds: float = 0.0
    after_events: int = 0
    fired: int = 0
    _random: random.Random = field(default_factory=random.Random, repr=False)

    def __post_init__(self) -> None:
        self._random = random.Random(self.seed)

    def matches(self, request: FaultRequest) -> bool:
        """True when ``request`` is one this rule is about (whether it fires is :meth:`draw`'s call)."""
        verbs = self.verbs or _FAULT_VERBS.get(self.fault, VERBS)
        if request.verb not in verbs or request.verb not in _FAULT_VERBS.get(self.fault, VERBS):
            return False
        if self.fault == EXPIRED and request.resource_version in ("", "0"):
            return False  # only a request naming a resourceVersion can find it too old
        if self.cluster is not None and request.cluster != self.cluster:
            return False
        if self.resource is not None and not _resource_matches(self.resource, request):
            return False
        if self.namespace is not None and request.namespace != self.namespace:
            return False
        if self.name is not None and request.name != self.name:
            return False
        if self.users and request.user not in self.users:
            return False
        if self.user_prefix is not None and not request.user.startswith(self.user_prefix):
            return False
        return request.user not in self.except_users

    def draw(self) -> bool:
        """Whether the rule fires for the request it matched (consumes a draw and the count)."""
        if self.count is not None and self.fired >= self.count:
            return False
        if self.rate is not None and self._random.random() >= self.rate:
            return False
        self.fired += 1
        return True

    def to_dict(self) -> dict[str, Any]:
        """The rule as JSON, as ``POST`` takes it, plus ``id`` and ``fired``."""
        out: dict[str, Any] = {"id": self.id, "fault": self.fault}
        optional = {
            "cluster": self.cluster, "resource": self.resource, "namespace": self.namespace, "name": self.name,
            "userPrefix": self.user_prefix, "rate": self.rate, "count": self.count,
            "retryAfterSeconds": self.retry_after_seconds,
        }
        out.update({key: value for key, value in optional.items() if value is not None})
        for key, values in (("verbs", self.verbs), ("users", self.users), ("exceptUsers", self.except_users)):
            if values:
                out[key] = list(values)
        out["seed"] = self.seed
        if self.fault == LATENCY:
            out["seconds"] = self.seconds
        if self.fault == DROP_WATCH:
            out["afterEvents"] = self.after_events
        out["fired"] = self.fired
        return out


def _resource_matches(spec: str, request: FaultRequest) -> bool:
    plural_group, _, subresource = spec.partition("/")
    plural, _, group = plural_group.partition(".")
    if plural != "*" and plural != request.resource:
        return False
    if group and group != request.group:
        return False
    return not subresource or subresource == request.subresource


def _invalid(text: str) -> FaultRuleError:
    return FaultRuleError(RULE_INVALID.format(text))


def _optional_str(body: dict[str, Any], key: str) -> str | None:
    value = body.get(key)
    if value is not None and (not isinstance(value, str) or not value):
        raise _invalid(f'"{key}" must be a non-empty string')
    return value


def _namespace(body: dict[str, Any]) -> str | None:
    # "" is a namespace filter too: it selects cluster-scoped objects.
    value = body.get("namespace")
    if value is not None and not isinstance(value, str):
        raise _invalid('"namespace" must be a string ("" for cluster-scoped objects)')
    return value


def _str_list(body: dict[str, Any], key: str, allowed: tuple[str, ...] | None = None) -> tuple[str, ...]:
    value = body.get(key)
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise _invalid(f'"{key}" must be a list of non-empty strings')
    if allowed is not None:
        unknown = [v for v in value if v not in allowed]
        if unknown:
            raise _invalid(f'unknown {key} {", ".join(unknown)}; known: {", ".join(allowed)}')
    return tuple(value)


def _int(body: dict[str, Any], key: str, minimum: int) -> int | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise _invalid(f'"{key}" must be an integer >= {minimum}')
    return value


def _number(body: dict[str, Any], key: str, low: float, high: float) -> float | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low < value <= high:
        raise _invalid(f'"{key}" must be a number greater than {low:g} and at most {high:g}')
    return float(value)


_FIELDS = {
    "fault", "cluster", "verbs", "resource", "namespace", "name", "users", "userPrefix", "exceptUsers",
    "rate", "count", "seed", "retryAfterSeconds", "seconds", "afterEvents",
}


def parse_rule(body: Any, rule_id: int) -> FaultRule:
    """A :class:`FaultRule` from its JSON form; :class:`FaultRuleError` naming the bad field."""
    if not isinstance(body, dict):
        raise _invalid("body must be a JSON object")
    unknown = sorted(set(body) - _FIELDS)
    if unknown:
        raise _invalid(f'unknown field(s) {", ".join(unknown)}; known: {", ".join(sorted(_FIELDS))}')
    fault = body.get("fault")
    if fault not in FAULTS:
        raise _invalid(f'"fault" must be one of {", ".join(FAULTS)}')
    verbs = _str_list(body, "verbs", VERBS)
    applicable = _FAULT_VERBS.get(fault, VERBS)
    if verbs and not set(verbs) & set(applicable):
        raise _invalid(f'{fault} applies only to the verbs {", ".join(applicable)}')
    rate = _number(body, "rate", 0.0, 1.0)
    count = _int(body, "count", 1)
    if rate is None and count is None:
        raise _invalid('give "rate" (a number in (0, 1]) or "count" (the next N matching requests), or both')
    seed = _int(body, "seed", 0) or 0
    retry_after = _int(body, "retryAfterSeconds", 1)
    if retry_after is not None and fault != TOO_MANY_REQUESTS:
        raise _invalid(f'"retryAfterSeconds" applies only to {TOO_MANY_REQUESTS}')
    seconds = _number(body, "seconds", 0.0, MAX_LATENCY_SECONDS)
    if (seconds is None) == (fault == LATENCY):
        raise _invalid(f'"seconds" (at most {MAX_LATENCY_SECONDS:g}) is required for {LATENCY} and only for it')
    after_events = _int(body, "afterEvents", 0)
    if after_events is not None and fault != DROP_WATCH:
        raise _invalid(f'"afterEvents" applies only to {DROP_WATCH}')
    resource = _optional_str(body, "resource")
    if resource is not None and (resource.startswith((".", "/")) or resource.count("/") > 1):
        raise _invalid('"resource" must be <plural>[.<group>][/<subresource>]')
    return FaultRule(
        id=rule_id, fault=fault, cluster=_optional_str(body, "cluster"), verbs=verbs, resource=resource,
        namespace=_namespace(body),
        name=_optional_str(body, "name"), users=_str_list(body, "users"), user_prefix=_optional_str(body, "userPrefix"),
        except_users=_str_list(body, "exceptUsers"), rate=rate, count=count, seed=seed,
        retry_after_seconds=retry_after, seconds=seconds or 0.0, after_events=after_events or 0,
    )


class FaultInjector:
    """The fault rules of one world, and what they injected."""

    def __init__(self) -> None:
        self.rules: list[FaultRule] = []
        self.injected: deque[dict[str, Any]] = deque(maxlen=INJECTED_KEPT)
        self._next_id = 1
        # Admin requests and in-process controllers may come from different threads.
        self._lock = threading.Lock()

    def add(self, body: Any) -> FaultRule:
        """Add the rule ``body`` describes (JSON form); :class:`FaultRuleError` for a bad one."""
        with self._lock:
            rule = parse_rule(body, self._next_id)
            self._next_id += 1
            self.rules.append(rule)
            return rule

    def clear(self) -> None:
        """Forget every rule and what was injected."""
        with self._lock:
            self.rules.clear()
            self.injected.clear()

    def to_dict(self) -> dict[str, Any]:
        """``{"items": [rule...], "injected": [record...]}`` (records oldest first)."""
        with self._lock:
            return {"items": [rule.to_dict() for rule in self.rules], "injected": list(self.injected)}

    def fire(self, request: FaultRequest, faults: tuple[str, ...] = FAULTS) -> list[FaultRule]:
        """The rules (of the kinds in ``faults``) that fire for ``request``: every latency rule that
        fires, then at most one other; each injection is recorded."""
        if not self.rules:
            return []
        fired: list[FaultRule] = []
        with self._lock:
            for rule in self.rules:
                if rule.fault not in faults or not rule.matches(request) or not rule.draw():
                    continue
                fired.append(rule)
                self.injected.append({
                    "rule": rule.id, "fault": rule.fault, "cluster": request.cluster, "verb": request.verb,
                    "resource": _qualified(request), "namespace": request.namespace, "name": request.name,
                    "user": request.user,
                })
                if rule.fault != LATENCY:
                    break
        return fired

    def check(self, **request: str) -> None:
        """For in-process clients: raise the error of the first error fault that fires for the request
        (the fields of :class:`FaultRequest`, so the caller needs no import); watches are excluded."""
        if not self.rules or request.get("verb") == WATCH:
            return
        asked = FaultRequest(**request)
        for rule in self.fire(asked, ERROR_FAULTS):
            raise error(rule, asked)


def _qualified(request: FaultRequest) -> str:
    resource = f"{request.resource}.{request.group}" if request.group else request.resource
    return f"{resource}/{request.subresource}" if request.subresource else resource


def error(rule: FaultRule, request: FaultRequest, current_rv: str = "") -> errors.StatusError:
    """The Status error an error fault answers ``request`` with."""
    if rule.fault == CONFLICT:
        return errors.conflict(request.resource, request.group, request.name)
    if rule.fault == TOO_MANY_REQUESTS:
        return errors.too_many_requests(TOO_MANY_REQUESTS_MESSAGE, rule.retry_after_seconds or 0)
    if rule.fault == EXPIRED:
        return errors.gone(expired_message(request.resource_version, current_rv))
    return errors.internal(INTERNAL_ERROR_TEXT.format(rule.id))


def expired_message(asked_rv: str, current_rv: str) -> str:
    """``too old resource version: <asked> (<current>)``, as the watch cache says it."""
    return EXPIRED_MESSAGE.format(asked_rv, current_rv or asked_rv)


async def apply(injector: FaultInjector, request: FaultRequest, current_rv: str = "") -> FaultRule | None:
    """For the HTTP facade: wait out the latency faults that fire, raise the error one (a watch's
    ``Expired`` excepted), and return the fault the watch stream must act on (``Expired`` or
    ``DropWatch``), if any."""
    for rule in injector.fire(request):
        if rule.fault == LATENCY:
            await asyncio.sleep(min(rule.seconds, MAX_LATENCY_SECONDS))
        elif rule.fault == DROP_WATCH or (rule.fault == EXPIRED and request.verb == WATCH):
            return rule
        else:
            raise error(rule, request, current_rv)
    return None


def injector_of(clusters: Any) -> FaultInjector:
    """The fault injector of a world's cluster set (``ClusterSet.faults``)."""
    return clusters.faults


def chaos_rules(
    rate: float, *, users: list[str] | None = None, except_users: list[str] | None = None, seed: int = 0
) -> list[dict[str, Any]]:
    """Rules under which about ``rate`` of the reads and writes (of ``users``, when given, and not
    of ``except_users``) fail: writes with 409, 429 (Retry-After: 1) or 500, reads with 429 or 500,
    each kind equally likely; and about ``rate`` of the watches end early (at once, or after two
    events) and of the watches that name a resourceVersion find it expired (410 in the stream).
    Watch faults reach only clients with a real stream (over HTTP)."""
    if not 0 < rate <= 1:
        raise _invalid("the chaos rate must be a number greater than 0 and at most 1")
    who: dict[str, Any] = {}
    if users:
        who["users"] = list(users)
    if except_users:
        who["exceptUsers"] = list(except_users)
    return [
        {"fault": CONFLICT, "verbs": [UPDATE, PATCH, DELETE], "rate": rate / 3, "seed": seed, **who},
        {"fault": TOO_MANY_REQUESTS, "verbs": list(WRITES), "rate": rate / 3, "retryAfterSeconds": 1,
         "seed": seed + 1, **who},
        {"fault": INTERNAL_ERROR, "verbs": list(WRITES), "rate": rate / 3, "seed": seed + 2, **who},
        {"fault": TOO_MANY_REQUESTS, "verbs": list(READS), "rate": rate / 2, "retryAfterSeconds": 1,
         "seed": seed + 3, **who},
        {"fault": INTERNAL_ERROR, "verbs": list(READS), "rate": rate / 2, "seed": seed + 4, **who},
        {"fault": DROP_WATCH, "rate": rate / 2, "afterEvents": 0, "seed": seed + 5, **who},
        {"fault": DROP_WATCH, "rate": rate / 2, "afterEvents": 2, "seed": seed + 6, **who},
        {"fault": EXPIRED, "verbs": [WATCH], "rate": rate, "seed": seed + 7, **who},
    ]
