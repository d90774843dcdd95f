"""The profiles a target may claim (DESIGN.md "Conformance levels, profiles and traceability") and, for
the profiles a controller implements, the reference controllers that own them: a target claiming a
profile switches those off and runs everything else.

Known here by name only: ``harness.targets`` never imports ``controllers`` (``.importlinter``), and
tests/test_profiles.py checks the names against the reference registry.
"""

from __future__ import annotations

from collections.abc import Iterable

from harness.targets.process import CONTROLLER_USER
from harness.world.world import REFERENCE_CONTROLLERS

PROFILES = (
    "hic", "machine_controller", "cluster_controller", "topology_controller", "runtime_extension",
    "addon_controller", "rollout_deployment", "rollout_statefulset", "rollout_daemonset", "apiserver",
)
# Profile -> the reference controllers implementing it.
CONTROLLER_PROFILES: dict[str, tuple[str, ...]] = {
    "machine_controller": ("machine",),
    "cluster_controller": ("cluster", "machineset", "machinedeployment"),
    "topology_controller": ("extensionconfig", "topology"),
    "addon_controller": ("addons",),
    "rollout_deployment": ("deployment",),
    "rollout_statefulset": ("statefulset",),
    "rollout_daemonset": ("daemonset",),
}
# Who a controller under test is on the wire (``--target controller``), and the machine controller's
# historical name (``--target machine-controller``).
UNDER_TEST_USER = "system:serviceaccount:controller-under-test:controller"
MACHINE_CONTROLLER_USER = "system:serviceaccount:machine-controller-under-test:machine-controller"
# Everyone who may be playing a controller in a scenario other than the in-world reference controllers:
# a fault rule aimed at "the controllers" names them all.
UNDER_TEST_USERS: tuple[str, ...] = (CONTROLLER_USER, UNDER_TEST_USER, MACHINE_CONTROLLER_USER)


class UnknownProfileError(ValueError):
    """A profile name that no target can claim."""


def check_profiles(profiles: Iterable[str], allowed: Iterable[str] = PROFILES) -> list[str]:
    """``profiles`` in order without repeats; UnknownProfileError naming the first unknown one and the
    allowed names."""
    allowed = list(allowed)
    chosen: list[str] = []
    for profile in profiles:
        if profile not in allowed:
            raise UnknownProfileError(f"unknown profile {profile!r}: choose from {', '.join(allowed)}")
        if profile not in chosen:
            chosen.append(profile)
    return chosen


def reference_controllers(profiles: Iterable[str]) -> list[str]:
    """The reference controllers owning ``profiles`` (controller profiles only), in registry order."""
    owned = {name for profile in profiles for name in CONTROLLER_PROFILES.get(profile, ())}
    return [name for name in REFERENCE_CONTROLLERS if name in owned]


def controllers_besides(profiles: Iterable[str]) -> list[str]:
    """Every reference controller except those owning ``profiles``: what runs next to a controller under
    test."""
    owned = set(reference_controllers(profiles))
    return [name for name in REFERENCE_CONTROLLERS if name not in owned]
