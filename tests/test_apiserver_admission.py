"""Admission plugins run on the writes of their group and kind (``*``: every kind of the group), in the
order they were added, including plugins added after writes of that kind were already admitted."""

from __future__ import annotations

from typing import Any

import pytest

from harness.apiserver import builtins
from harness.apiserver.resources import ResourceType
from harness.apiserver.server import APIServer
from harness.clock import VirtualClock
from harness.kube.errors import FieldError, StatusError, invalid


def _pod(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "i"}]}}


def test_a_plugin_added_after_writes_of_its_kind_runs_on_the_next_ones_in_order() -> None:
    server = APIServer("c", VirtualClock())
    seen: list[str] = []
    server.create(builtins.POD, "default", _pod("before"))

    def first(operation: str, rt: ResourceType, new: Any, old: Any) -> list[FieldError]:
        seen.append(f"first {operation} {rt.kind}")
        return []

    def refuse(operation: str, rt: ResourceType, new: Any, old: Any) -> list[FieldError]:
        seen.append(f"refuse {operation} {rt.kind}")
        return [invalid("metadata.name", (new or {}).get("metadata", {}).get("name"), "refused")]

    server.add_admission("", "*", first)
    server.create(builtins.POD, "default", _pod("a"))
    server.create(builtins.CONFIG_MAP, "default", {"metadata": {"name": "cm"}})
    assert seen == ["first CREATE Pod", "first CREATE ConfigMap"]
    server.add_admission("", "Pod", refuse)
    with pytest.raises(StatusError) as caught:
        server.create(builtins.POD, "default", _pod("b"))
    assert caught.value.code == 422
    assert seen[2:] == ["first CREATE Pod", "refuse CREATE Pod"]
    server.create(builtins.CONFIG_MAP, "default", {"metadata": {"name": "cm2"}})
    assert seen[4:] == ["first CREATE ConfigMap"]
    server.add_admission("apps", "*", refuse)
    server.create(builtins.CONFIG_MAP, "default", {"metadata": {"name": "cm3"}})
    assert seen[5:] == ["first CREATE ConfigMap"]
