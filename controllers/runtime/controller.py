"""The ExtensionConfig controller (``core/reconcilers/extensionconfig``): CA injection and discovery.

Per ExtensionConfig (cluster-scoped), on every change of it or of the Secret its
``runtime.cluster.x-k8s.io/inject-ca-from-secret: <namespace>/<name>`` annotation names:

1. CA injection: the Secret's ``ca.crt`` becomes ``spec.clientConfig.caBundle`` (a patch, only when it
   differs). A malformed annotation, a missing Secret or key is a reconcile error (retried with back-off).
2. Discovery over HTTPS (:meth:`RuntimeClient.discover`). Success replaces ``status.handlers`` and sets
   ``Discovered`` True (v1beta1 ``status.conditions``; v1beta2 ``status.v1beta2.conditions`` with reason
   ``Discovered``). Failure sets ``Discovered`` False (v1beta1 reason ``DiscoveryFailed``, severity Error;
   v1beta2 reason ``NotDiscovered``), message ``Error in discovery: <error>``, keeps the previous handlers,
   and is a reconcile error, so discovery is retried with back-off.

Deleting an ExtensionConfig needs nothing here: the Runtime SDK client reads registrations from the API
and skips ExtensionConfigs that are being deleted or gone.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from controllers.machine import conditions
from controllers.runtime.api import (
    API_VERSION,
    CA_KEY,
    DISCOVERED,
    DISCOVERED_REASON,
    DISCOVERY_ERROR_MESSAGE,
    DISCOVERY_FAILED_V1BETA1_REASON,
    EXTENSION_CONFIG_KIND,
    INJECT_CA_FROM_SECRET_ANNOTATION,
    NOT_DISCOVERED_REASON,
)
from controllers.runtime.client import RuntimeClient, RuntimeSDKError
from harness.client import MERGE, ApiError, Client, Controller, Request, Result, find_in
from harness.kube.names.core import CONDITION_FALSE, CONDITION_TRUE

SECRET_NAME_MALFORMED = "failed to reconcile caBundle: secret name {name} must be in the form <namespace>/<name>"
SECRET_GET_FAILED = "failed to reconcile caBundle: failed to get secret {name}: {error}"
SECRET_KEY_MISSING = 'failed to reconcile caBundle: secret {name} does not contain a "ca.crt" entry'
DISCOVER_CONFIG_FAILED = "failed to discover ExtensionConfig {name}: {error}"


class ExtensionConfigController(Controller):
    """Injects CA bundles and runs discovery for ExtensionConfigs."""

    name = "extensionconfig"

    def __init__(self, client: Client) -> None:
        super().__init__()
        self.client = client
        self.runtime = RuntimeClient(client)

    def setup(self) -> None:
        self.watch(self.client, API_VERSION, EXTENSION_CONFIG_KIND)
        self.watch(self.client, "v1", "Secret", self._secret_to_configs)

    def _secret_to_configs(self, _event: str, secret: dict[str, Any]) -> Iterable[Request]:
        meta = secret.get("metadata") or {}
        key = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
        try:
            configs = self.client.list(API_VERSION, EXTENSION_CONFIG_KIND)["items"]
        except (ApiError, ConnectionError):
            return ()
        return [Request("", c["metadata"]["name"]) for c in configs
                if ((c.get("metadata") or {}).get("annotations") or {}).get(INJECT_CA_FROM_SECRET_ANNOTATION) == key]

    def reconcile(self, request: Request) -> Result | None:
        config = find_in(self.client, API_VERSION, EXTENSION_CONFIG_KIND, request.name)
        if config is None or (config.get("metadata") or {}).get("deletionTimestamp"):
            return None
        config = self._inject_ca(config)
        original = copy.deepcopy(config)
        now = self.now()
        try:
            handlers = self.runtime.discover(config)
        except RuntimeSDKError as err:
            message = DISCOVERY_ERROR_MESSAGE.format(error=err)
            conditions.mark_false(config, DISCOVERED, DISCOVERY_FAILED_V1BETA1_REASON, conditions.SEVERITY_ERROR,
                                  message, now)
            conditions.set_v1beta2(config, DISCOVERED, CONDITION_FALSE, NOT_DISCOVERED_REASON, message, now)
            self._write_status(config, original)
            raise RuntimeSDKError(DISCOVER_CONFIG_FAILED.format(name=request.name, error=err)) from None
        config.setdefault("status", {})["handlers"] = handlers
        conditions.mark_true(config, DISCOVERED, now)
        conditions.set_v1beta2(config, DISCOVERED, CONDITION_TRUE, DISCOVERED_REASON, "", now)
        self._write_status(config, original)
        return None

    def _write_status(self, config: dict[str, Any], original: dict[str, Any]) -> None:
        # Conditions keep their transition time while their state holds: an unchanged status is no write.
        if (config.get("status") or {}) != (original.get("status") or {}):
            self.client.update_status(config)

    def _inject_ca(self, config: dict[str, Any]) -> dict[str, Any]:
        raw = ((config.get("metadata") or {}).get("annotations") or {}).get(INJECT_CA_FROM_SECRET_ANNOTATION)
        if raw is None:
            return config
        namespace, sep, name = raw.partition("/")
        if not sep or not namespace or not name:
            raise RuntimeSDKError(SECRET_NAME_MALFORMED.format(name=_quote(raw)))
        try:
            secret = self.client.get("v1", "Secret", name, namespace)
        except ApiError as err:
            raise RuntimeSDKError(SECRET_GET_FAILED.format(name=_quote(raw), error=err)) from None
        ca = (secret.get("data") or {}).get(CA_KEY)
        if ca is None:
            raise RuntimeSDKError(SECRET_KEY_MISSING.format(name=raw))
        if (config.get("spec") or {}).get("clientConfig", {}).get("caBundle") == ca:
            return config
        return self.client.patch(API_VERSION, EXTENSION_CONFIG_KIND, config["metadata"]["name"],
                                 {"spec": {"clientConfig": {"caBundle": ca}}}, patch_type=MERGE)


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'

