"""The reference MachineSet and MachineDeployment controllers (Cluster API v1.10): Machines from a
template, scale-down by delete policy, rolling and on-delete rollouts; and their admission webhooks."""

from controllers.machineset.machinedeployment import MachineDeploymentController
from controllers.machineset.machineset import MachineSetController
from controllers.machineset.webhooks import ADMISSION_PLUGINS

__all__ = ["ADMISSION_PLUGINS", "MachineDeploymentController", "MachineSetController"]
