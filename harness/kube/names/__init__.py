"""Well-known names per API group: API versions, kinds, labels, annotations, condition types,
reasons, messages and finalizers that Kubernetes, Cluster API and the kit define, each once."""

from harness.kube.names import (
    apiextensions,
    apps,
    batch,
    capi,
    core,
    events,
    faults,
    knobs,
    meta,
    policy,
    rollout_hooks,
    runtime_sdk,
    storage,
    sveltos,
    topology,
)

__all__ = [
    "apiextensions",
    "apps",
    "batch",
    "capi",
    "core",
    "events",
    "faults",
    "knobs",
    "meta",
    "policy",
    "rollout_hooks",
    "runtime_sdk",
    "storage",
    "sveltos",
    "topology",
]
