"""The subresource table (harness/apiserver/subresources/): one entry per subresource, consulted by the
HTTP routes, discovery and the in-process client alike."""

from __future__ import annotations

import pytest

from harness.apiserver import builtins, subresources
from harness.apiserver.server import APIServer
from harness.apiserver.subresources import SubresourceRequest
from harness.apiserver.subresources.base import VERB_METHODS
from harness.client import InProcessClient
from harness.clock import VirtualClock
from harness.kube.errors import StatusError
from harness.world.world import World


def test_each_subresource_has_one_entry_with_its_verbs() -> None:
    names = [sub.name for sub in subresources.SUBRESOURCES]
    assert len(names) == len(set(names))
    for sub in subresources.SUBRESOURCES:
        assert sub.verbs and set(sub.verbs) <= set(VERB_METHODS), sub.name
        assert sub.methods == tuple(VERB_METHODS[v] for v in sub.verbs)


def test_which_resources_have_which_subresources() -> None:
    assert subresources.names(builtins.POD) == (
        "status", "eviction", "binding", "log", "exec", "attach", "portforward",
    )
    assert subresources.names(builtins.NAMESPACE) == ("status", "finalize")
    assert subresources.names(builtins.DEPLOYMENT) == ("status", "scale")
    assert subresources.names(builtins.CONFIG_MAP) == ()
    assert subresources.lookup(builtins.CONFIG_MAP, "status") is None
    assert subresources.lookup(builtins.POD, "scale") is None


def test_a_verb_a_subresource_does_not_take_is_405() -> None:
    server = APIServer("c", VirtualClock())
    request = SubresourceRequest(server, builtins.NAMESPACE, None, "default")
    finalize = subresources.lookup(builtins.NAMESPACE, "finalize")
    assert finalize is not None
    with pytest.raises(StatusError) as refused:
        finalize.get(request)
    assert refused.value.code == 405


def test_the_in_process_client_discovers_the_same_subresources() -> None:
    world = World()
    client = InProcessClient(world.clusters, world.management.name)
    pods = next(r for r in client.discover() if r["apiVersion"] == "v1" and r["kind"] == "Pod")
    assert pods["subresources"] == list(subresources.names(builtins.POD))


def test_the_in_process_client_reaches_scale_through_the_table_as_http_does() -> None:
    world = World()
    client = InProcessClient(world.clusters, world.management.name)
    client.create({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "default"},
                   "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "d"}},
                            "template": {"metadata": {"labels": {"app": "d"}},
                                         "spec": {"containers": [{"name": "c", "image": "i"}]}}}})
    scale = client.patch("apps/v1", "Deployment", "d", {"spec": {"replicas": 3}}, namespace="default",
                         subresource="scale")
    assert (scale["kind"], scale["spec"]["replicas"]) == ("Scale", 3)
    assert client.get("apps/v1", "Deployment", "d", "default")["spec"]["replicas"] == 3
