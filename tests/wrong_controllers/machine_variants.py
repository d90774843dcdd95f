"""Deliberately wrong machine controllers: the reference's, each with one plausible bug against one rule of
seed 001. Loaded as a pytest plugin (``-p tests.wrong_controllers.machine_variants``) in a child process;
``LIFECYCLE_TCK_WRONG`` names the variant.

- ``drain-retry-2s``: a drain that is not complete is tried again every 2 s instead of every 20 s.
"""

from __future__ import annotations

import os

from controllers.machine import deletion

VARIANT = os.environ.get("LIFECYCLE_TCK_WRONG", "")

if VARIANT == "drain-retry-2s":
    deletion.DRAIN_RETRY_INTERVAL = 2.0  # type: ignore[misc]
elif VARIANT:
    raise ValueError(f"unknown wrong controller {VARIANT!r}")
