"""Sentences about the world's simulators: switching one off leaves its work undone (its events wait)."""

from __future__ import annotations

from pytest_bdd import given, when

from features.steps.context import ScenarioContext, sentence

# The names sentences give the world's simulators (harness/world/world.py SIMULATORS).
SIMULATORS = {
    "disruption controller": "disruption",
    "kubelet": "kubelet",
    "scheduler": "scheduler",
    "namespace controller": "namespace",
    "garbage collector": "garbage-collector",
    "ReplicaSet controller": "replicaset",
    "CSI attacher": "csi-attacher",
}


@given(sentence("the {simulator} is switched off"))
def given_switched_off(ctx: ScenarioContext, simulator: str) -> None:
    assert simulator in SIMULATORS, f"the world's simulators are {sorted(SIMULATORS)}, not {simulator!r}"
    ctx.scene.set_enabled(SIMULATORS[simulator], False)


@when(sentence("the {simulator} is switched on again"))
def when_switched_on(ctx: ScenarioContext, simulator: str) -> None:
    assert simulator in SIMULATORS, f"the world's simulators are {sorted(SIMULATORS)}, not {simulator!r}"
    ctx.act(lambda: ctx.scene.set_enabled(SIMULATORS[simulator], True))
