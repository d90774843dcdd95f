"""The topology controller for Clusters with a managed topology (``spec.topology``, from a ClusterClass):
it creates and upgrades the infrastructure cluster, control plane and MachineDeployments, and calls the
Runtime SDK lifecycle hooks of seed 002 on the way."""
