"""Hook Implementing Controllers (HICs): what a HIC claims (its config), and the reference HIC.

A HIC (seed 000, "Hook Implementing Controller Design") manages lifecycle hooks on Cluster API
Machines: it watches Machines, acts when a Machine carrying its hook is being deleted, and removes
its hook once its work is done; it may add its hook to the Machines it selects.

**The HIC config** (YAML) declares what a HIC claims, so the suite knows what to check::

    hooks:                          # at least one
      - lifecyclePoint: pre-drain   # pre-drain | pre-terminate
        name: migrate-app           # the annotation is <point>.delete.hook.machine.cluster.x-k8s.io/<name>
        owner: my-controller        # the annotation's value (who manages it); default ""
    addsHooks: true                 # the HIC adds its hooks to the Machines it selects (default false)
    selector:                       # which Machines it manages: a metav1.LabelSelector (default: every Machine)
      matchLabels: {hic.example.com/managed: "true"}
    workSeconds: 30                 # the reference HIC's work takes this long, in virtual seconds (default 0)

:func:`load_config` / :func:`parse_config` validate it and raise :class:`HicConfigError` naming the
field and what is wrong (an unknown key, an unknown lifecycle point, a hook name that is not a valid
annotation name, a hook claimed twice, a selector that does not parse).

**The reference HIC** (:class:`ReferenceHic`, the world's management simulator ``reference-hic``) does
nothing until :meth:`ReferenceHic.configure` gives it a config (a dict as above). Then it watches the
Machines its selector picks; when ``addsHooks`` it adds each of its hooks a Machine lacks while the
Machine is not being deleted; when a Machine carrying one of its hooks is being deleted, it does its
"work" -- which ends ``workSeconds`` of virtual time after the Machine's ``deletionTimestamp``, so it
keeps no state and a restart (:meth:`ReferenceHic.restart`) picks up where it was -- records it in
:attr:`ReferenceHic.work`, and removes that hook, and only that one, with a JSON patch that first
tests the annotation still holds its value. Machines that are not being deleted are never written to,
except to add its hooks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from harness.client import JSON_PATCH, ApiError, Client, Controller, Request, Result, find_in
from harness.clock import parse_rfc3339
from harness.kube.names.capi import (
    CLUSTER_API_VERSION,
    MACHINE_KIND,
    PRE_DRAIN_DELETE_HOOK_PREFIX,
    PRE_TERMINATE_DELETE_HOOK_PREFIX,
)
from harness.kube.selectors import label_selector_from_dict

PRE_DRAIN = "pre-drain"
PRE_TERMINATE = "pre-terminate"
# The lifecycle points (seed 000 "Lifecycle Points") and their annotation prefixes (seed 001, upstream).
LIFECYCLE_POINTS = {PRE_DRAIN: PRE_DRAIN_DELETE_HOOK_PREFIX, PRE_TERMINATE: PRE_TERMINATE_DELETE_HOOK_PREFIX}
# The environment variable naming the HIC config file for a HIC under test (`--target hic`).
CONFIG_ENV = "LIFECYCLE_TCK_HIC_CONFIG"
CONFIG_KEYS = ("hooks", "addsHooks", "selector", "workSeconds")
HOOK_KEYS = ("lifecyclePoint", "name", "owner")
SELECTOR_KEYS = ("matchLabels", "matchExpressions")
# An annotation key's name part: a Kubernetes qualified name (at most 63 characters).
_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
NAME_MAX = 63
CONFLICT = 409
NOT_FOUND = 404
INVALID = 422


class HicConfigError(ValueError):
    """A HIC config that cannot be used; the message names the field and says what is wrong."""


@dataclass(frozen=True)
class Hook:
    """One hook a HIC manages."""

    point: str
    name: str
    owner: str

    @property
    def key(self) -> str:
        """The annotation key: ``<point>.delete.hook.machine.cluster.x-k8s.io/<name>``."""
        return f"{LIFECYCLE_POINTS[self.point]}/{self.name}"


@dataclass(frozen=True)
class HicConfig:
    """What a HIC claims (see the module docstring)."""

    hooks: tuple[Hook, ...]
    adds_hooks: bool = False
    selector: dict[str, Any] = field(default_factory=dict)
    work_seconds: float = 0.0

    def selects(self, labels: dict[str, str] | None) -> bool:
        """Whether the HIC manages a Machine with these labels."""
        selector = label_selector_from_dict(self.selector)
        return selector is None or selector.matches(labels or {})

    @property
    def label_selector(self) -> str | None:
        """The selector as a list/watch ``labelSelector`` (None: every Machine)."""
        selector = label_selector_from_dict(self.selector)
        return str(selector) if selector is not None and not selector.empty else None

    def selected_labels(self) -> dict[str, str]:
        """Labels that make a Machine selected: ``matchLabels``, and for each expression a value it accepts."""
        labels = {str(k): str(v) for k, v in (self.selector.get("matchLabels") or {}).items()}
        for expression in self.selector.get("matchExpressions") or []:
            if expression.get("operator") == "In":
                labels[expression["key"]] = str(expression["values"][0])
            elif expression.get("operator") == "Exists":
                labels[expression["key"]] = "true"
        return labels

    def to_dict(self) -> dict[str, Any]:
        """The config as its YAML form."""
        return {"hooks": [{"lifecyclePoint": h.point, "name": h.name, "owner": h.owner} for h in self.hooks],
                "addsHooks": self.adds_hooks, "selector": dict(self.selector), "workSeconds": self.work_seconds}


def _unknown(data: dict[str, Any], known: tuple[str, ...], where: str) -> None:
    extra = sorted(str(k) for k in data if k not in known)
    if extra:
        raise HicConfigError(f"{where}: unknown field(s) {', '.join(extra)}; known: {', '.join(known)}")


def _hook(item: Any, index: int) -> Hook:
    where = f"hooks[{index}]"
    if not isinstance(item, dict):
        raise HicConfigError(f"{where}: must be a mapping with lifecyclePoint, name and owner")
    _unknown(item, HOOK_KEYS, where)
    point = item.get("lifecyclePoint")
    if point not in LIFECYCLE_POINTS:
        raise HicConfigError(f"{where}.lifecyclePoint: {point!r} is not a lifecycle point; "
                             f"use one of {', '.join(LIFECYCLE_POINTS)}")
    name = item.get("name")
    if not isinstance(name, str) or not name:
        raise HicConfigError(f"{where}.name: required, the hook name (the part of the annotation key after '/')")
    if len(name) > NAME_MAX or not _NAME.match(name):
        raise HicConfigError(f"{where}.name: {name!r} is not a valid annotation name: at most {NAME_MAX} "
                             "characters, alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric")
    owner = item.get("owner", "")
    if owner is None:
        owner = ""
    if not isinstance(owner, str):
        raise HicConfigError(f"{where}.owner: must be a string (the annotation's value)")
    return Hook(point=str(point), name=name, owner=owner)


def parse_config(data: Any) -> HicConfig:
    """A validated :class:`HicConfig` from its YAML form; :class:`HicConfigError` says what is wrong."""
    if not isinstance(data, dict):
        raise HicConfigError("the HIC config must be a mapping with at least 'hooks'")
    _unknown(data, CONFIG_KEYS, "config")
    hooks_in = data.get("hooks")
    if not isinstance(hooks_in, list) or not hooks_in:
        raise HicConfigError("hooks: required, a list of at least one hook (lifecyclePoint, name, owner)")
    hooks = tuple(_hook(item, i) for i, item in enumerate(hooks_in))
    keys = [h.key for h in hooks]
    twice = sorted({k for k in keys if keys.count(k) > 1})
    if twice:
        raise HicConfigError(f"hooks: the hook {twice[0]} is claimed twice")
    adds = data.get("addsHooks", False)
    if not isinstance(adds, bool):
        raise HicConfigError("addsHooks: must be true or false")
    selector = data.get("selector") or {}
    if not isinstance(selector, dict):
        raise HicConfigError("selector: must be a label selector (matchLabels, matchExpressions)")
    _unknown(selector, SELECTOR_KEYS, "selector")
    try:
        label_selector_from_dict(selector)
    except (ValueError, TypeError, AttributeError, KeyError) as err:
        raise HicConfigError(f"selector: {err}") from None
    work = data.get("workSeconds", 0)
    if isinstance(work, bool) or not isinstance(work, (int, float)) or work < 0:
        raise HicConfigError("workSeconds: must be a number of seconds >= 0")
    return HicConfig(hooks=hooks, adds_hooks=adds, selector=selector, work_seconds=float(work))


def load_config(path: str | Path) -> HicConfig:
    """The HIC config in the YAML file ``path``; :class:`HicConfigError` when it is missing or invalid."""
    try:
        text = Path(path).read_text()
    except OSError as err:
        raise HicConfigError(f"cannot read the HIC config {path}: {err.strerror or err}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise HicConfigError(f"the HIC config {path} is not YAML: {err}") from None
    try:
        return parse_config(data)
    except HicConfigError as err:
        raise HicConfigError(f"{path}: {err}") from None


def _escape(key: str) -> str:
    """An annotation key as a JSON pointer segment (RFC 6901)."""
    return key.replace("~", "~0").replace("/", "~1")


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.get("metadata") or {}


class ReferenceHic(Controller):
    """The reference hook implementing controller (see the module docstring); idle until configured."""

    name = "reference-hic"

    def __init__(self, client: Client) -> None:
        super().__init__()
        self.client = client
        self.config: HicConfig | None = None
        # (namespace, name, hook key, virtual time) of each hook whose work was done, oldest first.
        self.work: list[tuple[str, str, str, float]] = []

    def configure(self, config: dict[str, Any]) -> dict[str, Any]:
        """Take ``config`` (the YAML form) and start watching Machines; the config as understood."""
        try:
            self.config = parse_config(config)
        except HicConfigError as err:
            raise ValueError(str(err)) from None
        self.watch(self.client, CLUSTER_API_VERSION, MACHINE_KIND, label_selector=self.config.label_selector)
        self.restart()
        return self.config.to_dict()

    def restart(self) -> None:
        """Forget the queue and look at every Machine again, as a HIC that was restarted does."""
        self.drop_timers()
        if self.config is None:
            return
        listed = self.client.list(CLUSTER_API_VERSION, MACHINE_KIND, label_selector=self.config.label_selector)
        for machine in listed.get("items") or []:
            self.enqueue(Request.of(machine))

    def done(self) -> list[list[Any]]:
        """The work done so far: ``[namespace, name, hook key, virtual time]`` each."""
        return [list(item) for item in self.work]

    def reconcile(self, request: Request) -> Result | None:
        config = self.config
        if config is None:
            return None
        machine = find_in(self.client, CLUSTER_API_VERSION, MACHINE_KIND, request.name, request.namespace)
        if machine is None or not config.selects(_meta(machine).get("labels")):
            return None
        annotations = _meta(machine).get("annotations") or {}
        deleted_at = _meta(machine).get("deletionTimestamp")
        if not deleted_at:
            missing = {h.key: h.owner for h in config.hooks if h.key not in annotations}
            if config.adds_hooks and missing:
                self._write(machine, [{"op": "add", "path": f"/metadata/annotations/{_escape(k)}", "value": v}
                                      for k, v in missing.items()], add_map=not annotations)
            return None
        ours = [h for h in config.hooks if h.key in annotations]
        if not ours:
            return None
        finishes = parse_rfc3339(deleted_at) + config.work_seconds
        if self.now() < finishes:
            return Result(requeue_after=finishes - self.now())
        for hook in ours:
            if self._write(machine, [{"op": "test", "path": f"/metadata/annotations/{_escape(hook.key)}",
                                      "value": annotations[hook.key]},
                                     {"op": "remove", "path": f"/metadata/annotations/{_escape(hook.key)}"}]):
                self.work.append((request.namespace, request.name, hook.key, self.now()))
        return None

    def _write(self, machine: dict[str, Any], ops: list[dict[str, Any]], *, add_map: bool = False) -> bool:
        """Apply a JSON patch (True when it was applied); a Machine that changed under it is looked
        at again, one that is gone is left."""
        if add_map:
            ops = [{"op": "add", "path": "/metadata/annotations", "value": {}}, *ops]
        meta = _meta(machine)
        try:
            self.client.patch(CLUSTER_API_VERSION, MACHINE_KIND, meta["name"], ops, namespace=meta.get("namespace"),
                              patch_type=JSON_PATCH)
        except ApiError as err:
            if err.code == NOT_FOUND:
                return False
            if err.code in (CONFLICT, INVALID):
                # A failed test op or a conflict: someone else wrote first; look again.
                self.enqueue(Request.of(machine))
                return False
            raise
        return True
