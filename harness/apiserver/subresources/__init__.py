"""Subresources as objects: one module per subresource, each a :class:`Subresource`, all in one table.

Upstream kube-apiserver gives every subresource a REST storage of its own (``pods/eviction`` is
``EvictionREST``, ``deployments/scale`` is ``ScaleREST``) and installs whichever interfaces it
implements as verbs. Here each subresource is one object (protocol in :mod:`.base`) declaring the
same facts once:

* ``name`` and the Kubernetes ``verbs`` it takes (the HTTP methods follow from them);
* ``serves(rt)``: which resources have it;
* ``response_kind(rt)``: the kind its requests and answers carry (discovery's ``responseKind``);
* ``get`` / ``update`` / ``patch`` / ``create`` for the verbs it takes.

:data:`SUBRESOURCES` is the one table the HTTP routes, discovery and the in-process client consult:
adding a subresource is one module and one line there. The subresources a kubelet answers
(``log``, ``exec``, ``attach``, ``portforward``) are declared in :mod:`.streams` with
``streaming = True``; their answers are HTTP streams, written by the facade
(``harness/apiserver/http/streaming.py``).
"""

from __future__ import annotations

from harness.apiserver.resources import ResourceType
from harness.apiserver.subresources import binding, eviction, finalize, scale, status, streams
from harness.apiserver.subresources.base import Subresource, SubresourceRequest

__all__ = ["SUBRESOURCES", "Subresource", "SubresourceRequest", "lookup", "names", "of"]

# Discovery lists a resource's subresources in this order.
SUBRESOURCES: tuple[Subresource, ...] = (
    status.STATUS,
    scale.SCALE,
    status.APPROVAL,
    eviction.EVICTION,
    binding.BINDING,
    finalize.FINALIZE,
    streams.LOG,
    streams.EXEC,
    streams.ATTACH,
    streams.PORTFORWARD,
)


def of(rt: ResourceType) -> list[Subresource]:
    """The subresources ``rt`` has, in discovery order."""
    return [sub for sub in SUBRESOURCES if sub.serves(rt)]


def names(rt: ResourceType) -> tuple[str, ...]:
    """The names of the subresources ``rt`` has."""
    return tuple(sub.name for sub in of(rt))


def lookup(rt: ResourceType, name: str) -> Subresource | None:
    """The subresource ``name`` of ``rt``, or None when ``rt`` has none by that name."""
    for sub in SUBRESOURCES:
        if sub.name == name and sub.serves(rt):
            return sub
    return None
