"""The oracle's own Runtime SDK side (harness/targets/runtime_sdk.py): a DiscoveryResponse's handlers are
judged by the protocol's rules, each broken rule named in upstream's words, the defaults applied; a call to
an address that refuses connections fails with Go's wording, at once."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from harness.apiserver.http.certificates import make_ca
from harness.kube.names.runtime_sdk import BEFORE_CLUSTER_CREATE, HOOKS_API_VERSION, hook_path
from harness.targets.runtime_sdk import CallFailed, handler_problems, post


def _handler(name: str = "create", **more: Any) -> dict[str, Any]:
    return {"name": name, "requestHook": {"apiVersion": HOOKS_API_VERSION, "hook": BEFORE_CLUSTER_CREATE}, **more}


def test_a_valid_handler_gets_the_defaults_and_no_problem() -> None:
    handlers, problems = handler_problems([_handler()])
    assert problems == []
    assert handlers[0]["failurePolicy"] == "Fail" and handlers[0]["timeoutSeconds"] == 10


@pytest.mark.parametrize(("handlers", "problem"), [
    ([_handler(), _handler()], "duplicate name for handler create found"),
    ([_handler("Create_It")], "handler name Create_It is not valid: [a lowercase RFC 1123 label"),
    ([_handler(timeoutSeconds=31)], "handler create timeoutSeconds 31 must be between 0 and 30"),
    ([_handler(failurePolicy="Retry")], 'handler create failurePolicy Retry must equal "Ignore" or "Fail"'),
    ([{"name": "x", "requestHook": {"apiVersion": HOOKS_API_VERSION, "hook": "BeforeMachineCreate"}}],
     "handler x requestHook hooks.runtime.cluster.x-k8s.io/v1alpha1/BeforeMachineCreate is not in the Runtime SDK"),
    ([{"name": "x", "requestHook": {"apiVersion": "a/b/c", "hook": BEFORE_CLUSTER_CREATE}}],
     "handler x requestHook a/b/c/BeforeClusterCreate is not in the Runtime SDK catalog"),
])
def test_a_broken_rule_is_named(handlers: list[dict[str, Any]], problem: str) -> None:
    _, problems = handler_problems(handlers)
    assert any(problem in p for p in problems), problems


def test_a_refused_connection_is_named_as_go_names_it() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(CallFailed) as err:
        post(f"https://127.0.0.1:{port}", hook_path("Discovery"), {}, 2, make_ca("nobody").cert_pem)
    assert str(err.value) == (f'Post "https://127.0.0.1:{port}/hooks.runtime.cluster.x-k8s.io/v1alpha1/discovery'
                              f'?timeout=2s": dial tcp 127.0.0.1:{port}: connect: connection refused')
