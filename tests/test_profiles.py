"""harness.targets.profiles: the profile names and the reference controllers owning each."""

from __future__ import annotations

import pytest

from controllers.registry import CONTROLLERS
from harness.targets.profiles import (
    CONTROLLER_PROFILES,
    PROFILES,
    UnknownProfileError,
    check_profiles,
    controllers_besides,
    reference_controllers,
)


def test_every_owned_controller_is_a_reference_controller_and_owned_once() -> None:
    owned = [name for names in CONTROLLER_PROFILES.values() for name in names]
    assert set(owned) <= set(CONTROLLERS)
    assert len(owned) == len(set(owned))
    assert set(CONTROLLER_PROFILES) <= set(PROFILES)


def test_a_profile_switches_off_only_its_own_controllers() -> None:
    assert reference_controllers(["rollout_deployment"]) == ["deployment"]
    rest = controllers_besides(["rollout_deployment", "machine_controller"])
    assert "deployment" not in rest and "machine" not in rest and "statefulset" in rest
    assert reference_controllers(["hic", "apiserver"]) == []


def test_an_unknown_profile_is_named() -> None:
    assert check_profiles(["hic", "hic", "apiserver"]) == ["hic", "apiserver"]
    with pytest.raises(UnknownProfileError, match="unknown profile 'rollouts'.*rollout_deployment"):
        check_profiles(["rollouts"])
