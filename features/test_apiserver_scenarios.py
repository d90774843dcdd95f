"""The API server features (features/apiserver/*.feature), bound to the step definitions."""

from pytest_bdd import scenarios

scenarios("apiserver")
