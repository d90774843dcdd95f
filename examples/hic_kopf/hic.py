"""A hook implementing controller (HIC) written with kopf.

kopf watches the Machines (and lists them again after a dropped watch or a 410 Expired); this
operator's only handler is an event handler, so kopf stores nothing on the Machines (no progress or
last-handled annotations, no finalizers). For the Machines its config's selector picks it

* adds its hooks while the Machine is not being deleted, when the config says ``addsHooks: true``;
* once the Machine is being deleted, does its work (here: it logs it) and removes each of its hooks
  with a JSON patch that first tests the annotation still holds its value.

Writes go through the ``kubernetes`` client and are retried on 409, 429 (honouring Retry-After) and
5xx: kopf does not retry an event handler, and a hook left behind holds the Machine forever.

The config is the file in ``LIFECYCLE_TCK_HIC_CONFIG`` (the Lifecycle TCK's HIC config format).

Run: ``KUBECONFIG=... LIFECYCLE_TCK_HIC_CONFIG=hic-config.yaml kopf run --standalone --all-namespaces hic.py``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import kopf
import yaml
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

GROUP, VERSION, PLURAL = "cluster.x-k8s.io", "v1beta1", "machines"
PREFIXES = {"pre-drain": "pre-drain.delete.hook.machine.cluster.x-k8s.io",
            "pre-terminate": "pre-terminate.delete.hook.machine.cluster.x-k8s.io"}
JSON_PATCH = "application/json-patch+json"
RETRIES = 10

_CONFIG = yaml.safe_load(Path(os.environ["LIFECYCLE_TCK_HIC_CONFIG"]).read_text()) or {}
HOOKS = {f"{PREFIXES[h['lifecyclePoint']]}/{h['name']}": str(h.get("owner") or "") for h in _CONFIG["hooks"]}
ADDS_HOOKS = bool(_CONFIG.get("addsHooks", False))
# kopf filters by labels itself: {key: value} as matchLabels.
LABELS = dict(((_CONFIG.get("selector") or {}).get("matchLabels")) or {})


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    """No peering, no Kubernetes Events, short retries of kopf's own requests."""
    settings.peering.standalone = True
    settings.posting.enabled = False
    settings.networking.error_backoffs = [0.1, 0.2, 0.5, 1, 2]
    settings.watching.server_timeout = 300
    config.load_kube_config()


def _pointer(key: str) -> str:
    return "/metadata/annotations/" + key.replace("~", "~0").replace("/", "~1")


def _patch(namespace: str, name: str, body: Any, logger: Any) -> None:
    api = client.CustomObjectsApi()
    for attempt in range(RETRIES):
        try:
            extra = {"_content_type": JSON_PATCH} if isinstance(body, list) else {}
            api.patch_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, name, body, **extra)
            return
        except ApiException as err:
            if err.status in (404, 422):  # gone, or the hook changed under us: nothing to do
                return
            if err.status not in (409, 429) and err.status < 500:
                raise
            wait = float((err.headers or {}).get("Retry-After") or 0.05 * 2 ** attempt)
            logger.info(f"patch answered {err.status}; retrying in {wait:.2f}s")
            time.sleep(min(wait, 5.0))
    logger.error("gave up patching the Machine")


@kopf.on.event(GROUP, VERSION, PLURAL, labels=LABELS or None)
def on_machine(event: kopf.RawEvent, meta: kopf.Meta, logger: Any, **_: Any) -> None:
    """Add our hooks to a Machine that is not being deleted (if we do); remove them once it is."""
    if event.get("type") == "DELETED":
        return
    namespace, name = meta.get("namespace") or "default", meta["name"]
    annotations = dict(meta.get("annotations") or {})
    if not meta.get("deletionTimestamp"):
        missing = {k: v for k, v in HOOKS.items() if k not in annotations}
        if ADDS_HOOKS and missing:
            _patch(namespace, name, {"metadata": {"annotations": missing}}, logger)
        return
    for key in HOOKS:
        if key in annotations:
            logger.info(f"the Machine is being deleted: doing the work of {key}")
            _patch(namespace, name, [{"op": "test", "path": _pointer(key), "value": annotations[key]},
                                     {"op": "remove", "path": _pointer(key)}], logger)
