"""ClusterSet.kubeconfig's text is remembered per content (names, server URLs, current context, token,
CA): the same text as building and dumping the config each time (the former code, kept here as the
oracle), for every combination, and a change of where or how the clusters are served is seen at once."""

from __future__ import annotations

import base64
import itertools

import yaml

from harness.apiserver.clusters import ClusterSet
from harness.clock import VirtualClock


def _built(clusters: ClusterSet, names: list[str], current: str) -> str:
    user: dict[str, object] = {"token": clusters.token} if clusters.token else {"username": "admin"}

    def entry(name: str) -> dict[str, str]:
        out = {"server": clusters.url(name)}
        if clusters.ca_pem:
            out["certificate-authority-data"] = base64.b64encode(clusters.ca_pem).decode()
        return out

    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": n, "cluster": entry(n)} for n in names],
        "users": [{"name": "lifecycle-tck", "user": user}],
        "contexts": [{"name": n, "context": {"cluster": n, "user": "lifecycle-tck"}} for n in names],
        "current-context": current if current in names else names[0],
    }
    return yaml.safe_dump(config, sort_keys=False)


def test_the_same_text_as_dumping_each_time() -> None:
    clusters = ClusterSet(VirtualClock(0.0))
    clusters.add("default/w1")
    clusters.add("ns/w2")
    settings = itertools.product(
        [None, "https://127.0.0.1:6443", "http://localhost:1/"], [None, "t0ken"], [None, b"-----PEM-----"],
    )
    for base_url, token, ca_pem in settings:
        if base_url is not None:
            clusters.base_url = base_url
        clusters.token, clusters.ca_pem = token, ca_pem
        for names, current in [(["default/w1"], "default/w1"), (["ns/w2", "management"], "management"),
                               (["default/w1", "ns/w2"], "elsewhere")]:
            for _ in range(2):
                assert clusters.kubeconfig(names, current=current) == _built(clusters, names, current)
        every = clusters.names()
        assert clusters.kubeconfig() == _built(clusters, every, "management")


def test_two_cluster_sets_served_differently_get_their_own_text() -> None:
    first, second = ClusterSet(VirtualClock(0.0)), ClusterSet(VirtualClock(0.0))
    first.base_url, second.base_url = "https://a:1", "https://b:2"
    second.token = "secret"
    assert "https://a:1" in first.kubeconfig() and "secret" not in first.kubeconfig()
    assert "https://b:2" in second.kubeconfig() and "secret" in second.kubeconfig()
