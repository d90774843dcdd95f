"""Fault injection (harness/apiserver/faults.py): rules through the admin API, the errors real
clients see, dropped and expired watches, and the same rules for a world's in-process clients."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from kubernetes import client, watch
from kubernetes.client.exceptions import ApiException
from test_http_fixtures import Served, kubernetes_api, serving

from harness import __main__ as cli
from harness.apiserver.faults import FaultInjector, FaultRequest, chaos_rules, injector_of
from harness.kube.errors import StatusError
from harness.world.world import World

FAULTS = "/harness/v1/faults"
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
OPERATOR = "system:serviceaccount:ops:operator"


def _configmap(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}}


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    yield from serving(tmp_path, simulators=[])


@pytest.fixture
def http(served: Served) -> Iterator[httpx.Client]:
    with served.http() as session:
        yield session


@pytest.fixture
def api(served: Served) -> Iterator[client.CoreV1Api]:
    for api_client in kubernetes_api(served):
        yield client.CoreV1Api(api_client)


def _add(http: httpx.Client, **rule: Any) -> dict[str, Any]:
    answer = http.post(FAULTS, json=rule)
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


# -- the errors clients see ------------------------------------------------------------------------------


def test_a_429_with_retry_after_is_a_too_many_requests_status_with_the_header(http: httpx.Client) -> None:
    _add(http, fault="TooManyRequests", verbs=["list"], resource="configmaps", count=1, retryAfterSeconds=3)
    answer = http.get(CONFIGMAPS)
    assert answer.status_code == 429 and answer.headers["Retry-After"] == "3"
    assert answer.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                             "message": "Too many requests, please try again later.", "reason": "TooManyRequests",
                             "details": {"retryAfterSeconds": 3}, "code": 429}
    assert http.get(CONFIGMAPS).status_code == 200  # count 1: spent
    state = http.get(FAULTS).json()
    assert state["items"][0]["fired"] == 1
    assert state["injected"] == [{"rule": 1, "fault": "TooManyRequests", "cluster": "management", "verb": "list",
                                  "resource": "configmaps", "namespace": "default", "name": "", "user": "admin"}]


def test_the_kubernetes_client_waits_out_retry_after_and_tries_again(http: httpx.Client, api: client.CoreV1Api) -> None:
    _add(http, fault="TooManyRequests", verbs=["list"], resource="configmaps", count=1, retryAfterSeconds=1)
    started = time.monotonic()
    assert api.list_namespaced_config_map("default").items == []  # urllib3 honours Retry-After on a 429
    assert time.monotonic() - started >= 1.0
    assert http.get(FAULTS).json()["items"][0]["fired"] == 1


def test_the_kubernetes_client_raises_the_429_once_its_retries_are_spent(
    http: httpx.Client, api: client.CoreV1Api
) -> None:
    _add(http, fault="TooManyRequests", verbs=["get"], resource="configmaps", rate=1.0)
    with pytest.raises(ApiException) as caught:
        api.read_namespaced_config_map("c", "default")  # no Retry-After: urllib3 does not retry
    assert caught.value.status == 429
    assert json.loads(caught.value.body)["reason"] == "TooManyRequests"


def test_a_429_without_retry_after_has_neither_the_header_nor_details(http: httpx.Client) -> None:
    _add(http, fault="TooManyRequests", verbs=["get"], count=1)
    answer = http.get(f"{CONFIGMAPS}/missing")
    assert answer.status_code == 429 and "retry-after" not in answer.headers
    assert answer.json()["reason"] == "TooManyRequests" and "details" not in answer.json()


def test_an_update_gets_the_apiservers_conflict_naming_the_object(http: httpx.Client) -> None:
    created = http.post(CONFIGMAPS, json=_configmap("c")).json()
    _add(http, fault="Conflict", verbs=["update", "patch"], resource="configmaps", name="c", count=1)
    answer = http.put(f"{CONFIGMAPS}/c", json=created)
    assert answer.status_code == 409
    assert answer.json()["reason"] == "Conflict"
    assert answer.json()["message"] == (
        'Operation cannot be fulfilled on configmaps "c": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )
    assert answer.json()["details"] == {"name": "c", "kind": "configmaps"}
    assert http.put(f"{CONFIGMAPS}/c", json=created).status_code == 200


def test_a_group_qualified_rule_hits_only_its_group_with_an_internal_error(http: httpx.Client) -> None:
    _add(http, fault="InternalError", resource="deployments.extensions.example", rate=1.0)
    _add(http, fault="InternalError", resource="deployments.apps", verbs=["create"], count=1)
    deployment = {"metadata": {"name": "d"}, "spec": {
        "selector": {"matchLabels": {"app": "d"}},
        "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}}
    answer = http.post("/apis/apps/v1/namespaces/default/deployments", json=deployment)
    assert answer.status_code == 500
    assert answer.json()["reason"] == "InternalError"
    assert answer.json()["message"] == "Internal error occurred: fault injected by the test harness (rule 2)"
    assert http.get(FAULTS).json()["injected"][0]["name"] == "d"  # a create's name comes from its body
    assert http.get("/apis/apps/v1/namespaces/default/deployments").status_code == 200


def test_a_rule_for_some_users_leaves_the_others_alone(served: Served, http: httpx.Client) -> None:
    _add(http, fault="InternalError", users=[OPERATOR], rate=1.0)
    assert http.get(CONFIGMAPS).status_code == 200
    with served.http(headers={"Authorization": f"Bearer {OPERATOR}"}) as operator:
        assert operator.get(CONFIGMAPS).status_code == 500
    _add(http, fault="TooManyRequests", userPrefix="system:serviceaccount:kube-system:", rate=1.0)
    with served.http(headers={"Authorization": "Bearer system:serviceaccount:kube-system:kubelet"}) as kubelet:
        assert kubelet.get(CONFIGMAPS).status_code == 429


def test_a_rule_for_a_workload_cluster_leaves_the_management_cluster_alone(served: Served, http: httpx.Client) -> None:
    http.post("/harness/v1/clusters", json={"name": "default/w1"}).raise_for_status()
    _add(http, fault="InternalError", cluster="default/w1", rate=1.0)
    assert http.get(CONFIGMAPS).status_code == 200
    assert http.get(f"/clusters/default/w1{CONFIGMAPS}").status_code == 500


def test_added_latency_holds_the_answer_back_by_wall_time(http: httpx.Client) -> None:
    _add(http, fault="Latency", seconds=0.3, verbs=["get"], count=1)
    started = time.monotonic()
    answer = http.get(f"{CONFIGMAPS}/missing")
    assert time.monotonic() - started >= 0.3
    assert answer.status_code == 404  # late, but otherwise served as ever


# -- watches -----------------------------------------------------------------------------------------------


def test_a_dropped_watch_ends_after_the_events_it_was_allowed(http: httpx.Client) -> None:
    for name in ("a", "b", "c"):
        http.post(CONFIGMAPS, json=_configmap(name)).raise_for_status()
    _add(http, fault="DropWatch", resource="configmaps", afterEvents=1, count=1)
    with http.stream("GET", CONFIGMAPS, params={"watch": "1", "timeoutSeconds": "30"}) as stream:
        lines = [line for line in stream.iter_lines() if line]
    assert len(lines) == 1 and json.loads(lines[0])["type"] == "ADDED"
    with http.stream("GET", CONFIGMAPS, params={"watch": "1", "timeoutSeconds": "1"}) as stream:
        assert len([line for line in stream.iter_lines() if line]) == 3  # the rule is spent


def test_the_kubernetes_clients_watch_stream_ends_when_the_watch_is_dropped(
    http: httpx.Client, api: client.CoreV1Api
) -> None:
    http.post(CONFIGMAPS, json=_configmap("a")).raise_for_status()
    _add(http, fault="DropWatch", verbs=["watch"], count=1)
    started = time.monotonic()
    events = list(watch.Watch().stream(api.list_namespaced_config_map, "default", timeout_seconds=30))
    assert events == [] and time.monotonic() - started < 10


def test_a_watch_from_a_resource_version_gets_410_expired_in_the_stream(
    http: httpx.Client, api: client.CoreV1Api
) -> None:
    rv = http.post(CONFIGMAPS, json=_configmap("a")).json()["metadata"]["resourceVersion"]
    # The client re-watches once after a 410, so the fault must answer twice to reach the caller.
    _add(http, fault="Expired", resource="configmaps", count=2)
    with pytest.raises(ApiException) as caught:
        list(watch.Watch().stream(api.list_namespaced_config_map, "default", resource_version=rv, timeout_seconds=5))
    assert caught.value.status == 410
    assert caught.value.reason == f"Expired: too old resource version: {rv} ({rv})"


def test_a_list_from_a_resource_version_gets_410_and_one_without_is_not_touched(http: httpx.Client) -> None:
    rv = http.post(CONFIGMAPS, json=_configmap("a")).json()["metadata"]["resourceVersion"]
    _add(http, fault="Expired", count=1)
    assert http.get(CONFIGMAPS).status_code == 200  # no resourceVersion: nothing can be too old
    assert http.get(CONFIGMAPS, params={"resourceVersion": "0"}).status_code == 200
    answer = http.get(CONFIGMAPS, params={"resourceVersion": rv})
    assert answer.status_code == 410
    assert answer.json()["reason"] == "Expired"
    assert answer.json()["message"] == f"too old resource version: {rv} ({rv})"


# -- the admin API -------------------------------------------------------------------------------------------


def test_admin_health_version_discovery_and_openapi_are_never_hit(http: httpx.Client) -> None:
    _add(http, fault="InternalError", rate=1.0)
    for path in ("/harness/v1/clock", "/healthz", "/readyz", "/version", "/api", "/apis", "/api/v1",
                 "/apis/apps/v1", "/openapi/v3", "/"):
        assert http.get(path).status_code == 200, path
    assert http.get(CONFIGMAPS).status_code == 500


@pytest.mark.parametrize(("rule", "says"), [
    ({"fault": "Teapot", "count": 1}, '"fault" must be one of Conflict'),
    ({"fault": "Conflict"}, 'give "rate"'),
    ({"fault": "Conflict", "rate": 1.5}, '"rate" must be a number greater than 0 and at most 1'),
    ({"fault": "Conflict", "count": 0}, '"count" must be an integer >= 1'),
    ({"fault": "Conflict", "count": 1, "verbs": ["lookup"]}, "unknown verbs lookup"),
    ({"fault": "DropWatch", "count": 1, "verbs": ["get"]}, "DropWatch applies only to the verbs watch"),
    ({"fault": "Latency", "count": 1}, '"seconds" (at most 30) is required for Latency'),
    ({"fault": "Latency", "count": 1, "seconds": 60}, '"seconds" must be a number greater than 0 and at most 30'),
    ({"fault": "Conflict", "count": 1, "retryAfterSeconds": 2}, '"retryAfterSeconds" applies only to'),
    ({"fault": "Conflict", "count": 1, "colour": "red"}, "unknown field(s) colour"),
    ([], "body must be a JSON object"),
])
def test_a_bad_rule_is_refused_with_400_saying_why(http: httpx.Client, rule: Any, says: str) -> None:
    answer = http.post(FAULTS, json=rule)
    assert answer.status_code == 400
    assert answer.json()["reason"] == "BadRequest" and says in answer.json()["message"]
    assert http.get(FAULTS).json()["items"] == []


def test_delete_clears_the_rules_and_what_they_injected(http: httpx.Client) -> None:
    _add(http, fault="InternalError", rate=1.0)
    assert http.get(CONFIGMAPS).status_code == 500
    assert http.delete(FAULTS).json() == {"items": [], "injected": []}
    assert http.get(CONFIGMAPS).status_code == 200


# -- rates, in-process clients, chaos --------------------------------------------------------------------------


def _pattern(seed: int) -> list[bool]:
    injector = FaultInjector()
    injector.add({"fault": "InternalError", "rate": 0.3, "seed": seed})
    request = FaultRequest(cluster="management", verb="get", group="", resource="pods")
    return [bool(injector.fire(request)) for _ in range(200)]


def test_a_rate_is_drawn_from_the_rules_seed_so_runs_repeat() -> None:
    first, again, other = _pattern(7), _pattern(7), _pattern(8)
    assert first == again and first != other
    assert 30 <= sum(first) <= 90  # about 30 % of 200


def test_a_rate_with_a_count_fires_at_most_count_times() -> None:
    injector = FaultInjector()
    rule = injector.add({"fault": "Conflict", "rate": 1.0, "count": 2})
    request = FaultRequest(cluster="management", verb="update", group="", resource="pods", name="p")
    assert [bool(injector.fire(request)) for _ in range(4)] == [True, True, False, False]
    assert rule.fired == 2


def test_in_process_clients_of_the_world_see_the_same_error_faults() -> None:
    world = World(simulators=[], controllers=[], crds=False)
    injector_of(world.clusters).add({"fault": "Conflict", "users": [OPERATOR], "verbs": ["update"], "count": 1})
    operator = world.client(user=OPERATOR)
    created = operator.create(_configmap("c"))
    with pytest.raises(StatusError) as caught:
        operator.update(created)
    assert caught.value.code == 409 and caught.value.reason == "Conflict"
    assert operator.update(created)["metadata"]["name"] == "c"
    world.client().update(world.client().get("v1", "ConfigMap", "c", "default"))  # admin: untouched


def test_chaos_rules_fail_reads_and_writes_of_the_named_users_only() -> None:
    injector = FaultInjector()
    for rule in chaos_rules(0.3, users=[OPERATOR]):
        injector.add(rule)
    faults = {kind: 0 for kind in ("Conflict", "TooManyRequests", "InternalError")}
    for i in range(600):
        verb = ("get", "list", "update", "patch")[i % 4]
        for rule in injector.fire(FaultRequest(cluster="management", verb=verb, group="", resource="pods",
                                               name="p", user=OPERATOR)):
            faults[rule.fault] += 1
    assert all(count > 0 for count in faults.values())
    assert 100 <= sum(faults.values()) <= 260  # about 30 % of 600
    admin = FaultRequest(cluster="management", verb="update", group="", resource="pods", name="p", user="admin")
    assert not any(injector.fire(admin) for _ in range(100))


def test_the_command_line_refuses_a_chaos_rate_outside_0_to_1(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(["serve", "--chaos", "1.5"])
    assert exited.value.code == 2
    assert "not a rate" in capsys.readouterr().err


def test_serve_with_chaos_fails_some_api_requests_but_not_the_admin_api(tmp_path: Path) -> None:
    from tests.test_http_fixtures import kubeconfig_ca
    from tests.test_serve_cli import _start, _stop

    proc, base, kubeconfig = _start(["--controllers", "none", "--kubeconfig", str(tmp_path / "kubeconfig"),
                                     "--chaos", "0.6"])
    try:
        with httpx.Client(base_url=base, timeout=10.0, verify=kubeconfig_ca(kubeconfig)) as session:
            codes = [session.get(CONFIGMAPS).status_code for _ in range(40)]
            rules = session.get(FAULTS).json()["items"]
    finally:
        _stop(proc)
    assert set(codes) == {200, 429, 500}
    assert {rule["fault"] for rule in rules} == {"Conflict", "TooManyRequests", "InternalError", "DropWatch",
                                                 "Expired"}
    assert all("system:serviceaccount:kube-system:workload-clusters" in rule["exceptUsers"] for rule in rules)
