"""What ``/version`` and the health endpoints answer."""

from __future__ import annotations

from typing import Any

from harness.versions import KUBERNETES_VERSION

HEALTH_PATHS = ("/readyz", "/livez", "/healthz")
HEALTHY = "ok"

# kubectl parses gitVersion as semver and warns beyond one minor of skew.
VERSION_INFO: dict[str, Any] = {
    "major": KUBERNETES_VERSION.lstrip("v").split(".")[0],
    "minor": KUBERNETES_VERSION.split(".")[1],
    "gitVersion": KUBERNETES_VERSION,
    "gitCommit": "70d3cc986aa8221cd1dfb1121852688902d3bf53",
    "gitTreeState": "clean",
    "buildDate": "2024-12-11T17:59:15Z",
    "goVersion": "go1.23.3",
    "compiler": "gc",
    "platform": "linux/amd64",
}
