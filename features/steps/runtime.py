"""Sentences about Runtime SDK lifecycle hooks (seed 002): reference Runtime Extensions registered through
ExtensionConfigs, Clusters with a managed topology (from a ClusterClass), what the extensions answer and
receive, and what the Cluster shows (references, pending hooks, ok-to-delete, conditions).

Each extension a scenario names is a reference extension (``harness.world.extension``) started on
``127.0.0.1:0`` in a background thread and stopped when the scenario ends; the controllers call it over
real HTTPS whichever way the scenario reaches the world. Unless a sentence says otherwise an extension
declares its six handlers with ``timeoutSeconds: 1`` (so a hanging call fails within a second) and the
failure policy ``Fail``; its ExtensionConfig has its name and the setting ``extensionConfigName``. Answers
are scripted on the extension itself (for every Cluster); the ConfigMap convention is synced between steps.

Clusters are in the namespace ``default`` unless named ``<namespace>/<name>`` (the namespace is created,
labelled as a sentence says). Their ClusterClass ``quick-start`` is created on first use: a FakeCluster, a
KubeadmControlPlane of one Machine whose FakeMachine takes 30 s to provision, no workers.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from pytest_bdd import given, then, when

from controllers.runtime.api import (
    API_VERSION as RUNTIME_API_VERSION,
)
from controllers.runtime.api import (
    EXTENSION_CONFIG_KIND,
    HOOKS_API_VERSION,
    OK_TO_DELETE_ANNOTATION,
    PENDING_HOOKS_ANNOTATION,
)
from features.steps.context import ScenarioContext, labels_of, sentence
from harness.client import MERGE, find_in
from harness.world.extension import ExtensionServer, HookResponder

CAPI = "cluster.x-k8s.io/v1beta1"
INFRA = "infrastructure.cluster.x-k8s.io/v1beta1"
CONTROL_PLANE = "controlplane.cluster.x-k8s.io/v1beta1"
CLUSTER_CLASS = "quick-start"
KINDS = {"Cluster": CAPI, "ClusterClass": CAPI, "KubeadmControlPlane": CONTROL_PLANE, "FakeCluster": INFRA,
         "MachineDeployment": CAPI}
SETUP_SECONDS = 600.0
TEST_TIMEOUT_SECONDS = 1
CONTROL_PLANE_PROVISION_DELAY = "30s"
TOPOLOGY_RECONCILED = "TopologyReconciled"
CONTROL_PLANE_INITIALIZED = "ControlPlaneInitialized"
BEHAVIOURS = {"hangs": "hang", "redirects": "redirect", "answers garbage": "garbage", "answers 500": "error",
              "answers without a status": "no-status"}


@dataclass
class RuntimeScene:
    """The scenario's extensions (by name) and what the steps noted."""

    extensions: dict[str, ExtensionServer] = field(default_factory=dict)
    counts: dict[tuple[str, str], int] = field(default_factory=dict)


@pytest.fixture
def runtime() -> Iterator[RuntimeScene]:
    """The scenario's Runtime Extensions; every one is stopped (bounded) when the scenario ends."""
    scene = RuntimeScene()
    yield scene
    for server in scene.extensions.values():
        server.stop()


def _register(ctx: ScenarioContext) -> None:
    ctx.kinds.update(KINDS)


def _split(ref: str) -> tuple[str, str]:
    namespace, _, name = ref.rpartition("/")
    return namespace or "default", name


def _extension(runtime: RuntimeScene, name: str) -> ExtensionServer:
    assert name in runtime.extensions, f"the scenario has no extension {name!r}"
    return runtime.extensions[name]


def _sync(ctx: ScenarioContext, runtime: RuntimeScene) -> None:
    for server in runtime.extensions.values():
        server.responder.sync(ctx.client)


def _await(ctx: ScenarioContext, what: str, check: Any, seconds: float = SETUP_SECONDS) -> None:
    assert ctx.wait_until(check, seconds), f"{what} did not happen within {seconds} virtual seconds"


def _extension_config(name: str, server: ExtensionServer, **spec: Any) -> dict[str, Any]:
    client_config = {"url": server.url, "caBundle": server.ca_bundle}
    return {"apiVersion": RUNTIME_API_VERSION, "kind": EXTENSION_CONFIG_KIND, "metadata": {"name": name},
            "spec": {"clientConfig": client_config, "settings": {"extensionConfigName": name}, **spec}}


def _discovered(ctx: ScenarioContext, name: str) -> dict[str, Any] | None:
    config = find_in(ctx.client, RUNTIME_API_VERSION, EXTENSION_CONFIG_KIND, name)
    for condition in ((config or {}).get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Discovered":
            return condition  # type: ignore[no-any-return]
    return None


def start_extension(ctx: ScenarioContext, runtime: RuntimeScene, name: str, *, policy: str = "Fail",
                    register: bool = True, selector: dict[str, Any] | None = None) -> ExtensionServer:
    """Start the extension ``name``; register it (and wait for discovery) when ``register``."""
    _register(ctx)
    server = ExtensionServer(HookResponder(failure_policy=policy, timeout_seconds=TEST_TIMEOUT_SECONDS,
                                           hang_seconds=3.0)).start()
    runtime.extensions[name] = server
    if register:
        spec = {"namespaceSelector": selector} if selector is not None else {}
        ctx.setup(lambda: ctx.client.create(_extension_config(name, server, **spec)))
        _await(ctx, f"the discovery of {name}", lambda: (_discovered(ctx, name) or {}).get("status") == "True", 60)
    return server


def ensure_cluster_class(ctx: ScenarioContext, namespace: str) -> None:
    """The ClusterClass ``quick-start`` and its templates in ``namespace``."""
    if find_in(ctx.client, CAPI, "ClusterClass", CLUSTER_CLASS, namespace) is not None:
        return
    if find_in(ctx.client, "v1", "Namespace", namespace) is None:
        ctx.setup(lambda: ctx.client.create({"apiVersion": "v1", "kind": "Namespace",
                                             "metadata": {"name": namespace}}))
    objects = [
        {"apiVersion": INFRA, "kind": "FakeClusterTemplate",
         "metadata": {"name": "quick-start", "namespace": namespace}, "spec": {"template": {"spec": {}}}},
        {"apiVersion": CONTROL_PLANE, "kind": "KubeadmControlPlaneTemplate",
         "metadata": {"name": "quick-start-control-plane", "namespace": namespace},
         "spec": {"template": {"spec": {"kubeadmConfigSpec": {}}}}},
        {"apiVersion": INFRA, "kind": "FakeMachineTemplate",
         "metadata": {"name": "quick-start-control-plane", "namespace": namespace},
         "spec": {"template": {"metadata": {"annotations": {
             "harness.test/provision-delay": CONTROL_PLANE_PROVISION_DELAY}}, "spec": {}}}},
        {"apiVersion": CAPI, "kind": "ClusterClass", "metadata": {"name": CLUSTER_CLASS, "namespace": namespace},
         "spec": {"infrastructure": {"ref": {"apiVersion": INFRA, "kind": "FakeClusterTemplate",
                                             "name": "quick-start"}},
                  "controlPlane": {"ref": {"apiVersion": CONTROL_PLANE, "kind": "KubeadmControlPlaneTemplate",
                                           "name": "quick-start-control-plane"},
                                   "machineInfrastructure": {"ref": {"apiVersion": INFRA,
                                                                     "kind": "FakeMachineTemplate",
                                                                     "name": "quick-start-control-plane"}}}}},
    ]
    for obj in objects:
        ctx.setup(lambda obj=obj: ctx.client.create(obj))


def cluster_object(ref: str, version: str | None, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    """A Cluster with a managed topology at ``version`` (None: no topology)."""
    namespace, name = _split(ref)
    spec: dict[str, Any] = {}
    if version is not None:
        spec["topology"] = {"class": CLUSTER_CLASS, "version": version, "controlPlane": {"replicas": 1}}
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if annotations:
        metadata["annotations"] = annotations
    return {"apiVersion": CAPI, "kind": "Cluster", "metadata": metadata, "spec": spec}


def _cluster(ctx: ScenarioContext, ref: str) -> dict[str, Any] | None:
    namespace, name = _split(ref)
    return find_in(ctx.client, CAPI, "Cluster", name, namespace)


def _annotations(obj: dict[str, Any] | None) -> dict[str, str]:
    return ((obj or {}).get("metadata") or {}).get("annotations") or {}


def _condition(obj: dict[str, Any] | None, kind: str, *, v1beta2: bool = False) -> dict[str, Any] | None:
    status = (obj or {}).get("status") or {}
    items = (status.get("v1beta2") or {}).get("conditions") if v1beta2 else status.get("conditions")
    return next((c for c in items or [] if c.get("type") == kind), None)


def _initialized(ctx: ScenarioContext, ref: str) -> bool:
    condition = _condition(_cluster(ctx, ref), CONTROL_PLANE_INITIALIZED)
    return condition is not None and condition.get("status") == "True"


def _calls(runtime: RuntimeScene, extension: str, hook: str) -> list[Any]:
    return _extension(runtime, extension).responder.calls_of(hook)


# -- Given -------------------------------------------------------------------------------------------


@given(sentence('a Runtime Extension "{name:Q}" registered with the failure policy {policy:Word}'))
def given_extension(ctx: ScenarioContext, runtime: RuntimeScene, name: str, policy: str) -> None:
    start_extension(ctx, runtime, name, policy=policy)


@given(sentence('a Runtime Extension "{name:Q}" registered for namespaces labelled "{labels:Q}"'))
def given_extension_for_namespaces(ctx: ScenarioContext, runtime: RuntimeScene, name: str, labels: str) -> None:
    start_extension(ctx, runtime, name, selector={"matchLabels": labels_of(labels)})


@given(sentence('a Runtime Extension "{name:Q}" that is not registered'))
def given_unregistered_extension(ctx: ScenarioContext, runtime: RuntimeScene, name: str) -> None:
    start_extension(ctx, runtime, name, register=False)


@given(sentence('the extension "{name:Q}" answers {hook:Word} with "{status:Q}" and the message "{message:Q}"'))
def given_answer_status(ctx: ScenarioContext, runtime: RuntimeScene, name: str, hook: str, status: str,
                        message: str) -> None:
    _extension(runtime, name).responder.script(hook, response={"status": status, "message": message})


@given(sentence('the extension "{name:Q}" answers {hook:Word} with retryAfterSeconds {seconds:Int}'))
def given_answer_retry(ctx: ScenarioContext, runtime: RuntimeScene, name: str, hook: str, seconds: int) -> None:
    _extension(runtime, name).responder.script(hook, response={"status": "Success", "retryAfterSeconds": seconds})


@given(sentence('the extension "{name:Q}" answers {hook:Word} with retryAfterSeconds {seconds:Int} '
                'and the message "{message:Q}"'))
def given_answer_retry_message(ctx: ScenarioContext, runtime: RuntimeScene, name: str, hook: str, seconds: int,
                               message: str) -> None:
    _extension(runtime, name).responder.script(hook, response={"status": "Success", "retryAfterSeconds": seconds,
                                                               "message": message})


@given(sentence('the extension "{name:Q}" {behaviour} on {hook:Word}'))
def given_misbehaviour(ctx: ScenarioContext, runtime: RuntimeScene, name: str, behaviour: str, hook: str) -> None:
    assert behaviour in BEHAVIOURS, f"a misbehaviour is one of {list(BEHAVIOURS)}, not {behaviour!r}"
    _extension(runtime, name).responder.script(hook, behaviour=BEHAVIOURS[behaviour])


@given(sentence('the extension "{name:Q}" has stopped'))
def given_extension_stopped(ctx: ScenarioContext, runtime: RuntimeScene, name: str) -> None:
    _extension(runtime, name).stop()


@given(sentence('the ConfigMap "{ref:Q}" preloads the response of {hook:Word} with:'))
def given_preloaded(ctx: ScenarioContext, runtime: RuntimeScene, ref: str, hook: str, docstring: str) -> None:
    namespace, name = _split(ref)
    key = f"{hook}-preloadedResponse"
    existing = find_in(ctx.client, "v1", "ConfigMap", name, namespace)
    if existing is None:
        ctx.setup(lambda: ctx.client.create({"apiVersion": "v1", "kind": "ConfigMap",
                                             "metadata": {"name": name, "namespace": namespace},
                                             "data": {key: docstring}}))
    else:
        ctx.setup(lambda: ctx.client.patch("v1", "ConfigMap", name, {"data": {key: docstring}},
                                           namespace=namespace, patch_type=MERGE))
    _sync(ctx, runtime)


@given(sentence('a Namespace "{name:Q}" labelled "{labels:Q}" for Clusters'))
def given_namespace(ctx: ScenarioContext, name: str, labels: str) -> None:
    ctx.setup(lambda: ctx.client.create({"apiVersion": "v1", "kind": "Namespace",
                                         "metadata": {"name": name, "labels": labels_of(labels)}}))


@given(sentence('a running Cluster "{ref:Q}" with a managed topology at version "{version:Q}"'))
def given_running_cluster(ctx: ScenarioContext, runtime: RuntimeScene, ref: str, version: str) -> None:
    _register(ctx)
    ensure_cluster_class(ctx, _split(ref)[0])
    ctx.setup(lambda: ctx.client.create(cluster_object(ref, version)))
    _await(ctx, f"the control plane of {ref} initialized", lambda: _initialized(ctx, ref))
    _await(ctx, f"no pending hooks on {ref}", lambda: PENDING_HOOKS_ANNOTATION not in _annotations(
        _cluster(ctx, ref)), 120)
    _sync(ctx, runtime)


@given(sentence('the Cluster "{ref:Q}" has been annotated "{key:Q}"'))
def given_cluster_annotated(ctx: ScenarioContext, ref: str, key: str) -> None:
    namespace, name = _split(ref)
    ctx.setup(lambda: ctx.client.patch(CAPI, "Cluster", name, {"metadata": {"annotations": {key: ""}}},
                                       namespace=namespace, patch_type=MERGE))


# -- When --------------------------------------------------------------------------------------------


@when(sentence('a Cluster "{ref:Q}" with a managed topology at version "{version:Q}" is created'))
def when_cluster_created(ctx: ScenarioContext, runtime: RuntimeScene, ref: str, version: str) -> None:
    _register(ctx)
    ensure_cluster_class(ctx, _split(ref)[0])
    ctx.act(lambda: ctx.client.create(cluster_object(ref, version)))
    _sync(ctx, runtime)


@when(sentence('a Cluster "{ref:Q}" without a topology is created'))
def when_plain_cluster_created(ctx: ScenarioContext, runtime: RuntimeScene, ref: str) -> None:
    _register(ctx)
    ctx.act(lambda: ctx.client.create(cluster_object(ref, None)))


@when(sentence('a paused Cluster "{ref:Q}" with a managed topology at version "{version:Q}" is created'))
def when_paused_cluster_created(ctx: ScenarioContext, runtime: RuntimeScene, ref: str, version: str) -> None:
    _register(ctx)
    ensure_cluster_class(ctx, _split(ref)[0])
    cluster = cluster_object(ref, version)
    cluster["spec"]["paused"] = True
    ctx.act(lambda: ctx.client.create(cluster))


@when(sentence('the Cluster "{ref:Q}" is upgraded to "{version:Q}"'))
def when_cluster_upgraded(ctx: ScenarioContext, runtime: RuntimeScene, ref: str, version: str) -> None:
    namespace, name = _split(ref)
    ctx.act(lambda: ctx.client.patch(CAPI, "Cluster", name, {"spec": {"topology": {"version": version}}},
                                     namespace=namespace, patch_type=MERGE))
    _sync(ctx, runtime)


@when(sentence('the extension "{name:Q}" answers {hook:Word} with "{status:Q}"'))
def when_answer_status(ctx: ScenarioContext, runtime: RuntimeScene, name: str, hook: str, status: str) -> None:
    _extension(runtime, name).responder.script(hook, response={"status": status})


@when(sentence('an ExtensionConfig "{name:Q}" for the extension "{extension:Q}" is created with:'))
def when_extension_config_created(ctx: ScenarioContext, runtime: RuntimeScene, name: str, extension: str,
                                  datatable: list[list[str]]) -> None:
    server = _extension(runtime, extension)
    config = _extension_config(name, server)
    client_config = config["spec"]["clientConfig"]
    for setting, value in (row[:2] for row in datatable[1:]):
        if setting == "url":
            client_config["url"] = value.replace("<extension>", server.url.removeprefix("https://"))
        elif setting == "service":
            namespace, _, svc = value.partition("/")
            client_config["service"] = {"namespace": namespace, "name": svc}
        elif setting == "no url":
            client_config.pop("url", None)
        elif setting == "caBundle of":
            client_config["caBundle"] = _extension(runtime, value).ca_bundle
        else:
            raise AssertionError(f"an ExtensionConfig setting is url, service, no url or caBundle of, not {setting!r}")
    ctx.act(lambda: ctx.client.create(config))


@when(sentence('the extension "{name:Q}" answers discovery with the handlers:'))
def when_discovery_answer(ctx: ScenarioContext, runtime: RuntimeScene, name: str, datatable: list[list[str]]) -> None:
    handlers = []
    header = datatable[0]
    for row in datatable[1:]:
        values = dict(zip(header, row))
        handler: dict[str, Any] = {"name": values["name"],
                                   "requestHook": {"apiVersion": HOOKS_API_VERSION, "hook": values["hook"]}}
        if values.get("timeoutSeconds"):
            handler["timeoutSeconds"] = int(values["timeoutSeconds"])
        if values.get("failurePolicy"):
            handler["failurePolicy"] = values["failurePolicy"]
        handlers.append(handler)
    server = _extension(runtime, name)
    server.responder.set_discovery({"status": "Success", "handlers": handlers})
    ctx.act(lambda: ctx.client.create(_extension_config(name, server)))


@when(sentence('the Cluster "{ref:Q}" is deleted while its extensions answer'))
def when_cluster_deleted(ctx: ScenarioContext, runtime: RuntimeScene, ref: str) -> None:
    namespace, name = _split(ref)
    ctx.act(lambda: ctx.client.delete(CAPI, "Cluster", name, namespace))
    _sync(ctx, runtime)


# -- Then --------------------------------------------------------------------------------------------


@then(sentence('the extension "{name:Q}" received {hook:Word}'))
def then_received(ctx: ScenarioContext, runtime: RuntimeScene, name: str, hook: str) -> None:
    assert _calls(runtime, name, hook), f"the extension {name} never received {hook}"


@then(sentence('the extension "{name:Q}" never received {hook:Word}'))
def then_never_received(ctx: ScenarioContext, runtime: RuntimeScene, name: str, hook: str) -> None:
    calls = _calls(runtime, name, hook)
    assert not calls, f"the extension {name} received {hook} {len(calls)} times"


@then(sentence('within {seconds:Int} seconds the extension "{name:Q}" receives {hook:Word}'))
def then_receives_within(ctx: ScenarioContext, runtime: RuntimeScene, seconds: int, name: str, hook: str) -> None:
    _await(ctx, f"a {hook} call to {name}", lambda: bool(_calls(runtime, name, hook)), seconds)


@then(sentence('the extension "{name:Q}" receives {hook:Word} again only after {seconds:Int} seconds'))
def then_receives_again_after(ctx: ScenarioContext, runtime: RuntimeScene, name: str, hook: str, seconds: int) -> None:
    before = len(_calls(runtime, name, hook))
    assert before, f"the extension {name} never received {hook}"
    ctx.scene.advance(seconds - 1)
    assert len(_calls(runtime, name, hook)) == before, f"{hook} was called again before {seconds} seconds"
    ctx.scene.advance(1)
    assert len(_calls(runtime, name, hook)) > before, f"{hook} was not called again after {seconds} seconds"


@then(sentence('the last {hook:Word} request to "{name:Q}" carried "{field_name:Q}" "{value:Q}"'))
def then_request_field(ctx: ScenarioContext, runtime: RuntimeScene, hook: str, name: str, field_name: str,
                       value: str) -> None:
    calls = _calls(runtime, name, hook)
    assert calls, f"the extension {name} never received {hook}"
    node: Any = calls[-1].request
    for part in field_name.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    shown = node if isinstance(node, str) else json.dumps(node, sort_keys=True)
    assert shown == value, f"{field_name} of the last {hook} request is {shown!r}, expected {value!r}"


@then(sentence('the Cluster "{ref:Q}" has neither an infrastructure cluster nor a control plane'))
def then_nothing_created(ctx: ScenarioContext, ref: str) -> None:
    cluster = _cluster(ctx, ref)
    spec = (cluster or {}).get("spec") or {}
    assert not spec.get("infrastructureRef") and not spec.get("controlPlaneRef"), f"references set: {spec}"
    namespace, name = _split(ref)
    assert find_in(ctx.client, INFRA, "FakeCluster", name, namespace) is None
    assert find_in(ctx.client, CONTROL_PLANE, "KubeadmControlPlane", name, namespace) is None


@then(sentence('the Cluster "{ref:Q}" has its infrastructure cluster and control plane'))
def then_created(ctx: ScenarioContext, ref: str) -> None:
    cluster = _cluster(ctx, ref)
    spec = (cluster or {}).get("spec") or {}
    assert spec.get("infrastructureRef") and spec.get("controlPlaneRef"), f"references not set: {spec}"
    namespace, name = _split(ref)
    assert find_in(ctx.client, INFRA, "FakeCluster", name, namespace) is not None
    assert find_in(ctx.client, CONTROL_PLANE, "KubeadmControlPlane", name, namespace) is not None


@then(sentence('the Cluster "{ref:Q}" has the pending hooks "{value:Q}"'))
def then_pending_hooks(ctx: ScenarioContext, ref: str, value: str) -> None:
    actual = _annotations(_cluster(ctx, ref)).get(PENDING_HOOKS_ANNOTATION)
    assert actual == value, f"{PENDING_HOOKS_ANNOTATION} is {actual!r}, expected {value!r}"


@then(sentence('the Cluster "{ref:Q}" has no pending hooks'))
def then_no_pending_hooks(ctx: ScenarioContext, ref: str) -> None:
    annotations = _annotations(_cluster(ctx, ref))
    assert PENDING_HOOKS_ANNOTATION not in annotations, f"{PENDING_HOOKS_ANNOTATION}: {annotations}"


@then(sentence('the Cluster "{ref:Q}" is marked ok to delete'))
def then_ok_to_delete(ctx: ScenarioContext, ref: str) -> None:
    assert OK_TO_DELETE_ANNOTATION in _annotations(_cluster(ctx, ref)), "no ok-to-delete annotation"


@then(sentence('the Cluster "{ref:Q}" is not marked ok to delete'))
def then_not_ok_to_delete(ctx: ScenarioContext, ref: str) -> None:
    assert OK_TO_DELETE_ANNOTATION not in _annotations(_cluster(ctx, ref)), "the Cluster is marked ok-to-delete"


@then(sentence('the Cluster "{ref:Q}" is deleting with reason "{reason:Q}" and the message "{message:Q}"'))
def then_cluster_deleting(ctx: ScenarioContext, ref: str, reason: str, message: str) -> None:
    condition = _condition(_cluster(ctx, ref), "Deleting", v1beta2=True)
    assert condition is not None, f"the Cluster {ref} has no Deleting condition"
    assert (condition.get("reason"), condition.get("message")) == (reason, message), f"Deleting is {condition}"


@then(sentence('the Cluster "{ref:Q}" reports {condition_type:Word} "{status:Q}" with reason "{reason:Q}" '
               'and a message containing "{text:Q}"'))
def then_cluster_condition_contains(ctx: ScenarioContext, ref: str, condition_type: str, status: str, reason: str,
                                    text: str) -> None:
    condition = _condition(_cluster(ctx, ref), condition_type)
    assert condition is not None, f"the Cluster {ref} has no {condition_type} condition"
    assert (condition.get("status"), condition.get("reason")) == (status, reason), f"{condition_type}: {condition}"
    assert text in str(condition.get("message", "")), f"{text!r} is not in {condition.get('message')!r}"


@then(sentence('the Cluster "{ref:Q}" reports {condition_type:Word} "{status:Q}" with reason "{reason:Q}" '
               'and the message:'))
def then_cluster_condition_message(ctx: ScenarioContext, ref: str, condition_type: str, status: str, reason: str,
                                   docstring: str) -> None:
    condition = _condition(_cluster(ctx, ref), condition_type)
    assert condition is not None, f"the Cluster {ref} has no {condition_type} condition"
    actual = (condition.get("status"), condition.get("reason"), condition.get("message"))
    assert actual == (status, reason, docstring.strip()), f"{condition_type}: {condition}"


@then(sentence('the Cluster "{ref:Q}" reports {condition_type:Word} "{status:Q}" with reason "{reason:Q}" '
               'and a message containing:'))
def then_cluster_condition_containing_block(ctx: ScenarioContext, ref: str, condition_type: str, status: str,
                                            reason: str, docstring: str) -> None:
    then_cluster_condition_contains(ctx, ref, condition_type, status, reason, docstring.strip())


@then(sentence('the KubeadmControlPlane "{ref:Q}" has the version "{version:Q}"'))
def then_control_plane_version(ctx: ScenarioContext, ref: str, version: str) -> None:
    namespace, name = _split(ref)
    kcp = find_in(ctx.client, CONTROL_PLANE, "KubeadmControlPlane", name, namespace)
    assert kcp is not None, f"no KubeadmControlPlane {ref}"
    assert (kcp.get("spec") or {}).get("version") == version, f"the control plane is at {kcp.get('spec')}"


@then(sentence('the ExtensionConfig "{name:Q}" is not discovered, with the message:'))
def then_not_discovered(ctx: ScenarioContext, name: str, docstring: str) -> None:
    condition = _discovered(ctx, name)
    assert condition is not None, f"the ExtensionConfig {name} has no Discovered condition"
    assert (condition.get("status"), condition.get("reason")) == ("False", "DiscoveryFailed"), condition
    assert condition.get("message") == docstring.strip(), f"message:\n{condition.get('message')}"


@then(sentence('the ExtensionConfig "{name:Q}" is not discovered, with a message containing "{text:Q}"'))
def then_not_discovered_containing(ctx: ScenarioContext, name: str, text: str) -> None:
    condition = _discovered(ctx, name)
    assert condition is not None and condition.get("status") == "False", f"Discovered is {condition}"
    assert text in str(condition.get("message")), f"{text!r} is not in {condition.get('message')!r}"


@then(sentence('the ExtensionConfig "{name:Q}" lists the handlers "{names:Q}"'))
def then_handlers(ctx: ScenarioContext, name: str, names: str) -> None:
    config = find_in(ctx.client, RUNTIME_API_VERSION, EXTENSION_CONFIG_KIND, name)
    actual = [h.get("name") for h in ((config or {}).get("status") or {}).get("handlers") or []]
    assert actual == [n.strip() for n in names.split(",")], f"handlers: {actual}"


@then(sentence('the ConfigMap "{ref:Q}" records "{key:Q}" as "{value:Q}"'))
def then_configmap_records(ctx: ScenarioContext, runtime: RuntimeScene, ref: str, key: str, value: str) -> None:
    _sync(ctx, runtime)
    namespace, name = _split(ref)
    config_map = find_in(ctx.client, "v1", "ConfigMap", name, namespace)
    assert config_map is not None, f"no ConfigMap {ref}"
    assert (config_map.get("data") or {}).get(key) == value, f"data: {config_map.get('data')}"

