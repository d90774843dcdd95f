"""The Kubernetes vocabulary every layer of the kit shares, the role apimachinery plays upstream.

One module per concept; this package imports nothing else of the project (import-linter checks it).
"""

from harness.kube import duration, errors, intstr, selectors, validation

__all__ = ["duration", "errors", "intstr", "selectors", "validation"]
