"""Kept for older command lines: the same as ``-p tests.wrong_controllers.plugin`` (every variant of
tests/wrong_controllers/catalogue.py, named by ``LIFECYCLE_TCK_WRONG``)."""

from __future__ import annotations

from tests.wrong_controllers.catalogue import apply_from_env

apply_from_env()
