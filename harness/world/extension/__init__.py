"""A reference Runtime Extension: discovery and the six lifecycle hooks of seed 002 over HTTPS, with
answers scripted through ConfigMaps (as Cluster API's test extension) or its admin endpoint, and every
call recorded. See :mod:`harness.world.extension.server` (start and stop it),
:mod:`harness.world.extension.app` (the HTTP API) and :mod:`harness.world.extension.responses` (what it
answers)."""

from harness.world.extension.responses import HookResponder
from harness.world.extension.server import ExtensionServer

__all__ = ["ExtensionServer", "HookResponder"]
