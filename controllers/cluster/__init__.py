"""The reference Cluster controller: Cluster API v1.10's Cluster reconciler (phase, conditions, owner
references on the infrastructure cluster and control plane, the deletion cascade and the
BeforeClusterDelete gate for Clusters with a managed topology)."""

from controllers.cluster.controller import ClusterController

__all__ = ["ClusterController"]
