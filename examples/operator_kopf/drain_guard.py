"""A small kopf operator that owns one Cluster API pre-drain hook.

Cluster API drains a deleting Machine's Node only once no annotation with the prefix
``pre-drain.delete.hook.machine.cluster.x-k8s.io`` is left; each owner removes its own when its
work is done. This operator adds ``pre-drain.delete.hook.machine.cluster.x-k8s.io/drain-guard`` to
every Machine labelled ``app.example.com/drain-guard: "true"`` and, once such a Machine is being
deleted, records that it let it go (a ConfigMap ``drain-guard-<machine>``) and removes its own hook,
never another owner's.

Run: ``kopf run --standalone --namespace default drain_guard.py`` (KUBECONFIG names the cluster).
"""

from __future__ import annotations

import os
from typing import Any

import kopf
import kubernetes

GROUP, VERSION, PLURAL = "cluster.x-k8s.io", "v1beta1", "machines"
HOOK = "pre-drain.delete.hook.machine.cluster.x-k8s.io/drain-guard"
OWNER = "drain-guard"
LABEL = "app.example.com/drain-guard"
SELECTED = {LABEL: "true"}
RECORD = "drain-guard-{}"


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    """Standalone (no peering objects); watches end and resume now and then."""
    settings.peering.standalone = True
    settings.watching.server_timeout = 60
    settings.posting.enabled = False


@kopf.on.resume(GROUP, VERSION, PLURAL, labels=SELECTED)
@kopf.on.create(GROUP, VERSION, PLURAL, labels=SELECTED)
def add_hook(meta: kopf.Meta, patch: kopf.Patch, **_: Any) -> None:
    """A selected Machine that is not deleting carries our hook."""
    if not meta.get("deletionTimestamp") and HOOK not in (meta.get("annotations") or {}):
        patch.metadata.annotations[HOOK] = OWNER


@kopf.on.event(GROUP, VERSION, PLURAL, labels=SELECTED)
def release_hook(event: kopf.RawEvent, meta: kopf.Meta, patch: kopf.Patch, logger: Any, **_: Any) -> None:
    """Once a selected Machine is deleting: do our work, then remove our hook (only ours)."""
    if event.get("type") == "DELETED" or not meta.get("deletionTimestamp"):
        return
    if (meta.get("annotations") or {}).get(HOOK) != OWNER:
        return
    record = {"metadata": {"name": RECORD.format(meta["name"])}, "data": {"machine": meta["name"]}}
    try:
        kubernetes.client.CoreV1Api().create_namespaced_config_map(meta["namespace"], record)
    except kubernetes.client.ApiException as err:
        if err.status != 409:  # already recorded by an earlier pass
            raise
    patch.metadata.annotations[HOOK] = None  # a merge patch: null removes just this key
    logger.info("released %s", HOOK)


@kopf.on.login()
def login(**_: Any) -> kopf.ConnectionInfo:
    """The cluster the kubeconfig in KUBECONFIG names, for kopf and for the client the handlers use.
    Read now, not when the kubernetes package was imported (it reads KUBECONFIG once, then)."""
    kubernetes.config.load_kube_config(config_file=os.environ.get("KUBECONFIG"))
    config = kubernetes.client.Configuration.get_default_copy()
    token = (config.api_key or {}).get("authorization", "").removeprefix("Bearer ") or None
    return kopf.ConnectionInfo(server=config.host, ca_path=config.ssl_ca_cert, insecure=not config.verify_ssl,
                               token=token, certificate_path=config.cert_file, private_key_path=config.key_file)
