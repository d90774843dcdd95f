"""Binds the Runtime Extension scenarios (features/runtime_extension/) to the step definitions."""

from pytest_bdd import scenarios

scenarios("runtime_extension")
