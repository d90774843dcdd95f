"""The Kubernetes vocabulary every layer of the kit shares, the role apimachinery plays upstream.

One module per concept: ``names`` (well-known names per API group), ``errors`` (``Status`` errors),
``validation`` (names, labels, annotations, object metadata), ``selectors`` (label and field
selectors), ``intstr`` (scaled int-or-percent values), ``duration`` (Go durations), ``quantity``
(resource quantities), ``conditions`` and ``ownerrefs``. This package imports nothing else of the
project (import-linter checks it).
"""

from harness.kube import conditions, duration, errors, intstr, names, ownerrefs, quantity, selectors, validation

__all__ = [
    "conditions", "duration", "errors", "intstr", "names", "ownerrefs", "quantity", "selectors", "validation",
]
