"""Machine deletion phase hooks: annotations whose key starts with a lifecycle point's prefix.

A hook is any annotation whose *key* starts with ``pre-drain.delete.hook.machine.cluster.x-k8s.io`` or
``pre-terminate.delete.hook.machine.cluster.x-k8s.io`` (``strings.HasPrefix``); values are ignored. While
one is present the machine controller waits, without requeueing: the watch event of the hook's
removal resumes it. It never times out. The waiting message lists the keys sorted and joined by ","."""

from __future__ import annotations

from typing import Any

from controllers.machine.api import annotations
from harness.kube.names.capi import PRE_DRAIN_DELETE_HOOK_PREFIX, PRE_TERMINATE_DELETE_HOOK_PREFIX

WAITING_FOR_PRE_DRAIN_MESSAGE = "Waiting for pre-drain hooks to succeed (hooks: {hooks})"
WAITING_FOR_PRE_TERMINATE_MESSAGE = "Waiting for pre-terminate hooks to succeed (hooks: {hooks})"
# The log lines upstream writes while waiting.
WAITING_FOR_PRE_DRAIN_LOG = "Waiting for pre-drain hooks to succeed"
WAITING_FOR_PRE_TERMINATE_LOG = "Waiting for pre-terminate hooks to succeed"


def hooks_with_prefix(obj: dict[str, Any], prefix: str) -> list[str]:
    """The annotation keys of ``obj`` that start with ``prefix``, sorted byte-wise."""
    return sorted(k for k in annotations(obj) if k.startswith(prefix))


def pre_drain_hooks(machine: dict[str, Any]) -> list[str]:
    """The Machine's pre-drain hook keys, sorted."""
    return hooks_with_prefix(machine, PRE_DRAIN_DELETE_HOOK_PREFIX)


def pre_terminate_hooks(machine: dict[str, Any]) -> list[str]:
    """The Machine's pre-terminate hook keys, sorted."""
    return hooks_with_prefix(machine, PRE_TERMINATE_DELETE_HOOK_PREFIX)


def joined(hooks: list[str]) -> str:
    """The keys as the waiting message and log show them: joined by "," without spaces."""
    return ",".join(hooks)
