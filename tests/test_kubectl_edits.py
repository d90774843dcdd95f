"""kubectl edits test_http_kubectl does not cover: labels and annotations removed and overwritten,
and ``apply`` updating a custom resource (a JSON merge patch: CRDs take no strategic merge)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from test_http_fixtures import Served, serving

from tests.manifests import demo_pod, example_crd

POD = demo_pod()
CRD = example_crd("Gadget", {"size": {"type": "integer"}, "colours": {"type": "array", "items": {"type": "string"}},
                            "owner": {"type": "string"}})
GADGET = """\
apiVersion: example.com/v1
kind: Gadget
metadata: {name: g1, namespace: default, labels: {tier: one}}
spec: {size: 1, colours: [red, green], owner: alice}
"""


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    yield from serving(tmp_path, simulators=[])


def test_labels_are_added_refused_without_overwrite_overwritten_and_removed(served: Served) -> None:
    served.kubectl("apply", "-f", "-", stdin=POD)
    served.kubectl("label", "pod", "p1", "tier=web")
    refused = served.kubectl("label", "pod", "p1", "tier=db", check=False)
    assert refused.returncode != 0 and "'tier' already has a value (web)" in refused.stderr
    served.kubectl("label", "pod", "p1", "tier=db", "--overwrite")
    assert served.kubectl_json("get", "pod", "p1")["metadata"]["labels"] == {"app": "demo", "tier": "db"}
    assert "pod/p1 unlabeled" in served.kubectl("label", "pod", "p1", "tier-").stdout
    assert served.kubectl_json("get", "pod", "p1")["metadata"]["labels"] == {"app": "demo"}


def test_annotations_are_added_and_removed(served: Served) -> None:
    served.kubectl("apply", "-f", "-", stdin=POD)
    served.kubectl("annotate", "pod", "p1", "example.com/note=hello", "example.com/other=x")
    served.kubectl("annotate", "pod", "p1", "example.com/note-")
    annotations = served.kubectl_json("get", "pod", "p1")["metadata"]["annotations"]
    assert annotations["example.com/other"] == "x"
    assert "example.com/note" not in annotations


def test_apply_updates_a_custom_resource_and_removes_what_the_manifest_dropped(served: Served) -> None:
    served.kubectl("apply", "-f", "-", stdin=CRD)
    served.kubectl("wait", "--for", "condition=established", "crd/gadgets.example.com", "--timeout=10s")
    assert "gadget.example.com/g1 created" in served.kubectl("apply", "-f", "-", stdin=GADGET).stdout
    changed = GADGET.replace("size: 1, colours: [red, green], owner: alice", "size: 2, colours: [blue]")
    assert "gadget.example.com/g1 configured" in served.kubectl("apply", "-f", "-", stdin=changed).stdout
    gadget = yaml.safe_load(served.kubectl("get", "gadget", "g1", "-o", "yaml").stdout)
    # A merge patch replaces lists whole, and apply deletes the field it last applied and no longer has.
    assert gadget["spec"] == {"size": 2, "colours": ["blue"]}
    assert gadget["metadata"]["generation"] == 2
    assert "gadget.example.com/g1 unchanged" in served.kubectl("apply", "-f", "-", stdin=changed).stdout
