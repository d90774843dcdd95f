"""A plain ``kubernetes``-client controller that owns one Cluster API pre-terminate hook.

Cluster API deletes a Machine's infrastructure only once no annotation with the prefix
``pre-terminate.delete.hook.machine.cluster.x-k8s.io`` is left. This controller backs up a deleting
Machine's volumes first: for every Machine carrying its hook
``pre-terminate.delete.hook.machine.cluster.x-k8s.io/volume-backup`` that is being deleted, it writes
a ConfigMap ``backup-<machine>`` (its stand-in for a backup), then removes its hook with a JSON patch
that tests the hook's value first, so a concurrent change is never overwritten and another owner's
hook is never touched. It lists, then watches; a watch that ends or expires (410) lists again.

Run: ``python volume_backup.py`` (KUBECONFIG names the cluster); stop it with Ctrl-C.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from kubernetes import client, config, watch

GROUP, VERSION, PLURAL = "cluster.x-k8s.io", "v1beta1", "machines"
HOOK = "pre-terminate.delete.hook.machine.cluster.x-k8s.io/volume-backup"
OWNER = "volume-backup"
BACKUP = "backup-{}"
WATCH_SECONDS = 30
EXPIRED = 410
CONFLICT = 409
JSON_PATCH = "application/json-patch+json"


def _escaped(key: str) -> str:
    """An annotation key as a JSON pointer segment (RFC 6901)."""
    return key.replace("~", "~0").replace("/", "~1")


def reconcile(custom: client.CustomObjectsApi, core: client.CoreV1Api, machine: dict[str, Any]) -> bool:
    """Back up a deleting Machine that carries our hook, then remove the hook; True if it acted."""
    meta = machine["metadata"]
    if not meta.get("deletionTimestamp") or (meta.get("annotations") or {}).get(HOOK) != OWNER:
        return False
    backup = {"metadata": {"name": BACKUP.format(meta["name"])}, "data": {"machine": meta["name"]}}
    try:
        core.create_namespaced_config_map(meta["namespace"], backup)
    except client.ApiException as err:
        if err.status != CONFLICT:  # 409: backed up already, by an earlier pass
            raise
    path = f"/metadata/annotations/{_escaped(HOOK)}"
    patch = [{"op": "test", "path": path, "value": OWNER}, {"op": "remove", "path": path}]
    try:
        # Clients from v35 on send a merge patch unless told the body is a JSON patch.
        custom.patch_namespaced_custom_object(GROUP, VERSION, meta["namespace"], PLURAL, meta["name"], patch,
                                              _content_type=JSON_PATCH)
    except client.ApiException as err:
        if err.status not in (404, 422):  # gone, or the hook changed meanwhile: the next event decides
            raise
    return True


def run(stop: threading.Event, api_client: client.ApiClient | None = None) -> None:
    """Reconcile every Machine, then every change to one, until ``stop`` is set."""
    custom, core = client.CustomObjectsApi(api_client), client.CoreV1Api(api_client)
    while not stop.is_set():
        listing = custom.list_cluster_custom_object(GROUP, VERSION, PLURAL)
        for machine in listing["items"]:
            reconcile(custom, core, machine)
        stream = watch.Watch()
        try:
            for event in stream.stream(custom.list_cluster_custom_object, GROUP, VERSION, PLURAL,
                                       resource_version=listing["metadata"]["resourceVersion"],
                                       timeout_seconds=WATCH_SECONDS):
                if stop.is_set():
                    stream.stop()
                    break
                if event["type"] in ("ADDED", "MODIFIED"):
                    reconcile(custom, core, event["object"])
        except client.ApiException as err:
            if err.status != EXPIRED:
                raise


def main() -> None:
    config.load_kube_config(config_file=os.environ.get("KUBECONFIG"))
    stop = threading.Event()
    try:
        run(stop)
    except KeyboardInterrupt:
        stop.set()


if __name__ == "__main__":
    main()
