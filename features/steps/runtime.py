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
KubeadmControlPlane of one Machine whose FakeMachine takes 30 s to provision, and the worker class
``default-worker``; a Cluster "with <n> worker Machines" has one MachineDeployment ``md-0`` of that class,
named ``<cluster>-md-0``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from pytest_bdd import given, then, when

from features.steps.context import POLL_SECONDS, ScenarioContext, labels_of, sentence
from features.steps.machines import first_deletion_seq
from harness.kube.client import MERGE, find_in
from harness.kube.names.capi import (
    BOOTSTRAP_API_VERSION,
    CLUSTER_API_VERSION,
    CLUSTERS_RESOURCE,
    CONTROL_PLANE_API_VERSION,
    CONTROL_PLANE_INITIALIZED,
    INFRASTRUCTURE_API_VERSION,
    MACHINE_DEPLOYMENT_NAME_LABEL,
    MACHINES_RESOURCE,
    PHASE_RUNNING,
    TOPOLOGY_RECONCILE_FAILED_REASON,
    TOPOLOGY_RECONCILED,
)
from harness.kube.names.knobs import PROVISION_DELAY_ANNOTATION
from harness.kube.names.runtime_sdk import (
    EXTENSION_CONFIG_KIND,
    HOOKS_API_VERSION,
    OK_TO_DELETE_ANNOTATION,
    PENDING_HOOKS_ANNOTATION,
    RUNTIME_API_VERSION,
)
from harness.world.extension import ExtensionServer, HookResponder
from harness.world.extension.responses import HANG

CLUSTER_CLASS = "quick-start"
WORKER_CLASS = "default-worker"
WORKER_TEMPLATE = "quick-start-worker"
WORKER_NAME = "md-0"
KINDS = {
    "Cluster": CLUSTER_API_VERSION,
    "ClusterClass": CLUSTER_API_VERSION,
    "KubeadmControlPlane": CONTROL_PLANE_API_VERSION,
    "FakeCluster": INFRASTRUCTURE_API_VERSION,
    "MachineDeployment": CLUSTER_API_VERSION,
    "Machine": CLUSTER_API_VERSION,
}
SETUP_SECONDS = 600.0
TEST_TIMEOUT_SECONDS = 1
CONTROL_PLANE_PROVISION_DELAY = "30s"
DISCOVERY_WORD = "discovery"
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
    # On the world's clock (when the world runs here), a hang passes the call's deadline in virtual time.
    server = ExtensionServer(HookResponder(failure_policy=policy, timeout_seconds=TEST_TIMEOUT_SECONDS,
                                           hang_seconds=3.0), clock=getattr(ctx.scene, "clock", None)).start()
    runtime.extensions[name] = server
    if register:
        spec = {"namespaceSelector": selector} if selector is not None else {}
        ctx.setup(lambda: ctx.client.create(_extension_config(name, server, **spec)))
        _await(ctx, f"the discovery of {name}", lambda: (_discovered(ctx, name) or {}).get("status") == "True", 60)
    return server


def ensure_cluster_class(ctx: ScenarioContext, namespace: str) -> None:
    """The ClusterClass ``quick-start`` and its templates in ``namespace``."""
    if find_in(ctx.client, CLUSTER_API_VERSION, "ClusterClass", CLUSTER_CLASS, namespace) is not None:
        return
    if find_in(ctx.client, "v1", "Namespace", namespace) is None:
        ctx.setup(lambda: ctx.client.create({"apiVersion": "v1", "kind": "Namespace",
                                             "metadata": {"name": namespace}}))
    objects = [
        {
            "apiVersion": INFRASTRUCTURE_API_VERSION,
            "kind": "FakeClusterTemplate",
            "metadata": {"name": "quick-start", "namespace": namespace},
            "spec": {"template": {"spec": {}}},
        },
        {
            "apiVersion": CONTROL_PLANE_API_VERSION,
            "kind": "KubeadmControlPlaneTemplate",
            "metadata": {"name": "quick-start-control-plane", "namespace": namespace},
            "spec": {"template": {"spec": {"kubeadmConfigSpec": {}}}},
        },
        {
            "apiVersion": INFRASTRUCTURE_API_VERSION,
            "kind": "FakeMachineTemplate",
            "metadata": {"name": "quick-start-control-plane", "namespace": namespace},
            "spec": {
                "template": {
                    "metadata": {"annotations": {PROVISION_DELAY_ANNOTATION: CONTROL_PLANE_PROVISION_DELAY}},
                    "spec": {},
                }
            },
        },
        {
            "apiVersion": INFRASTRUCTURE_API_VERSION,
            "kind": "FakeMachineTemplate",
            "metadata": {"name": WORKER_TEMPLATE, "namespace": namespace},
            "spec": {"template": {"spec": {}}},
        },
        {
            "apiVersion": BOOTSTRAP_API_VERSION,
            "kind": "FakeBootstrapConfigTemplate",
            "metadata": {"name": WORKER_TEMPLATE, "namespace": namespace},
            "spec": {"template": {"spec": {}}},
        },
        {
            "apiVersion": CLUSTER_API_VERSION,
            "kind": "ClusterClass",
            "metadata": {"name": CLUSTER_CLASS, "namespace": namespace},
            "spec": {
                "infrastructure": {
                    "ref": {
                        "apiVersion": INFRASTRUCTURE_API_VERSION,
                        "kind": "FakeClusterTemplate",
                        "name": "quick-start",
                    }
                },
                "controlPlane": {
                    "ref": {
                        "apiVersion": CONTROL_PLANE_API_VERSION,
                        "kind": "KubeadmControlPlaneTemplate",
                        "name": "quick-start-control-plane",
                    },
                    "machineInfrastructure": {
                        "ref": {
                            "apiVersion": INFRASTRUCTURE_API_VERSION,
                            "kind": "FakeMachineTemplate",
                            "name": "quick-start-control-plane",
                        }
                    },
                },
                "workers": {
                    "machineDeployments": [
                        {
                            "class": WORKER_CLASS,
                            "template": {
                                "bootstrap": {
                                    "ref": {
                                        "apiVersion": BOOTSTRAP_API_VERSION,
                                        "kind": "FakeBootstrapConfigTemplate",
                                        "name": WORKER_TEMPLATE,
                                    }
                                },
                                "infrastructure": {
                                    "ref": {
                                        "apiVersion": INFRASTRUCTURE_API_VERSION,
                                        "kind": "FakeMachineTemplate",
                                        "name": WORKER_TEMPLATE,
                                    }
                                },
                            },
                        }
                    ]
                },
            },
        },
    ]
    for obj in objects:
        ctx.setup(lambda obj=obj: ctx.client.create(obj))


def cluster_object(ref: str, version: str | None, annotations: dict[str, str] | None = None, *,
                   workers: int = 0, worker_annotations: dict[str, str] | None = None) -> dict[str, Any]:
    """A Cluster with a managed topology at ``version`` (None: no topology); with ``workers``, one
    MachineDeployment ``md-0`` of that many Machines (annotated ``worker_annotations``)."""
    namespace, name = _split(ref)
    spec: dict[str, Any] = {}
    if version is not None:
        spec["topology"] = {"class": CLUSTER_CLASS, "version": version, "controlPlane": {"replicas": 1}}
    if workers:
        worker: dict[str, Any] = {"class": WORKER_CLASS, "name": WORKER_NAME, "replicas": workers}
        if worker_annotations:
            worker["metadata"] = {"annotations": worker_annotations}
        spec["topology"]["workers"] = {"machineDeployments": [worker]}
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if annotations:
        metadata["annotations"] = annotations
    return {"apiVersion": CLUSTER_API_VERSION, "kind": "Cluster", "metadata": metadata, "spec": spec}


def _cluster(ctx: ScenarioContext, ref: str) -> dict[str, Any] | None:
    namespace, name = _split(ref)
    return find_in(ctx.client, CLUSTER_API_VERSION, "Cluster", name, namespace)


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
    if hook == DISCOVERY_WORD:
        assert BEHAVIOURS[behaviour] == HANG, "discovery can only hang"
        _extension(runtime, name).responder.set_discovery_behaviour(HANG)
        return
    _extension(runtime, name).responder.script(hook, behaviour=BEHAVIOURS[behaviour])


@given(sentence('the extension "{name:Q}" has stopped'))
def given_extension_stopped(ctx: ScenarioContext, runtime: RuntimeScene, name: str) -> None:
    _extension(runtime, name).interrupt()


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
    _running_cluster(ctx, runtime, ref, version)


def _machines_of(ctx: ScenarioContext, ref: str) -> list[dict[str, Any]]:
    """The Machines of the MachineDeployment ``ref`` (by the label it gives them)."""
    namespace, name = _split(ref)
    selector = f"{MACHINE_DEPLOYMENT_NAME_LABEL}={name}"
    return ctx.client.list(CLUSTER_API_VERSION, "Machine", namespace, label_selector=selector)["items"]


def _version_of(machine_deployment: dict[str, Any] | None) -> str | None:
    return (((machine_deployment or {}).get("spec") or {}).get("template") or {}).get("spec", {}).get("version")


def _machine_deployment(ctx: ScenarioContext, ref: str) -> dict[str, Any] | None:
    namespace, name = _split(ref)
    return find_in(ctx.client, CLUSTER_API_VERSION, "MachineDeployment", name, namespace)


def _workers_running(ctx: ScenarioContext, ref: str, count: int) -> bool:
    namespace, name = _split(ref)
    machines = _machines_of(ctx, f"{namespace}/{name}-{WORKER_NAME}")
    return len(machines) == count and all(
        (m.get("status") or {}).get("phase") == PHASE_RUNNING and not m["metadata"].get("deletionTimestamp")
        for m in machines)


def _running_cluster(ctx: ScenarioContext, runtime: RuntimeScene, ref: str, version: str, workers: int = 0,
                     worker_annotations: dict[str, str] | None = None) -> None:
    _register(ctx)
    ensure_cluster_class(ctx, _split(ref)[0])
    ctx.setup(lambda: ctx.client.create(cluster_object(ref, version, workers=workers,
                                                       worker_annotations=worker_annotations)))
    _await(ctx, f"the control plane of {ref} initialized", lambda: _initialized(ctx, ref))
    _await(ctx, f"no pending hooks on {ref}", lambda: PENDING_HOOKS_ANNOTATION not in _annotations(
        _cluster(ctx, ref)), 120)
    if workers:
        _await(ctx, f"{workers} running worker Machines of {ref}", lambda: _workers_running(ctx, ref, workers))
    _sync(ctx, runtime)


@given(sentence('a running Cluster "{ref:Q}" with a managed topology at version "{version:Q}" and {count:Int} '
                'worker Machines'))
def given_running_cluster_with_workers(ctx: ScenarioContext, runtime: RuntimeScene, ref: str, version: str,
                                       count: int) -> None:
    _running_cluster(ctx, runtime, ref, version, count)


@given(sentence('a running Cluster "{ref:Q}" with a managed topology at version "{version:Q}" and {count:Int} '
                'worker Machines annotated "{annotation:Q}"'))
def given_running_cluster_with_annotated_workers(ctx: ScenarioContext, runtime: RuntimeScene, ref: str, version: str,
                                                 count: int, annotation: str) -> None:
    key, _, value = annotation.partition(":")
    _running_cluster(ctx, runtime, ref, version, count, {key.strip(): value.strip()})


@given(sentence('a Cluster "{ref:Q}" with a managed topology at version "{version:Q}" whose control plane is '
                'provisioning'))
def given_provisioning_cluster(ctx: ScenarioContext, runtime: RuntimeScene, ref: str, version: str) -> None:
    _register(ctx)
    ensure_cluster_class(ctx, _split(ref)[0])
    ctx.setup(lambda: ctx.client.create(cluster_object(ref, version)))
    spec = (_cluster(ctx, ref) or {}).get("spec") or {}
    assert spec.get("controlPlaneRef") and not _initialized(ctx, ref), f"the Cluster {ref} is not provisioning: {spec}"
    _sync(ctx, runtime)


@given(sentence('a Cluster "{ref:Q}" with a managed topology at version "{version:Q}" has been created'))
def given_cluster_created(ctx: ScenarioContext, runtime: RuntimeScene, ref: str, version: str) -> None:
    _register(ctx)
    ensure_cluster_class(ctx, _split(ref)[0])
    ctx.setup(lambda: ctx.client.create(cluster_object(ref, version)))
    _sync(ctx, runtime)


@given(sentence('the Cluster "{ref:Q}" has reported the failure of {hook:Word}'))
def given_hook_failure_reported(ctx: ScenarioContext, runtime: RuntimeScene, ref: str, hook: str) -> None:
    def reported() -> bool:
        condition = _condition(_cluster(ctx, ref), TOPOLOGY_RECONCILED) or {}
        return condition.get("reason") == TOPOLOGY_RECONCILE_FAILED_REASON and f'"{hook}.' in str(
            condition.get("message")
        )

    _await(ctx, f"the failure of {hook} on {ref}", reported)
    _sync(ctx, runtime)


@given(sentence('the Cluster "{ref:Q}" has been upgraded to "{version:Q}"'))
def given_cluster_upgraded(ctx: ScenarioContext, runtime: RuntimeScene, ref: str, version: str) -> None:
    namespace, name = _split(ref)
    ctx.setup(
        lambda: ctx.client.patch(
            CLUSTER_API_VERSION,
            "Cluster",
            name,
            {"spec": {"topology": {"version": version}}},
            namespace=namespace,
            patch_type=MERGE,
        )
    )
    _sync(ctx, runtime)


@given(sentence('new worker Machines of the Cluster "{ref:Q}" take {seconds:Int} seconds to provision'))
def given_slow_workers(ctx: ScenarioContext, ref: str, seconds: int) -> None:
    namespace, _ = _split(ref)
    ctx.setup(lambda: ctx.client.patch(
        INFRASTRUCTURE_API_VERSION, "FakeMachineTemplate", WORKER_TEMPLATE,
        {"spec": {"template": {"metadata": {"annotations": {PROVISION_DELAY_ANNOTATION: f"{seconds}s"}}}}},
        namespace=namespace, patch_type=MERGE))


@given(sentence('the workers of the Cluster "{ref:Q}" have started rolling out to "{version:Q}"'))
def given_workers_rolling(ctx: ScenarioContext, runtime: RuntimeScene, ref: str, version: str) -> None:
    namespace, name = _split(ref)
    workers = f"{namespace}/{name}-{WORKER_NAME}"

    def rolling() -> bool:
        machines = _machines_of(ctx, workers)
        return _version_of(_machine_deployment(ctx, workers)) == version and any(
            (m.get("spec") or {}).get("version") != version for m in machines)

    _await(ctx, f"the workers of {ref} rolling out to {version}", rolling)
    _sync(ctx, runtime)


@given(sentence('the extension "{name:Q}" has received {hook:Word}'))
def given_received(ctx: ScenarioContext, runtime: RuntimeScene, name: str, hook: str) -> None:
    _await(ctx, f"a {hook} call to {name}", lambda: bool(_calls(runtime, name, hook)))
    _sync(ctx, runtime)


@given(sentence('the Cluster "{ref:Q}" has been annotated "{key:Q}"'))
def given_cluster_annotated(ctx: ScenarioContext, ref: str, key: str) -> None:
    namespace, name = _split(ref)
    ctx.setup(lambda: ctx.client.patch(CLUSTER_API_VERSION, "Cluster", name, {"metadata": {"annotations": {key: ""}}},
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
    ctx.act(lambda: ctx.client.patch(CLUSTER_API_VERSION, "Cluster", name, {"spec": {"topology": {"version": version}}},
                                     namespace=namespace, patch_type=MERGE))
    _sync(ctx, runtime)


@when(sentence('the extension "{name:Q}" answers {hook:Word} with "{status:Q}"'))
def when_answer_status(ctx: ScenarioContext, runtime: RuntimeScene, name: str, hook: str, status: str) -> None:
    _extension(runtime, name).responder.script(hook, response={"status": status})


@when(sentence('the extension "{name:Q}" is unregistered'))
def when_extension_unregistered(ctx: ScenarioContext, runtime: RuntimeScene, name: str) -> None:
    _extension(runtime, name)
    ctx.act(lambda: ctx.client.delete(RUNTIME_API_VERSION, EXTENSION_CONFIG_KIND, name))


@when(sentence('the extension "{name:Q}" is started again'))
def when_extension_restarted(ctx: ScenarioContext, runtime: RuntimeScene, name: str) -> None:
    ctx.act(lambda: _extension(runtime, name).start())


@when(sentence('a Cluster "{ref:Q}" with a managed topology at version "{version:Q}" and {count:Int} worker Machines '
               'is created'))
def when_cluster_with_workers_created(ctx: ScenarioContext, runtime: RuntimeScene, ref: str, version: str,
                                      count: int) -> None:
    _register(ctx)
    ensure_cluster_class(ctx, _split(ref)[0])
    ctx.act(lambda: ctx.client.create(cluster_object(ref, version, workers=count)))
    _sync(ctx, runtime)


@when(sentence('an ExtensionConfig "{name:Q}" for the extension "{extension:Q}" is created'))
def when_plain_extension_config_created(ctx: ScenarioContext, runtime: RuntimeScene, name: str,
                                        extension: str) -> None:
    ctx.act(lambda: ctx.client.create(_extension_config(name, _extension(runtime, extension))))


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
    ctx.act(lambda: ctx.client.delete(CLUSTER_API_VERSION, "Cluster", name, namespace))
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
    if ctx.chaos:
        # A reconcile that called the hook and then failed on a request is retried at once and calls it again,
        # as upstream's does, which starts the wait anew: only "called again, within the wait" holds.
        before = len(_calls(runtime, name, hook))
        assert ctx.wait_until(lambda: len(_calls(runtime, name, hook)) > before, seconds), (
            f"{hook} was not called again within {seconds} seconds")
        return
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
    assert find_in(ctx.client, INFRASTRUCTURE_API_VERSION, "FakeCluster", name, namespace) is None
    assert find_in(ctx.client, CONTROL_PLANE_API_VERSION, "KubeadmControlPlane", name, namespace) is None


@then(sentence('the Cluster "{ref:Q}" has its infrastructure cluster and control plane'))
def then_created(ctx: ScenarioContext, ref: str) -> None:
    cluster = _cluster(ctx, ref)
    spec = (cluster or {}).get("spec") or {}
    assert spec.get("infrastructureRef") and spec.get("controlPlaneRef"), f"references not set: {spec}"
    namespace, name = _split(ref)
    assert find_in(ctx.client, INFRASTRUCTURE_API_VERSION, "FakeCluster", name, namespace) is not None
    assert find_in(ctx.client, CONTROL_PLANE_API_VERSION, "KubeadmControlPlane", name, namespace) is not None


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
    cluster = _cluster(ctx, ref)
    if cluster is None:
        # Already gone (the gate opened, and the deletion ran its course): it must have been marked on the way.
        namespace, name = _split(ref)
        marked = [r for r in ctx.scene.audit(resource="clusters.cluster.x-k8s.io", name=name, namespace=namespace)
                  if OK_TO_DELETE_ANNOTATION in _annotations(r.get("new"))]
        assert marked, f"the Cluster {ref} went without ever being marked ok-to-delete"
        return
    assert OK_TO_DELETE_ANNOTATION in _annotations(cluster), "no ok-to-delete annotation"


@then(sentence('the Cluster "{ref:Q}" is not marked ok to delete'))
def then_not_ok_to_delete(ctx: ScenarioContext, ref: str) -> None:
    cluster = _cluster(ctx, ref)
    assert cluster is not None, f"the Cluster {ref} is gone: it cannot be held, marked or not"
    assert OK_TO_DELETE_ANNOTATION not in _annotations(cluster), "the Cluster is marked ok-to-delete"


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
    kcp = find_in(ctx.client, CONTROL_PLANE_API_VERSION, "KubeadmControlPlane", name, namespace)
    assert kcp is not None, f"no KubeadmControlPlane {ref}"
    assert (kcp.get("spec") or {}).get("version") == version, f"the control plane is at {kcp.get('spec')}"


def _control_plane_version(ctx: ScenarioContext, ref: str) -> str | None:
    namespace, name = _split(ref)
    kcp = find_in(ctx.client, CONTROL_PLANE_API_VERSION, "KubeadmControlPlane", name, namespace)
    assert kcp is not None, f"no KubeadmControlPlane {ref}"
    return (kcp.get("spec") or {}).get("version")  # type: ignore[no-any-return]


@then(sentence('within {seconds:Int} seconds the KubeadmControlPlane "{ref:Q}" has the version "{version:Q}"'))
def then_control_plane_version_within(ctx: ScenarioContext, seconds: int, ref: str, version: str) -> None:
    assert ctx.wait_until(lambda: _control_plane_version(ctx, ref) == version, seconds), (
        f"the KubeadmControlPlane {ref} is at {_control_plane_version(ctx, ref)!r} after {seconds} seconds")


@then(sentence('the KubeadmControlPlane "{ref:Q}" stays at the version "{version:Q}" for {seconds:Int} seconds'))
def then_control_plane_stays(ctx: ScenarioContext, ref: str, version: str, seconds: int) -> None:
    end = ctx.scene.now() + seconds
    while True:
        actual = _control_plane_version(ctx, ref)
        assert actual == version, f"the KubeadmControlPlane {ref} went to {actual!r} at {ctx.scene.now()}"
        if ctx.scene.now() >= end:
            return
        ctx.scene.advance(min(POLL_SECONDS, end - ctx.scene.now()))


@then(sentence('the ExtensionConfig "{name:Q}" is not discovered, with the message:'))
def then_not_discovered(ctx: ScenarioContext, runtime: RuntimeScene, name: str, docstring: str) -> None:
    condition = _discovered(ctx, name)
    assert condition is not None, f"the ExtensionConfig {name} has no Discovered condition"
    assert (condition.get("status"), condition.get("reason")) == ("False", "DiscoveryFailed"), condition
    expected = docstring.strip()
    if name in runtime.extensions:
        expected = expected.replace("<extension>", runtime.extensions[name].url.removeprefix("https://"))
    assert condition.get("message") == expected, f"message:\n{condition.get('message')}"


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



@then(sentence('the extension "{name:Q}" was asked for {hook:Word} with the timeout "{timeout:Q}"'))
def then_asked_with_timeout(ctx: ScenarioContext, runtime: RuntimeScene, name: str, hook: str, timeout: str) -> None:
    calls = _calls(runtime, name, hook)
    assert calls, f"the extension {name} never received {hook}"
    assert [c.timeout for c in calls] == [timeout] * len(calls), f"timeouts asked for: {[c.timeout for c in calls]}"


@then(sentence('within {seconds:Int} seconds the extension "{name:Q}" answers {hook:Word} with "{status:Q}"'))
def then_answers_within(ctx: ScenarioContext, runtime: RuntimeScene, seconds: int, name: str, hook: str,
                        status: str) -> None:
    _await(ctx, f"a {hook} call to {name} answered {status}", lambda: any(
        (c.response or {}).get("status") == status for c in _calls(runtime, name, hook)), seconds)


@then(sentence('the Cluster "{ref:Q}" has no MachineDeployments'))
def then_no_machine_deployments(ctx: ScenarioContext, ref: str) -> None:
    namespace, name = _split(ref)
    items = ctx.client.list(CLUSTER_API_VERSION, "MachineDeployment", namespace,
                            label_selector=f"cluster.x-k8s.io/cluster-name={name}")["items"]
    assert not items, f"MachineDeployments: {[i['metadata']['name'] for i in items]}"


@then(sentence('the MachineDeployment "{ref:Q}" has the version "{version:Q}"'))
def then_md_version(ctx: ScenarioContext, ref: str, version: str) -> None:
    md = _machine_deployment(ctx, ref)
    assert md is not None, f"no MachineDeployment {ref}"
    assert _version_of(md) == version, f"the MachineDeployment {ref} is at {_version_of(md)!r}"


@then(sentence('within {seconds:Int} seconds the MachineDeployment "{ref:Q}" has the version "{version:Q}"'))
def then_md_version_within(ctx: ScenarioContext, seconds: int, ref: str, version: str) -> None:
    _await(ctx, f"the MachineDeployment {ref} at {version}", lambda: _version_of(_machine_deployment(ctx, ref))
           == version, seconds)


@then(sentence('the MachineDeployment "{ref:Q}" stays at the version "{version:Q}" for {seconds:Int} seconds'))
def then_md_stays(ctx: ScenarioContext, ref: str, version: str, seconds: int) -> None:
    end = ctx.scene.now() + seconds
    while True:
        actual = _version_of(_machine_deployment(ctx, ref))
        assert actual == version, f"the MachineDeployment {ref} went to {actual!r} at {ctx.scene.now()}"
        if ctx.scene.now() >= end:
            return
        ctx.scene.advance(min(POLL_SECONDS, end - ctx.scene.now()))


@then(sentence('within {seconds:Int} seconds every Machine of the MachineDeployment "{ref:Q}" has the version '
               '"{version:Q}"'))
def then_machines_version(ctx: ScenarioContext, seconds: int, ref: str, version: str) -> None:
    def done() -> bool:
        md = _machine_deployment(ctx, ref) or {}
        machines = _machines_of(ctx, ref)
        return len(machines) == int((md.get("spec") or {}).get("replicas") or 0) and all(
            (m.get("spec") or {}).get("version") == version and not m["metadata"].get("deletionTimestamp")
            for m in machines)

    _await(ctx, f"every Machine of {ref} at {version}", done, seconds)


@then(sentence('within {seconds:Int} seconds every Machine of the MachineDeployment "{ref:Q}" is deleting with '
               'reason "{reason:Q}"'))
def then_machines_deleting(ctx: ScenarioContext, seconds: int, ref: str, reason: str) -> None:
    def deleting() -> bool:
        machines = _machines_of(ctx, ref)
        return bool(machines) and all((_condition(m, "Deleting", v1beta2=True) or {}).get("reason") == reason
                                      for m in machines)

    _await(ctx, f"every Machine of {ref} deleting with reason {reason}", deleting, seconds)


@then(sentence('no Machine of the MachineDeployment "{ref:Q}" was deleted before the Cluster "{cluster:Q}" was '
               'marked ok to delete'))
def then_machines_deleted_after_ok(ctx: ScenarioContext, ref: str, cluster: str) -> None:
    namespace, name = _split(cluster)
    marked = next((int(r["seq"]) for r in ctx.scene.audit(resource=CLUSTERS_RESOURCE, name=name, namespace=namespace)
                   if OK_TO_DELETE_ANNOTATION in _annotations(r["new"])), None)
    assert marked is not None, f"the Cluster {cluster} was never marked ok to delete"
    machines = {m["metadata"]["name"] for m in _machines_of(ctx, ref)}
    assert machines, f"the MachineDeployment {ref} has no Machines"
    for machine in sorted(machines):
        deleted = first_deletion_seq(ctx.scene.audit(resource=MACHINES_RESOURCE, name=machine, namespace=namespace))
        assert deleted is None or deleted > marked, (
            f"the Machine {machine} was deleted (#{deleted}) before the Cluster was marked ok to delete (#{marked})")


@then(sentence('within {seconds:Int} seconds the extension "{name:Q}" receives BeforeClusterUpgrade to "{version:Q}" '
               'only once every Machine of the MachineDeployment "{ref:Q}" has the version "{current:Q}"'))
def then_upgrade_waits_for_workers(ctx: ScenarioContext, runtime: RuntimeScene, seconds: int, name: str,
                                   version: str, ref: str, current: str) -> None:
    def called() -> bool:
        calls = [c for c in _calls(runtime, name, "BeforeClusterUpgrade")
                 if c.request.get("toKubernetesVersion") == version]
        if not calls:
            return False
        versions = sorted({str((m.get("spec") or {}).get("version")) for m in _machines_of(ctx, ref)})
        assert versions == [current], f"BeforeClusterUpgrade to {version} was called with Machines at {versions}"
        return True

    _await(ctx, f"a BeforeClusterUpgrade call to {version}", called, seconds)


@then(sentence('the Cluster "{ref:Q}" reports {condition_type:Word} "{status:Q}"'))
def then_cluster_condition_status(ctx: ScenarioContext, ref: str, condition_type: str, status: str) -> None:
    condition = _condition(_cluster(ctx, ref), condition_type)
    assert condition is not None, f"the Cluster {ref} has no {condition_type} condition"
    assert condition.get("status") == status, f"{condition_type}: {condition}"


@then(sentence('within {seconds:Int} seconds the Cluster "{ref:Q}" has its infrastructure cluster and control plane'))
def then_created_within(ctx: ScenarioContext, seconds: int, ref: str) -> None:
    _await(ctx, f"the topology of {ref}", lambda: bool(((_cluster(ctx, ref) or {}).get("spec") or {}).get(
        "controlPlaneRef")), seconds)
    then_created(ctx, ref)
