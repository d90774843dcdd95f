"""A hook implementing controller (HIC) written with the plain ``kubernetes`` client.

It manages the hooks its config names (the file in ``LIFECYCLE_TCK_HIC_CONFIG``, or the first argument;
the format is the Lifecycle TCK's HIC config): for each Machine its selector picks it

* adds its hooks while the Machine is not being deleted, when the config says ``addsHooks: true``;
* once the Machine is being deleted, does its work (here: it logs it) and removes each of its hooks with
  a JSON patch that first tests the annotation still holds its value, so it never removes a hook that
  someone else re-wrote, and never touches another owner's hook.

It lists Machines, then watches from the list's resourceVersion; when the watch ends or answers
410 Expired it lists again, so no Machine is missed. Writes are retried on 409, 429 (honouring
Retry-After) and 5xx. It keeps no state: after a restart the list shows it where it was.

Run: ``KUBECONFIG=... python hic.py hic-config.yaml``.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client, config, watch
from kubernetes.client.exceptions import ApiException

GROUP, VERSION, PLURAL = "cluster.x-k8s.io", "v1beta1", "machines"
PREFIXES = {"pre-drain": "pre-drain.delete.hook.machine.cluster.x-k8s.io",
            "pre-terminate": "pre-terminate.delete.hook.machine.cluster.x-k8s.io"}
RETRIES = 10
JSON_PATCH = "application/json-patch+json"
WATCH_SECONDS = 300

log = logging.getLogger("hic")


def load(path: str) -> tuple[dict[str, str], bool, str | None]:
    """The hooks (annotation key -> owner), whether to add them, and the label selector."""
    data = yaml.safe_load(Path(path).read_text()) or {}
    hooks = {f"{PREFIXES[h['lifecyclePoint']]}/{h['name']}": str(h.get("owner") or "") for h in data["hooks"]}
    labels = ((data.get("selector") or {}).get("matchLabels")) or {}
    selector = ",".join(f"{k}={v}" for k, v in labels.items()) or None
    return hooks, bool(data.get("addsHooks", False)), selector


def pointer(key: str) -> str:
    return "/metadata/annotations/" + key.replace("~", "~0").replace("/", "~1")


def patch(api: client.CustomObjectsApi, namespace: str, name: str, body: Any) -> None:
    """A merge patch (a dict) or a JSON patch (a list). Clients from v35 on send merge patches unless
    told otherwise; older ones choose by the body's type and do not know ``_content_type``."""
    if isinstance(body, list):
        try:
            api.patch_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, name, body,
                                               _content_type=JSON_PATCH)
            return
        except TypeError:
            pass
    api.patch_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, name, body)


class Hic:
    def __init__(self, hooks: dict[str, str], adds: bool, selector: str | None) -> None:
        self.hooks, self.adds, self.selector = hooks, adds, selector
        self.api = client.CustomObjectsApi()

    def write(self, namespace: str, name: str, body: Any) -> None:
        """Patch the Machine, retrying what a busy API server answers; a failed test op (422) or a
        Machine that is gone (404) means there is nothing left to do."""
        for attempt in range(RETRIES):
            try:
                patch(self.api, namespace, name, body)
                return
            except ApiException as err:
                if err.status in (404, 422):
                    return
                if err.status not in (409, 429) and err.status < 500:
                    raise
                wait = float((err.headers or {}).get("Retry-After") or 0.05 * 2 ** attempt)
                log.info("patch of %s/%s answered %s; retrying in %.2fs", namespace, name, err.status, wait)
                time.sleep(min(wait, 5.0))
        log.error("gave up patching %s/%s", namespace, name)

    def handle(self, machine: dict[str, Any]) -> None:
        meta = machine.get("metadata") or {}
        namespace, name = meta.get("namespace", "default"), meta["name"]
        annotations = meta.get("annotations") or {}
        if not meta.get("deletionTimestamp"):
            missing = {k: v for k, v in self.hooks.items() if k not in annotations}
            if self.adds and missing:
                # A merge patch adds just these keys.
                self.write(namespace, name, {"metadata": {"annotations": missing}})
            return
        for key in self.hooks:
            if key in annotations:
                log.info("Machine %s/%s is being deleted: doing the work of %s", namespace, name, key)
                self.write(namespace, name, [{"op": "test", "path": pointer(key), "value": annotations[key]},
                                             {"op": "remove", "path": pointer(key)}])

    def run(self) -> None:
        while True:
            try:
                listed = self.api.list_cluster_custom_object(GROUP, VERSION, PLURAL, label_selector=self.selector)
                for machine in listed.get("items") or []:
                    self.handle(machine)
                version = listed["metadata"]["resourceVersion"]
                stream = watch.Watch().stream(self.api.list_cluster_custom_object, GROUP, VERSION, PLURAL,
                                              label_selector=self.selector, resource_version=version,
                                              timeout_seconds=WATCH_SECONDS)
                for event in stream:
                    if event["type"] == "ERROR":
                        break  # 410 Expired and friends: list again
                    if event["type"] in ("ADDED", "MODIFIED"):
                        self.handle(event["object"])
            except ApiException as err:
                log.info("list/watch answered %s; listing again", err.status)
                time.sleep(0.1)
            except Exception as err:  # noqa: BLE001 - a connection that broke: list again
                log.info("list/watch failed (%s); listing again", err)
                time.sleep(0.1)


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    path = sys.argv[1] if len(sys.argv) > 1 else os.environ["LIFECYCLE_TCK_HIC_CONFIG"]
    config.load_kube_config()
    Hic(*load(path)).run()


if __name__ == "__main__":
    main()
