"""A DELETE whose grace period is too long for a timestamp: kube-apiserver works the deadline out as
``now.Add(time.Second * time.Duration(grace))``, an int64 count of nanoseconds that wraps past about
292 years, so it stores a deadline within 292 years of now and answers 200. The fake did the sum in
seconds and failed to write a year beyond 9999: a ValueError in-process, a 500 over HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from test_http_fixtures import Served, serving

from harness.apiserver import builtins
from harness.apiserver.server import APIServer
from harness.clock import VirtualClock
from harness.kube.time import parse_rfc3339, seconds_after

NS = "/api/v1/namespaces/default"


def _go_duration_nanos(seconds: int) -> int:
    """time.Second * time.Duration(seconds): the exact product reduced to a signed 64-bit integer."""
    product = seconds * 1_000_000_000
    low = product & (2**64 - 1)
    return low - 2**64 if low >= 2**63 else low


def test_the_deadline_wraps_as_go_durations_do() -> None:
    assert seconds_after(1000.0, 30) == 1030.0
    assert seconds_after(1000.0, 0) == 1000.0
    # The largest grace period that does not wrap, and the first that does.
    limit = (2**63 - 1) // 1_000_000_000
    assert seconds_after(0.0, limit) == limit * 1_000_000_000 / 1_000_000_000
    assert seconds_after(0.0, limit + 1) == _go_duration_nanos(limit + 1) / 1_000_000_000 < 0
    for grace in (10**15, 10**18, 2**63 - 1):
        assert seconds_after(0.0, grace) == _go_duration_nanos(grace) / 1_000_000_000
        assert abs(seconds_after(0.0, grace)) < 2**63 / 1_000_000_000


def _pod(name: str, grace: int | None = None) -> dict:
    spec: dict = {"nodeName": "n1", "containers": [{"name": "c", "image": "i:1"}]}
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


@pytest.mark.parametrize("grace", [10**15, 2**63 - 1])
def test_a_huge_grace_period_is_stored_wrapped_in_process(grace: int) -> None:
    server = APIServer("c", VirtualClock())
    pod = builtins.POD
    server.create(pod, "default", _pod("p"))
    code, body = server.delete(pod, "default", "p", {"gracePeriodSeconds": grace})
    assert code == 200
    meta = body["metadata"]
    assert meta["deletionGracePeriodSeconds"] == grace
    expected = int(server.clock.now() + _go_duration_nanos(grace) / 1_000_000_000)
    assert parse_rfc3339(meta["deletionTimestamp"]) == expected
    # A shorter grace period on a second DELETE moves the first deadline back by the old period and on by
    # the new one, each product wrapped on its own.
    first = parse_rfc3339(meta["deletionTimestamp"])
    code, body = server.delete(pod, "default", "p", {"gracePeriodSeconds": grace - 1})
    assert code == 200
    assert body["metadata"]["deletionGracePeriodSeconds"] == grace - 1
    moved = first + _go_duration_nanos(-grace) / 1_000_000_000 + _go_duration_nanos(grace - 1) / 1_000_000_000
    assert parse_rfc3339(body["metadata"]["deletionTimestamp"]) == int(moved)


def test_a_huge_termination_grace_period_of_the_pod_is_used_the_same_way() -> None:
    server = APIServer("c", VirtualClock())
    pod = builtins.POD
    server.create(pod, "default", _pod("p", grace=10**15))
    code, body = server.delete(pod, "default", "p", {})
    assert code == 200
    assert parse_rfc3339(body["metadata"]["deletionTimestamp"]) == int(
        server.clock.now() + _go_duration_nanos(10**15) / 1_000_000_000)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    yield from serving(tmp_path, simulators=[])


def test_over_http_a_huge_grace_period_is_answered_not_a_500(served: Served) -> None:
    with served.http() as http:
        for name in ("q", "b"):
            response = http.post(f"{NS}/pods", json=_pod(name))
            assert response.status_code == 201, response.text
        by_query = http.delete(f"{NS}/pods/q", params={"gracePeriodSeconds": str(10**15)})
        by_body = http.request("DELETE", f"{NS}/pods/b",
                               json={"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 10**15})
        for response in (by_query, by_body):
            assert response.status_code == 200, response.text
            assert response.json()["metadata"]["deletionGracePeriodSeconds"] == 10**15
        beyond = http.delete(f"{NS}/pods/q", params={"gracePeriodSeconds": str(2**64)})
        assert beyond.status_code == 400, beyond.text
        assert beyond.json()["kind"] == "Status"
