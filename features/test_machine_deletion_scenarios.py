"""The machine deletion features (features/machine_deletion/*.feature), bound to the step definitions."""

from pytest_bdd import scenarios

scenarios("machine_deletion")
