"""The fake bootstrap provider (``bootstrap.cluster.x-k8s.io/v1beta1`` FakeBootstrapConfig), as a Cluster
API bootstrap provider serves KubeadmConfigs.

Once a Machine owns a FakeBootstrapConfig, the provider writes the bootstrap data Secret (named as the
config, type ``cluster.x-k8s.io/secret``, keys ``value`` and ``format``, owned by the config) and sets
``status.dataSecretName`` and ``status.ready: true``. It keeps the finalizer
``fakebootstrapconfig.bootstrap.cluster.x-k8s.io`` and removes it when the config is deleted.

Knobs (annotations on the FakeBootstrapConfig, see :mod:`harness.world.providers.knobs`):
``harness.test/provision-delay``, ``harness.test/deletion-delay``, ``harness.test/deletion-stuck: "true"``.
"""

from __future__ import annotations

import base64
from typing import Any

from harness.client import MERGE, ApiError, Client, Controller, Request, Result
from harness.kube.names.capi import (
    BOOTSTRAP_API_VERSION,
    CLUSTER_NAME_LABEL,
    FAKE_BOOTSTRAP_CONFIG_KIND,
    KUBECONFIG_SECRET_TYPE,
    MACHINE_KIND,
)
from harness.world.providers import knobs

FINALIZER = "fakebootstrapconfig.bootstrap.cluster.x-k8s.io"
DATA_FORMAT = "cloud-config"
BOOTSTRAP_DATA = "#cloud-config\n# bootstrap data of {namespace}/{name} (fake)\n"


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.get("metadata") or {}


class FakeBootstrapProvider(Controller):
    """Writes bootstrap data for FakeBootstrapConfigs owned by Machines; releases them when deleted."""

    name = "fake-bootstrap"

    def __init__(self, client: Client) -> None:
        super().__init__()
        self.client = client

    def setup(self) -> None:
        self.watch(self.client, BOOTSTRAP_API_VERSION, FAKE_BOOTSTRAP_CONFIG_KIND)

    def reconcile(self, request: Request) -> Result | None:
        try:
            config = self.client.get(BOOTSTRAP_API_VERSION, FAKE_BOOTSTRAP_CONFIG_KIND, request.name, request.namespace)
        except ApiError as err:
            if err.code == 404:
                return None
            raise
        meta = _meta(config)
        finalizers = list(meta.get("finalizers") or [])
        if meta.get("deletionTimestamp"):
            if FINALIZER not in finalizers or knobs.deletion_stuck(config):
                return None
            due = knobs.gone_at(config)
            if self.now() < due:
                return Result(requeue_after=due - self.now())
            finalizers.remove(FINALIZER)
            try:
                self.client.patch(
                    BOOTSTRAP_API_VERSION,
                    FAKE_BOOTSTRAP_CONFIG_KIND,
                    request.name,
                    {"metadata": {"finalizers": finalizers}},
                    namespace=request.namespace,
                    patch_type=MERGE,
                )
            except ApiError as err:
                if err.code != 404:
                    raise
            return None
        if FINALIZER not in finalizers:
            self.client.patch(
                BOOTSTRAP_API_VERSION,
                FAKE_BOOTSTRAP_CONFIG_KIND,
                request.name,
                {"metadata": {"finalizers": finalizers + [FINALIZER]}},
                namespace=request.namespace,
                patch_type=MERGE,
            )
            return None
        if (config.get("status") or {}).get("ready"):
            return None
        if not any(ref.get("kind") == MACHINE_KIND for ref in meta.get("ownerReferences") or []):
            return None  # waiting for a Machine to own it
        due = knobs.ready_at(config)
        if self.now() < due:
            return Result(requeue_after=due - self.now())
        self._ensure_secret(config)
        config["status"] = {**(config.get("status") or {}), "ready": True, "dataSecretName": request.name}
        self.client.update_status(config)
        return None

    def _ensure_secret(self, config: dict[str, Any]) -> None:
        meta = _meta(config)
        data = BOOTSTRAP_DATA.format(namespace=meta.get("namespace", ""), name=meta["name"])
        labels = {k: v for k, v in (meta.get("labels") or {}).items() if k == CLUSTER_NAME_LABEL}
        secret = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {
                "name": meta["name"],
                "namespace": meta.get("namespace"),
                "labels": labels,
                "ownerReferences": [
                    {
                        "apiVersion": BOOTSTRAP_API_VERSION,
                        "kind": FAKE_BOOTSTRAP_CONFIG_KIND,
                        "name": meta["name"],
                        "uid": meta.get("uid"),
                        "controller": True,
                    }
                ],
            },
            "type": KUBECONFIG_SECRET_TYPE,
            "data": {
                "value": base64.b64encode(data.encode()).decode(),
                "format": base64.b64encode(DATA_FORMAT.encode()).decode(),
            },
        }
        try:
            self.client.create(secret)
        except ApiError as err:
            if err.code != 409:
                raise
