"""Admission of spec.lifecycleHooks and the Deployment strategy (controllers/rollout/webhooks.py), through the
API server the world composes."""

from __future__ import annotations

from typing import Any

import pytest

from harness.client import ApiError
from harness.world.world import World


def _deployment(hooks: list[dict[str, Any]] | None = None, replicas: int = 3, **strategy: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}},
                     "spec": {"containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10"}]}},
    }
    if strategy:
        spec["strategy"] = {"type": "RollingUpdate", "rollingUpdate": strategy}
    if hooks is not None:
        spec["lifecycleHooks"] = hooks
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
            "spec": spec}


def _hook(name: str = "check", point: Any = "50%") -> dict[str, Any]:
    return {"name": name, "trigger": {"progressAvailableParams": {"progressPoint": point}},
            "jobSpec": {"template": {"spec": {"restartPolicy": "Never",
                                              "containers": [{"name": "c", "image": "busybox"}]}}}}


@pytest.fixture
def world() -> World:
    return World(controllers=[])


def test_hooks_are_stored_with_their_defaults(world: World) -> None:
    created = world.client().create(_deployment([_hook()]))
    hook = created["spec"]["lifecycleHooks"][0]
    assert (hook["failurePolicy"], hook["retainPolicy"], hook["trigger"]["type"]) == ("Abort", "Always",
                                                                                     "ProgressAvailable")


def test_hooks_survive_merge_patch_and_apply(world: World) -> None:
    client = world.client()
    client.create(_deployment([_hook()]))
    patched = client.patch("apps/v1", "Deployment", "web", {"spec": {"replicas": 4}}, namespace="default")
    assert patched["spec"]["lifecycleHooks"][0]["name"] == "check"
    applied = client.patch("apps/v1", "Deployment", "web", _deployment([_hook("other", 1)], replicas=4),
                           namespace="default", patch_type="application/apply-patch+yaml", field_manager="test",
                           force=True)
    assert [h["name"] for h in applied["spec"]["lifecycleHooks"]] == ["other"]


def test_a_duplicate_hook_name_is_refused_with_its_field_path(world: World) -> None:
    with pytest.raises(ApiError) as refused:
        world.client().create(_deployment([_hook(), _hook()]))
    assert refused.value.code == 422
    assert refused.value.details["causes"] == [{"reason": "FieldValueDuplicate", "message": 'Duplicate value: "check"',
                                                "field": "spec.lifecycleHooks[1].name"}]


def test_scaling_below_an_existing_point_is_not_refused(world: World) -> None:
    client = world.client()
    client.create(_deployment([_hook(point=3)]))
    scaled = client.patch("apps/v1", "Deployment", "web", {"spec": {"replicas": 1}}, namespace="default")
    assert scaled["spec"]["replicas"] == 1


def test_max_surge_and_max_unavailable_may_not_both_be_zero(world: World) -> None:
    with pytest.raises(ApiError) as refused:
        world.client().create(_deployment(maxSurge=0, maxUnavailable=0))
    assert refused.value.message == ('Deployment.apps "web" is invalid: spec.strategy.rollingUpdate.maxUnavailable: '
                                     "Invalid value: 0: may not be 0 when `maxSurge` is 0")
    assert world.client().create(_deployment(maxSurge=0, maxUnavailable="10%"))["metadata"]["name"] == "web"
