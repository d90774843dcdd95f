"""Reading a profile's manifests: a missing reference and a manifest that does not parse are reported
with upstream's texts and deploy nothing; documents are split on ``---`` lines."""

from __future__ import annotations

from typing import Any

import pytest

from controllers.addons import deployer
from harness.client import Client
from harness.world.world import World

GOOD = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: default\n"
BROKEN = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: broken\n"


@pytest.fixture
def client() -> Client:
    return World(simulators=[], controllers=[]).client()


def _holder(client: Client, name: str, data: dict[str, str]) -> None:
    client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"},
                   "data": data})


def _refs(*names: str) -> list[dict[str, Any]]:
    return [{"kind": "ConfigMap", "namespace": "default", "name": n} for n in names]


def test_a_missing_reference_is_reported_with_upstreams_text(client: Client) -> None:
    with pytest.raises(deployer.ReferenceNotFound) as caught:
        deployer.read_manifests(client, _refs("absent"), "default")
    assert str(caught.value) == "Referenced resource: ConfigMap default/absent does not exist"


def test_documents_are_split_on_separator_lines_and_empty_ones_skipped(client: Client) -> None:
    _holder(client, "m", {"a.yaml": GOOD.format(name="one") + "---\n\n---\n" + GOOD.format(name="two")})
    names = [m.obj["metadata"]["name"] for m in deployer.read_manifests(client, _refs("m"), "default")]
    assert names == ["one", "two"]


def test_a_document_that_does_not_parse_names_itself_and_nothing_is_returned(client: Client) -> None:
    _holder(client, "m", {"a.yaml": GOOD.format(name="one"), "b.yaml": BROKEN})
    with pytest.raises(deployer.DeployError) as caught:
        deployer.read_manifests(client, _refs("m"), "default")
    assert not isinstance(caught.value, deployer.ReferenceNotFound)
    assert str(caught.value).startswith("failed to get policy from Data apiVersion: v1\nkind: ConfigMap\n"
                                        "metadata: {name: broken: ")


def test_a_bad_second_reference_fails_the_whole_profile(client: Client) -> None:
    _holder(client, "good", {"a.yaml": GOOD.format(name="one")})
    _holder(client, "bad", {"a.yaml": "kind: ConfigMap\n"})
    with pytest.raises(deployer.DeployError) as caught:
        deployer.read_manifests(client, _refs("good", "bad"), "default")
    assert "a manifest must be an object with apiVersion, kind and metadata.name" in str(caught.value)


def test_a_long_document_is_cut_at_100_characters_in_the_message(client: Client) -> None:
    long_broken = "apiVersion: v1\nkind: ConfigMap\n" + "# padding\n" * 20 + "metadata: {name: x\n"
    _holder(client, "m", {"a.yaml": long_broken})
    with pytest.raises(deployer.DeployError) as caught:
        deployer.read_manifests(client, _refs("m"), "default")
    assert str(caught.value).startswith("failed to get policy from Data " + long_broken.strip()[:100] + ": ")
