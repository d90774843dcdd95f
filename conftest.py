"""Options shared by the test suite and the conformance suite: features/options.py (a module of the
installed kit too, where there is no root conftest)."""

pytest_plugins = ["features.options"]
