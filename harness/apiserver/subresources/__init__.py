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


# id(rt) → (rt, its subresources): what a resource has follows from its (frozen) fields alone, and every
# request asks. The resource is kept beside the answer, so an id is not reused while its entry lives.
_OF: dict[int, tuple[ResourceType, tuple[Subresource, ...]]] = {}
_OF_MAX = 4096  # resource types come and go with CRDs; past this many, start again


def _of(rt: ResourceType) -> tuple[Subresource, ...]:
    known = _OF.get(id(rt))
    if known is None or known[0] is not rt:
        if len(_OF) >= _OF_MAX:
            _OF.clear()
        known = _OF[id(rt)] = (rt, tuple(sub for sub in SUBRESOURCES if sub.serves(rt)))
    return known[1]


def of(rt: ResourceType) -> list[Subresource]:
    """The subresources ``rt`` has, in discovery order."""
    return list(_of(rt))


def names(rt: ResourceType) -> tuple[str, ...]:
    """The names of the subresources ``rt`` has."""
    return tuple(sub.name for sub in _of(rt))


def lookup(rt: ResourceType, name: str) -> Subresource | None:
    """The subresource ``name`` of ``rt``, or None when ``rt`` has none by that name."""
    for sub in _of(rt):  # (read only: no list of its own, as every in-process eviction asks)
        if sub.name == name:
            return sub
    return None
