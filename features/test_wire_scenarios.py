"""The wire features (features/wire/*.feature), bound to the step definitions; they run with
``--transport http`` and are deselected in-process."""

from pytest_bdd import scenarios

scenarios("wire")
