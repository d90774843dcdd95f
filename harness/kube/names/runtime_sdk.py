"""Well-known names of the Cluster API Runtime SDK: the ExtensionConfig kind (``runtime.cluster.x-k8s.io/v1alpha1``,
cluster-scoped), its annotations and conditions, the failure policies and response statuses, the handler
defaults and limits, and the hook catalog (``hooks.runtime.cluster.x-k8s.io/v1alpha1``) of the classic
lifecycle hooks (Cluster API <= v1.11, seed 002) with the pure naming functions of the protocol
(``GVHToPath``, ``NameForHandler``). Names only: the reference client (controllers/runtime) and the oracle
(harness/targets/extension.py) each implement the protocol on their own.
"""

from __future__ import annotations

from dataclasses import dataclass

RUNTIME_API_GROUP = "runtime.cluster.x-k8s.io"
RUNTIME_API_VERSION = RUNTIME_API_GROUP + "/v1alpha1"
EXTENSION_CONFIG_KIND = "ExtensionConfig"

# Annotations (api/runtime/v1beta2/extensionconfig_types.go; internal/hooks for ok-to-delete).
INJECT_CA_FROM_SECRET_ANNOTATION = "runtime.cluster.x-k8s.io/inject-ca-from-secret"
PENDING_HOOKS_ANNOTATION = "runtime.cluster.x-k8s.io/pending-hooks"
OK_TO_DELETE_ANNOTATION = "runtime.cluster.x-k8s.io/ok-to-delete"
# The Secret key the CA is injected from (tlsCAKey).
CA_KEY = "ca.crt"

# The Discovered condition: v1beta1 (status.conditions) and v1beta2 (status.v1beta2.conditions).
DISCOVERED = "Discovered"
DISCOVERED_REASON = "Discovered"
NOT_DISCOVERED_REASON = "NotDiscovered"
DISCOVERY_FAILED_V1BETA1_REASON = "DiscoveryFailed"
DISCOVERY_ERROR_MESSAGE = "Error in discovery: {error}"

# Failure policies and response statuses.
FAILURE_POLICY_FAIL = "Fail"
FAILURE_POLICY_IGNORE = "Ignore"
STATUS_SUCCESS = "Success"
STATUS_FAILURE = "Failure"

# Handler defaults and limits (DefaultHandlersTimeoutSeconds, defaultDiscoveryTimeout).
DEFAULT_HANDLER_TIMEOUT_SECONDS = 10
MAX_HANDLER_TIMEOUT_SECONDS = 30
DISCOVERY_TIMEOUT_SECONDS = 10
DEFAULT_SERVICE_PORT = 443

HOOKS_GROUP = "hooks.runtime.cluster.x-k8s.io"
HOOKS_VERSION = "v1alpha1"
HOOKS_API_VERSION = f"{HOOKS_GROUP}/{HOOKS_VERSION}"

DISCOVERY = "Discovery"
BEFORE_CLUSTER_CREATE = "BeforeClusterCreate"
AFTER_CONTROL_PLANE_INITIALIZED = "AfterControlPlaneInitialized"
BEFORE_CLUSTER_UPGRADE = "BeforeClusterUpgrade"
AFTER_CONTROL_PLANE_UPGRADE = "AfterControlPlaneUpgrade"
AFTER_CLUSTER_UPGRADE = "AfterClusterUpgrade"
BEFORE_CLUSTER_DELETE = "BeforeClusterDelete"
DISCOVERY_RESPONSE_KIND = DISCOVERY + "Response"


@dataclass(frozen=True)
class Hook:
    """A lifecycle hook of the catalog: its name and whether its response carries ``retryAfterSeconds``
    (a retry-capable hook can block the lifecycle transition it guards)."""

    name: str
    retry: bool

    @property
    def request_kind(self) -> str:
        """The kind of the hook's request (``<Hook>Request``)."""
        return self.name + "Request"

    @property
    def response_kind(self) -> str:
        """The kind of the hook's response (``<Hook>Response``)."""
        return self.name + "Response"

    def group_hook(self) -> str:
        """``GroupHook.String()``: ``<Hook>.<group>``, as errors name a hook."""
        return f"{self.name}.{HOOKS_GROUP}"


# The classic catalog (lifecyclehooks_types.go up to v1.11): AfterControlPlaneInitialized and
# AfterClusterUpgrade answer with a CommonResponse (no retry), the others with a CommonRetryResponse.
CATALOG: dict[str, Hook] = {hook.name: hook for hook in (
    Hook(BEFORE_CLUSTER_CREATE, retry=True),
    Hook(AFTER_CONTROL_PLANE_INITIALIZED, retry=False),
    Hook(BEFORE_CLUSTER_UPGRADE, retry=True),
    Hook(AFTER_CONTROL_PLANE_UPGRADE, retry=True),
    Hook(AFTER_CLUSTER_UPGRADE, retry=False),
    Hook(BEFORE_CLUSTER_DELETE, retry=True),
)}
DISCOVERY_HOOK = Hook(DISCOVERY, retry=False)


def hook_path(hook: str, handler: str = "") -> str:
    """``GVHToPath``: ``/hooks.runtime.cluster.x-k8s.io/v1alpha1/<lowercase hook>[/<lowercase handler>]``."""
    path = f"/{HOOKS_GROUP}/{HOOKS_VERSION}/{hook.lower()}"
    return f"{path}/{handler.lower()}" if handler else path


def handler_name(handler: str, extension_config: str) -> str:
    """``NameForHandler``: the registered name ``<handler>.<extension config>``."""
    return f"{handler}.{extension_config}"
