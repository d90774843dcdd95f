"""The rollout hook features (features/rollout_hooks/*.feature), bound to the step definitions."""

from pytest_bdd import scenarios

scenarios("rollout_hooks")
