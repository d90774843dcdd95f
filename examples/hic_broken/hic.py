"""A deliberately NON-compliant hook implementing controller, to show what the Lifecycle TCK catches.

Two mistakes, both common:

1. it acts as soon as it sees a Machine carrying a hook at its lifecycle points -- without waiting for
   the Machine to be deleted -- so the hook protects nothing;
2. it removes every hook at those points, not only its own, so other owners' hooks go too.

``lifecycle-tck conformance --target hic --hic-command "python hic.py" --hic-config hic-config.yaml``
fails it, naming the scenarios and the writes (which annotation, whose hook, at what virtual time).
Otherwise it is an ordinary list-and-watch loop with the ``kubernetes`` client.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client, config, watch
from kubernetes.client.exceptions import ApiException

GROUP, VERSION, PLURAL = "cluster.x-k8s.io", "v1beta1", "machines"
PREFIXES = {"pre-drain": "pre-drain.delete.hook.machine.cluster.x-k8s.io",
            "pre-terminate": "pre-terminate.delete.hook.machine.cluster.x-k8s.io"}

log = logging.getLogger("broken-hic")


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    data = yaml.safe_load(Path(os.environ["LIFECYCLE_TCK_HIC_CONFIG"]).read_text()) or {}
    prefixes = tuple(PREFIXES[h["lifecyclePoint"]] + "/" for h in data["hooks"])
    config.load_kube_config()
    api = client.CustomObjectsApi()

    def handle(machine: dict[str, Any]) -> None:
        meta = machine["metadata"]
        # Mistake 2: every hook at our points, whoever owns it.
        hooks = [k for k in meta.get("annotations") or {} if k.startswith(prefixes)]
        # Mistake 1: no look at metadata.deletionTimestamp.
        if hooks:
            log.info("removing %s from %s", hooks, meta["name"])
            try:
                api.patch_namespaced_custom_object(GROUP, VERSION, meta["namespace"], PLURAL, meta["name"],
                                                   {"metadata": {"annotations": {k: None for k in hooks}}})
            except ApiException as err:
                log.info("patch answered %s", err.status)

    while True:
        try:
            listed = api.list_cluster_custom_object(GROUP, VERSION, PLURAL)
            for machine in listed["items"]:
                handle(machine)
            for event in watch.Watch().stream(api.list_cluster_custom_object, GROUP, VERSION, PLURAL,
                                              resource_version=listed["metadata"]["resourceVersion"],
                                              timeout_seconds=300):
                if event["type"] == "ERROR":
                    break
                if event["type"] in ("ADDED", "MODIFIED"):
                    handle(event["object"])
        except Exception as err:  # noqa: BLE001
            log.info("list/watch failed (%s); listing again", err)
            time.sleep(0.1)


if __name__ == "__main__":
    main()
