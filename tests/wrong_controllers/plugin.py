"""pytest plugin (``-p tests.wrong_controllers.plugin``): applies the wrong variant ``LIFECYCLE_TCK_WRONG``
names (tests/wrong_controllers/catalogue.py) to the reference in this process, before any world starts."""

from __future__ import annotations

from tests.wrong_controllers.catalogue import apply_from_env

apply_from_env()
