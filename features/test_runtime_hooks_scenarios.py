"""The runtime hooks features (features/runtime_hooks/*.feature), bound to the step definitions."""

from pytest_bdd import scenarios

scenarios("runtime_hooks")
