"""The reference machine controller: Cluster API v1.10 machine deletion (hooks, drain, volume detach,
Node deletion) on the client interface, and the admission webhooks of the kinds it uses."""

from controllers.machine.controller import MachineController
from controllers.machine.webhooks import ADMISSION_PLUGINS

__all__ = ["ADMISSION_PLUGINS", "MachineController"]
