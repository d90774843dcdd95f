"""Reference rollout controllers (Deployment, StatefulSet, DaemonSet) with the lifecycle hooks of seed 004."""
