"""The Runtime SDK client and ExtensionConfig webhook against the reference extension over real HTTPS."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from controllers.runtime import transport
from controllers.runtime.api import CATALOG
from controllers.runtime.client import RuntimeClient, RuntimeSDKError, aggregate, clean_cluster
from controllers.runtime.webhooks import validate_extension_config
from harness.kube.names.runtime_sdk import RUNTIME_API_VERSION
from harness.world.extension import ExtensionServer, HookResponder
from harness.world.world import World


@pytest.fixture
def extension() -> Iterator[ExtensionServer]:
    server = ExtensionServer(HookResponder(timeout_seconds=1, hang_seconds=3.0)).start()
    yield server
    server.stop()


def _register(world: World, name: str, server: ExtensionServer, **spec: object) -> None:
    world.client().create({"apiVersion": RUNTIME_API_VERSION, "kind": "ExtensionConfig", "metadata": {"name": name},
                           "spec": {"clientConfig": {"url": server.url, "caBundle": server.ca_bundle}, **spec}})
    world.settle()


def _cluster(namespace: str = "default") -> dict:
    return {"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
            "metadata": {"name": "c1", "namespace": namespace, "managedFields": [{"manager": "x"}],
                         "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}", "keep": "1"}},
            "status": {"phase": "Provisioned"}}


def test_aggregation_takes_the_lowest_non_zero_retry_and_joins_messages() -> None:
    responses = [{"retryAfterSeconds": 0, "message": "test1"}, {"retryAfterSeconds": 1}, {"retryAfterSeconds": 5},
                 {"retryAfterSeconds": 4, "message": "test2"}, {"retryAfterSeconds": 3}]
    out = aggregate(CATALOG["BeforeClusterCreate"], responses)
    assert (out["status"], out["retryAfterSeconds"], out["message"]) == ("Success", 1, "test1, test2")


def test_clean_cluster_drops_managed_fields_last_applied_and_status() -> None:
    cleaned = clean_cluster(_cluster())
    assert "managedFields" not in cleaned["metadata"]
    assert cleaned["metadata"]["annotations"] == {"keep": "1"}
    assert cleaned["status"] == {"infrastructureReady": False, "controlPlaneReady": False}


def test_webhook_refuses_both_url_and_service_and_http() -> None:
    errs = validate_extension_config({"metadata": {"name": "e"}, "spec": {
        "clientConfig": {"url": "http://x", "service": {"name": "s", "namespace": "n"}}, "namespaceSelector": {}}})
    assert [str(e) for e in errs] == [
        "spec.clientConfig: Forbidden: only one of url or service can be defined",
        "spec.clientConfig.url: Invalid value: \"http://x\": 'https' is the only allowed URL scheme, "
        "e.g. https://example.com",
    ]


def test_ignore_never_ignores_a_failure_answer(extension: ExtensionServer) -> None:
    world = World()
    extension.responder.failure_policy = "Ignore"
    _register(world, "ext", extension)
    extension.responder.script("BeforeClusterCreate", response={"status": "Failure", "message": "no"})
    with pytest.raises(RuntimeSDKError, match="got failure response with message: no"):
        RuntimeClient(world.client()).call_all("BeforeClusterCreate", _cluster(), {"cluster": _cluster()})


def test_ignore_turns_a_garbage_answer_into_success(extension: ExtensionServer) -> None:
    world = World()
    extension.responder.failure_policy = "Ignore"
    _register(world, "ext", extension)
    extension.responder.script("BeforeClusterDelete", behaviour="garbage")
    out = RuntimeClient(world.client()).call_all("BeforeClusterDelete", _cluster(), {"cluster": _cluster()})
    assert (out["status"], out["retryAfterSeconds"], out["message"]) == ("Success", 0, "")


def test_a_hanging_extension_fails_within_the_handler_timeout(extension: ExtensionServer) -> None:
    import time

    world = World()
    _register(world, "ext", extension)
    extension.responder.script("BeforeClusterCreate", behaviour="hang")
    started = time.monotonic()
    with pytest.raises(RuntimeSDKError, match="context deadline exceeded"):
        RuntimeClient(world.client()).call_all("BeforeClusterCreate", _cluster(), {"cluster": _cluster()})
    assert time.monotonic() - started < 2.5


def test_settings_are_merged_and_the_timeout_is_in_the_query(extension: ExtensionServer) -> None:
    world = World()
    _register(world, "ext", extension, settings={"a": "1"})
    RuntimeClient(world.client()).call_all("BeforeClusterCreate", _cluster(), {"cluster": _cluster()})
    call = extension.responder.calls_of("BeforeClusterCreate")[-1]
    assert call.request["settings"] == {"a": "1"}
    assert call.handler == "before-cluster-create"


def test_service_form_resolves_through_the_service_target_port() -> None:
    world = World()
    server = ExtensionServer(hosts=["my-ext.default.svc"]).start()
    try:
        world.client().create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "my-ext",
                               "namespace": "default"},
                               "spec": {"ports": [{"port": 443, "targetPort": server.port}]}})
        world.client().create(
            {
                "apiVersion": RUNTIME_API_VERSION,
                "kind": "ExtensionConfig",
                "metadata": {"name": "svc"},
                "spec": {
                    "clientConfig": {
                        "service": {"name": "my-ext", "namespace": "default"},
                        "caBundle": server.ca_bundle,
                    }
                },
            }
        )
        world.settle()
        config = world.client().get(RUNTIME_API_VERSION, "ExtensionConfig", "svc")
        assert config["spec"]["clientConfig"]["service"]["port"] == 443
        assert [c["status"] for c in config["status"]["conditions"] if c["type"] == "Discovered"] == ["True"]
    finally:
        server.stop()


def test_ca_is_injected_from_a_secret(extension: ExtensionServer) -> None:
    world = World()
    client = world.client()
    client.create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "ext-ca", "namespace": "default"},
                   "data": {"ca.crt": extension.ca_bundle}})
    client.create({"apiVersion": RUNTIME_API_VERSION, "kind": "ExtensionConfig",
                   "metadata": {"name": "ext", "annotations": {
                       "runtime.cluster.x-k8s.io/inject-ca-from-secret": "default/ext-ca"}},
                   "spec": {"clientConfig": {"url": extension.url}}})
    world.settle()
    config = client.get(RUNTIME_API_VERSION, "ExtensionConfig", "ext")
    assert config["spec"]["clientConfig"]["caBundle"] == extension.ca_bundle
    assert len(config["status"]["handlers"]) == 6


# -- hangs of the harness's own extension, held on the world's virtual clock ------------------------------


class _StoppedClock:
    """A clock that never moves: the extension can cancel a call, but the deadline never passes."""

    def __init__(self, now: float) -> None:
        self._now = now

    def now(self) -> float:
        return self._now

    def advance_to(self, instant: float) -> None:
        pass


def _exchanges() -> tuple[list[transport.Exchange], Callable[[], None]]:
    seen: list[transport.Exchange] = []
    return seen, transport.observe(seen.append)


def test_a_hang_held_on_the_worlds_clock_passes_the_handler_deadline_in_virtual_time() -> None:
    world = World()
    server = ExtensionServer(HookResponder(timeout_seconds=1), clock=world.clock).start()
    seen, stop = _exchanges()
    try:
        _register(world, "ext", server)
        server.responder.script("BeforeClusterCreate", behaviour="hang")
        before = world.now()
        with pytest.raises(RuntimeSDKError, match="context deadline exceeded"):
            RuntimeClient(world.client()).call_all("BeforeClusterCreate", _cluster(), {"cluster": _cluster()})
        assert world.now() == before + 1  # exactly the handler's timeoutSeconds passed, on the world's clock
        assert server.hangs is not None and server.hangs.cancelled == 1
        assert seen[-1].seconds < 1.0  # cancelled, not given up by the wall-clock deadline
    finally:
        stop()
        server.stop()


def test_a_discovery_hang_held_on_the_worlds_clock_passes_the_10_second_discovery_deadline() -> None:
    world = World(controllers=[])
    server = ExtensionServer(HookResponder(timeout_seconds=1), clock=world.clock).start()
    try:
        server.responder.set_discovery_behaviour("hang")
        before = world.now()
        config = {"metadata": {"name": "ext"}, "spec": {"clientConfig": {"url": server.url,
                                                                         "caBundle": server.ca_bundle}}}
        with pytest.raises(RuntimeSDKError) as raised:
            RuntimeClient(world.client()).discover(config)
        assert str(raised.value) == (
            f'failed to discover extension "ext": http call failed: Post "{server.url}/hooks.runtime.cluster.x-k8s.io'
            '/v1alpha1/discovery?timeout=10s": context deadline exceeded')
        assert world.now() == before + 10
    finally:
        server.stop()


def test_a_call_cancelled_before_its_virtual_deadline_is_not_a_deadline() -> None:
    world = World()
    server = ExtensionServer(HookResponder(timeout_seconds=1), clock=_StoppedClock(world.now())).start()
    try:
        _register(world, "ext", server)
        server.responder.script("BeforeClusterCreate", behaviour="hang")
        with pytest.raises(RuntimeSDKError) as raised:
            RuntimeClient(world.client()).call_all("BeforeClusterCreate", _cluster(), {"cluster": _cluster()})
        assert "context deadline exceeded" not in str(raised.value)
        assert "http call failed" in str(raised.value)
    finally:
        server.stop()
