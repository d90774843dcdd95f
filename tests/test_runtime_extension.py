"""The reference Runtime Extension itself: stopping and starting it again, what it records of a call, and
how it tells which ConfigMaps it answers from."""

from __future__ import annotations

import base64

import pytest

from controllers.runtime import transport
from harness.kube.names.runtime_sdk import DISCOVERY, HOOKS_API_VERSION, hook_path
from harness.world.extension import ExtensionServer, HookResponder
from harness.world.world import World

CONFIGMAP = "c1-ext-test-extension-hookresponses"


def _endpoint(server: ExtensionServer) -> transport.Endpoint:
    return transport.resolve(World().client(), {"url": server.url, "caBundle": server.ca_bundle})


def test_an_interrupted_extension_refuses_connections_then_serves_the_same_url_and_ca_again() -> None:
    server = ExtensionServer(HookResponder()).start()
    try:
        url, ca = server.url, server.ca_bundle
        endpoint = _endpoint(server)
        server.interrupt()
        with pytest.raises(transport.TransportError, match="connection refused"):
            transport.post(endpoint, hook_path(DISCOVERY), {}, 1)
        server.start()
        assert (server.url, server.ca_bundle) == (url, ca)
        code, _, _ = transport.post(endpoint, hook_path(DISCOVERY), {"apiVersion": HOOKS_API_VERSION}, 1)
        assert code == 200
    finally:
        server.stop()


def test_a_call_records_the_timeout_its_query_asked_for_and_discovery_is_listed_apart() -> None:
    responder = HookResponder()
    with ExtensionServer(responder) as server:
        endpoint = _endpoint(server)
        transport.post(endpoint, hook_path(DISCOVERY), {}, 10)
        transport.post(endpoint, hook_path("BeforeClusterCreate", "before-cluster-create"), {"cluster": {}}, 3)
    assert [(c.hook, c.timeout) for c in responder.calls_of(DISCOVERY)] == [("Discovery", "10s")]
    assert [(c.hook, c.timeout) for c in responder.calls_of()] == [("BeforeClusterCreate", "3s")]


def test_sync_reports_a_configmap_only_when_its_preloaded_answers_change() -> None:
    world = World()
    client = world.client()
    responder = HookResponder()
    client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": CONFIGMAP, "namespace": "default"},
                   "data": {"BeforeClusterCreate-preloadedResponse": '{"Status": "Success"}'}})
    assert responder.sync(client) == [("default", CONFIGMAP)]
    client.patch("v1", "ConfigMap", CONFIGMAP, {"data": {"BeforeClusterCreate-actualResponseStatus": "x"}},
                 namespace="default", patch_type="application/merge-patch+json")
    assert responder.sync(client) == []
    client.patch("v1", "ConfigMap", CONFIGMAP,
                 {"data": {"BeforeClusterCreate-preloadedResponse": '{"Status": "Success", "RetryAfterSeconds": 5}'}},
                 namespace="default", patch_type="application/merge-patch+json")
    assert responder.sync(client) == [("default", CONFIGMAP)]


def test_the_ca_bundle_is_the_base64_of_the_ca_file_the_extension_writes() -> None:
    server = ExtensionServer(HookResponder())
    try:
        assert base64.b64decode(server.ca_bundle) == (server.cert_dir / "ca.crt").read_bytes()
    finally:
        server.stop()
