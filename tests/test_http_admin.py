"""The admin API: the clock and the audit trail."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from test_http_fixtures import Served, serving

from harness.clock import EPOCH


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    yield from serving(tmp_path, simulators=["namespace"])


def test_clock_reports_virtual_time(served: Served) -> None:
    with served.http() as http:
        clock = http.get("/harness/v1/clock").json()
    assert clock["now"] == "2026-01-01T00:00:00Z" and clock["unix"] == EPOCH
    assert clock["followsWallTime"] is False
    assert clock["nextDue"] is not None and clock["nextDue"] > EPOCH  # the world's bookmark timer at least


def test_advancing_the_clock_moves_time_and_ages(served: Served) -> None:
    with served.http() as http:
        http.post("/api/v1/namespaces/default/configmaps", json={"metadata": {"name": "c"}}).raise_for_status()
        advanced = http.post("/harness/v1/clock/advance", json={"seconds": 90})
        table = http.get(
            "/api/v1/namespaces", headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
        ).json()
    assert advanced.status_code == 200
    assert advanced.json()["now"] == "2026-01-01T00:01:30Z" and advanced.json()["unix"] == EPOCH + 90
    assert table["rows"][0]["cells"][2] == "90s"


def test_advancing_to_a_time_moves_the_clock_there(served: Served) -> None:
    with served.http() as http:
        advanced = http.post("/harness/v1/clock/advance", json={"to": EPOCH + 45.5}).json()
        backwards = http.post("/harness/v1/clock/advance", json={"to": EPOCH})
        clock = http.get("/harness/v1/clock").json()
    assert advanced["unix"] == EPOCH + 45.5
    # Virtual time never goes back: a "to" already passed moves nothing, and the answer says where it is.
    assert backwards.status_code == 200 and backwards.json()["unix"] == EPOCH + 45.5
    assert clock["unix"] == EPOCH + 45.5


def test_advancing_with_stop_after_write_stops_at_the_first_instant_something_was_written(tmp_path: Path) -> None:
    pod = {"metadata": {"name": "p"}, "spec": {"nodeName": "n1", "terminationGracePeriodSeconds": 45,
                                                 "containers": [{"name": "app", "image": "nginx:1.27"}]}}
    for served in serving(tmp_path, simulators=["kubelet"]):
        with served.http() as http:
            http.post("/api/v1/nodes", json={"metadata": {"name": "n1"}}).raise_for_status()
            http.post("/api/v1/namespaces/default/pods", json=pod).raise_for_status()
            start = http.post("/harness/v1/clock/advance", json={"seconds": 0}).json()["unix"]
            http.delete("/api/v1/namespaces/default/pods/p").raise_for_status()
            # The kubelet removes the Pod when its grace period ends: the first write after now.
            first = http.post("/harness/v1/clock/advance", json={"seconds": 600, "stopAfterWrite": True}).json()
            gone = http.get("/api/v1/namespaces/default/pods/p").status_code
            rest = http.post("/harness/v1/clock/advance", json={"to": start + 600, "stopAfterWrite": True}).json()
    assert first["unix"] == start + 45 and gone == 404
    assert rest["unix"] == start + 600  # nothing else was written: the whole way


@pytest.mark.parametrize("body", [{"seconds": -1}, {"seconds": "5"}, {"seconds": True}, {}, [1],
                                  {"seconds": 1, "to": EPOCH + 1}, {"to": "tomorrow"},
                                  {"seconds": 1, "stopAfterWrite": "yes"}], ids=str)
def test_advancing_by_anything_but_a_non_negative_number_is_400(served: Served, body: object) -> None:
    with served.http() as http:
        response = http.post("/harness/v1/clock/advance", json=body)
        clock = http.get("/harness/v1/clock").json()
    assert response.status_code == 400 and response.json()["reason"] == "BadRequest"
    assert clock["unix"] == EPOCH


def test_audit_lists_writes_with_user_and_diff_and_filters(served: Served) -> None:
    with served.http(headers={"Authorization": "Bearer alice"}) as http:
        since = len(http.get("/harness/v1/audit").json()["items"])
        http.post("/api/v1/namespaces/default/configmaps", json={"metadata": {"name": "c"}}).raise_for_status()
        http.post("/api/v1/namespaces/default/secrets", json={"metadata": {"name": "s"}}).raise_for_status()
        everything = http.get("/harness/v1/audit", params={"since": since}).json()["items"]
        configmaps = http.get("/harness/v1/audit", params={"since": since, "resource": "configmaps"}).json()["items"]
        other_cluster = http.get("/harness/v1/audit", params={"cluster": "ns/none"}).json()["items"]
        bad = http.get("/harness/v1/audit", params={"since": "-2"})
    assert [(r["verb"], r["resource"], r["name"], r["user"]) for r in everything] == [
        ("create", "configmaps", "c", "alice"), ("create", "secrets", "s", "alice"),
    ]
    assert [r["name"] for r in configmaps] == ["c"]
    assert "diff" in configmaps[0] and configmaps[0]["cluster"] == "management"
    assert other_cluster == []
    assert bad.status_code == 400


def test_unknown_admin_path_and_wrong_method_are_statuses(served: Served) -> None:
    with served.http() as http:
        missing = http.get("/harness/v1/nothing")
        wrong = http.delete("/harness/v1/clock")
    assert missing.status_code == 404 and missing.json()["kind"] == "Status"
    assert wrong.status_code == 405 and wrong.json()["reason"] == "MethodNotAllowed"


def test_impersonation_names_the_audited_user(served: Served) -> None:
    with served.http(headers={"Impersonate-User": "system:serviceaccount:kube-system:bob"}) as http:
        since = len(http.get("/harness/v1/audit").json()["items"])
        http.post("/api/v1/namespaces/default/configmaps", json={"metadata": {"name": "c"}}).raise_for_status()
        [record] = http.get("/harness/v1/audit", params={"since": since, "diff": "false"}).json()["items"]
    assert record["user"] == "system:serviceaccount:kube-system:bob"
    assert "diff" not in record
