"""What this kit is and what it is faithful to: the one place that says so.

``lifecycle-tck --version``, ``/version`` (harness/apiserver/http/version.py) and the conformance
reports (conformance-results.yaml, JUnit properties, report.html) all read these.
"""

from __future__ import annotations

from importlib import metadata

# KUBERNETES_VERSION: the Kubernetes release whose wire behaviour the fake API server follows (DESIGN.md
# "Fidelity decisions"), defined once in the vocabulary layer.
from harness.kube.names.core import KUBERNETES_VERSION

DISTRIBUTION = "lifecycle-tck"
# The Cluster API release whose behaviour the reference controllers and the suite follow.
CLUSTER_API_VERSION = "v1.10"
# When the kit runs from a checkout that was never installed, it has no recorded version.
UNKNOWN = "0+unknown"


def kit_version() -> str:
    """The installed kit's version (its distribution metadata), or ``0+unknown`` when not installed."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return UNKNOWN


def faithful_to() -> dict[str, str]:
    """The Kubernetes and Cluster API versions the kit follows, as the reports name them."""
    return {"kubernetes": KUBERNETES_VERSION, "clusterAPI": CLUSTER_API_VERSION}


def version_line() -> str:
    """What ``lifecycle-tck --version`` prints."""
    return (f"{DISTRIBUTION} {kit_version()} (Kubernetes {KUBERNETES_VERSION}, "
            f"Cluster API {CLUSTER_API_VERSION})")
