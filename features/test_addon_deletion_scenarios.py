"""The add-on deletion features (features/addon_deletion/*.feature), bound to the step definitions."""

from pytest_bdd import scenarios

scenarios("addon_deletion")
