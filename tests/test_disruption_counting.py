"""A budget's sync reads the names of its selected pods rather than a list of its pods sorted by name: the
healthy count, the disrupted pods kept, the recheck time and the NotDeleted events (their order too)
are those of the sorted walk it replaced (tests/disruption_reference.py, the oracle), for random pods,
readiness, deletions, cached health and disruptedPods stamps (recent, expired, unreadable, of pods
that are gone or never were selected)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from harness.clock import rfc3339
from harness.world import disruption
from tests import disruption_reference as reference

NOW = 1_000_000.0


class _Events:
    """The part of an EventRecorder a sync's disrupted-pod walk uses: what it was told, in order."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    def event(self, obj: dict[str, Any], _type: str, reason: str, _message: str) -> None:
        self.seen.append((obj["metadata"]["name"], reason))


def _pod(rng: random.Random, name: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "ns"}
    if rng.random() < 0.2:
        meta["deletionTimestamp"] = rfc3339(NOW - rng.choice([1, 500]))
    status: dict[str, Any] = {}
    if rng.random() < 0.9:
        status["conditions"] = [{"type": "Ready", "status": rng.choice(["True", "True", "False"])}]
    return {"metadata": meta, "status": status}


def _stamp(rng: random.Random) -> Any:
    return rng.choice([rfc3339(NOW - 10), rfc3339(NOW - 119.5), rfc3339(NOW - 300), rfc3339(NOW + 5), "yesterday",
                       None])


def _case(rng: random.Random) -> tuple[set[str], dict[str, dict[str, Any]], dict[str, tuple[bool, bool]],
                                       dict[str, Any]]:
    universe = [f"web-{i}" for i in range(rng.randrange(0, 40))]
    cached = {name: _pod(rng, name) for name in universe if rng.random() < 0.9}
    members = {name for name in universe if rng.random() < 0.8}
    health: dict[str, tuple[bool, bool]] = {}
    for name, pod in cached.items():
        if rng.random() < 0.9:  # as the controller takes it from the pod; now and then missing or stale
            health[name] = (bool(pod["metadata"].get("deletionTimestamp")), disruption.is_pod_ready(pod))
            if rng.random() < 0.05:
                health[name] = (rng.random() < 0.5, rng.random() < 0.5)
    candidates = universe + ["gone-0", "gone-1"]
    recorded = {name: _stamp(rng) for name in rng.sample(candidates, rng.randrange(0, min(8, len(candidates))))}
    pdb = {"metadata": {"name": "budget", "namespace": "ns"}, "status": {"disruptedPods": recorded}}
    return members, cached, health, pdb


@pytest.mark.parametrize("seed", range(4))
def test_a_sync_counts_and_keeps_what_the_sorted_walk_did(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(300):
        members, cached, health, pdb = _case(rng)
        pods = reference.sorted_pods(members, cached)
        want_events: list[tuple[str, str]] = []
        want_kept, want_recheck = reference.build_disrupted_pods(pods, pdb, NOW, want_events)

        names = [name for name in members if name in cached]
        rng.shuffle(names)
        controller = disruption.DisruptionController.__new__(disruption.DisruptionController)
        controller.recorder = _Events()  # type: ignore[assignment]
        kept, recheck = controller._build_disrupted_pods(names, cached, pdb, NOW)
        assert (kept, recheck) == (want_kept, want_recheck)
        assert list(kept) == list(want_kept)
        assert controller.recorder.seen == want_events  # type: ignore[attr-defined]

        for disrupted in (kept, pdb["status"]["disruptedPods"], {}):
            for known in (health, {}):
                want = reference.count_healthy(pods, disrupted, NOW, known)
                assert disruption._count_healthy(names, cached, disrupted, NOW, known) == want
