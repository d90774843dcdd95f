"""The reference add-on controller (Sveltos ClusterProfiles, seed 003's clusterDeletionBehavior)."""
