"""The cluster lifecycle features (features/cluster_lifecycle/*.feature), bound to the step definitions."""

from pytest_bdd import scenarios

scenarios("cluster_lifecycle")
