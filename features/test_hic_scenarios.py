"""Binds the hook implementing controller scenarios (features/hic/) to the step definitions."""

from pytest_bdd import scenarios

scenarios("hic")
