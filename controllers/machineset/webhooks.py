"""Cluster API's admission webhooks for MachineSets and MachineDeployments (``internal/webhooks`` of v1.10),
as API server admission plugins ``(operation, resource, new, old) -> [FieldError]``.

Defaulting (both kinds): the ``cluster.x-k8s.io/cluster-name`` label; ``spec.replicas`` 1 when unset
(the autoscaler min/max-size annotations are not read); the ``v`` of the template's ``spec.version``;
the namespaces of the template's references. MachineSet: ``spec.deletePolicy`` ``Random``; without a
selector, ``cluster.x-k8s.io/set-name: <name>`` on the selector and the template. MachineDeployment:
``minReadySeconds`` 0, ``revisionHistoryLimit`` 1, ``progressDeadlineSeconds`` 600, strategy
``RollingUpdate`` with ``maxSurge`` 1 and ``maxUnavailable`` 0; without a selector,
``cluster.x-k8s.io/deployment-name: <name>`` on the selector and the template; the cluster-name label
on both.

Validation: the selector must convert and match the template's labels; ``spec.clusterName`` is
immutable; the version must be semantic; a MachineDeployment's name must be a valid label value and its
``maxSurge``/``maxUnavailable`` ints or percentages. A denial is 422 ``Invalid`` with the message
prefixed ``admission webhook "<name>" denied the request: ``, as kube-apiserver relays it.
"""

from __future__ import annotations

import re
from typing import Any

from controllers.machine.api import meta
from controllers.machine.errors import go_quote
from controllers.machine.webhooks import INVALID_VERSION, KUBE_SEMVER, default_machine_spec, webhook_admitter
from controllers.machineset.api import (
    DELETE_POLICY_RANDOM,
    MAX_NAME_LENGTH,
    ROLLING_UPDATE,
    format_label_value,
    selector_matches,
    selector_string,
)
from harness.kube import errors as api_errors
from harness.kube.errors import FieldError
from harness.kube.names.capi import (
    CLUSTER_API_GROUP,
    CLUSTER_NAME_LABEL,
    MACHINE_DEPLOYMENT_KIND,
    MACHINE_DEPLOYMENT_NAME_LABEL,
    MACHINE_SET_KIND,
    MACHINE_SET_NAME_LABEL,
)
from harness.kube.validation import FIELD_IMMUTABLE_MSG

MACHINE_SET_VALIDATION_WEBHOOK = "validation.machineset.cluster.x-k8s.io"
MACHINE_DEPLOYMENT_VALIDATION_WEBHOOK = "validation.machinedeployment.cluster.x-k8s.io"

DEFAULT_REPLICAS = 1
DEFAULT_MIN_READY_SECONDS = 0
DEFAULT_REVISION_HISTORY_LIMIT = 1
DEFAULT_PROGRESS_DEADLINE_SECONDS = 600
DEFAULT_MAX_SURGE = 1
DEFAULT_MAX_UNAVAILABLE = 0

MUST_MATCH_SELECTOR = "must match spec.selector {selector}"
INT_OR_PERCENT = "must be either an int or a percentage: {err}"
INVALID_LABEL_VALUE = "must be a valid label value: {err}"
_PERCENT = re.compile(r"^(-?[0-9]+)%$")


def _template(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.setdefault("spec", {}).setdefault("template", {})  # type: ignore[no-any-return]


def _default_common(obj: dict[str, Any]) -> None:
    """What both defaulting webhooks do: cluster-name label, replicas, version, reference namespaces."""
    metadata = obj.setdefault("metadata", {})
    spec = obj.setdefault("spec", {})
    metadata["labels"] = {**(metadata.get("labels") or {}), CLUSTER_NAME_LABEL: str(spec.get("clusterName", ""))}
    if spec.get("replicas") is None:
        spec["replicas"] = DEFAULT_REPLICAS
    template = _template(obj)
    default_machine_spec(template.setdefault("spec", {}), metadata.get("namespace", ""))
    selector = spec.get("selector")
    if not isinstance(selector, dict):
        selector = spec["selector"] = {}
    if selector.get("matchLabels") is None:
        selector["matchLabels"] = {}
    template_meta = template.setdefault("metadata", {})
    if template_meta.get("labels") is None:
        template_meta["labels"] = {}


def _default_selector(obj: dict[str, Any], label: str, value: str) -> None:
    spec = obj["spec"]
    if not spec["selector"]["matchLabels"] and not spec["selector"].get("matchExpressions"):
        spec["selector"]["matchLabels"][label] = value
        _template(obj)["metadata"]["labels"][label] = value


def default_machine_set(ms: dict[str, Any]) -> None:
    """The MachineSet defaulting webhook, in place."""
    _default_common(ms)
    if not ms["spec"].get("deletePolicy"):
        ms["spec"]["deletePolicy"] = DELETE_POLICY_RANDOM
    _default_selector(ms, MACHINE_SET_NAME_LABEL, format_label_value(str(meta(ms).get("name", ""))))


def default_machine_deployment(md: dict[str, Any]) -> None:
    """The MachineDeployment defaulting webhook, in place."""
    _default_common(md)
    spec = md["spec"]
    spec.setdefault("minReadySeconds", DEFAULT_MIN_READY_SECONDS)
    spec.setdefault("revisionHistoryLimit", DEFAULT_REVISION_HISTORY_LIMIT)
    spec.setdefault("progressDeadlineSeconds", DEFAULT_PROGRESS_DEADLINE_SECONDS)
    strategy = spec.get("strategy")
    if not isinstance(strategy, dict):
        strategy = spec["strategy"] = {}
    if not strategy.get("type"):
        strategy["type"] = ROLLING_UPDATE
    if strategy["type"] == ROLLING_UPDATE:
        rolling = strategy.get("rollingUpdate")
        if not isinstance(rolling, dict):
            rolling = strategy["rollingUpdate"] = {}
        if rolling.get("maxSurge") is None:
            rolling["maxSurge"] = DEFAULT_MAX_SURGE
        if rolling.get("maxUnavailable") is None:
            rolling["maxUnavailable"] = DEFAULT_MAX_UNAVAILABLE
    _default_selector(md, MACHINE_DEPLOYMENT_NAME_LABEL, str(meta(md).get("name", "")))
    spec["selector"]["matchLabels"][CLUSTER_NAME_LABEL] = str(spec.get("clusterName", ""))
    _template(md)["metadata"]["labels"][CLUSTER_NAME_LABEL] = str(spec.get("clusterName", ""))


def int_or_percent_error(value: Any) -> str | None:
    """Why ``intstr.GetScaledValueFromIntOrPercent`` refuses ``value`` (None when it accepts it)."""
    if isinstance(value, bool):
        return "invalid type: neither int nor percentage"
    if isinstance(value, int):
        return None
    if isinstance(value, str):
        if _PERCENT.match(value):
            return None
        return "invalid value for IntOrString: invalid type: string is not a percentage"
    return "invalid type: neither int nor percentage"


def _validate_common(obj: dict[str, Any], old: dict[str, Any] | None, *, mismatch_forbidden: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    spec = obj.get("spec") or {}
    selector = spec.get("selector") or {}
    template_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    try:
        rendered = selector_string(selector)
        matches = selector_matches(selector, template_labels) or not rendered
    except ValueError as err:
        errs.append(api_errors.invalid("spec.selector", selector, str(err)))
    else:
        if not matches:
            message = MUST_MATCH_SELECTOR.format(selector=go_quote(rendered))
            if mismatch_forbidden:
                errs.append(api_errors.forbidden("spec.template.metadata.labels", message))
            else:
                errs.append(api_errors.invalid("spec.template.metadata.labels", template_labels, message))
    if old is not None and (old.get("spec") or {}).get("clusterName") != spec.get("clusterName"):
        errs.append(api_errors.forbidden("spec.clusterName", FIELD_IMMUTABLE_MSG))
    version = ((spec.get("template") or {}).get("spec") or {}).get("version")
    if version is not None and not KUBE_SEMVER.match(str(version)):
        errs.append(api_errors.invalid("spec.template.spec.version", version, INVALID_VERSION))
    return errs


def validate_machine_set(ms: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    """The MachineSet validation webhook."""
    return _validate_common(ms, old, mismatch_forbidden=False)


def validate_machine_deployment(md: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    """The MachineDeployment validation webhook."""
    errs: list[FieldError] = []
    name = str(meta(md).get("name", ""))
    if format_label_value(name) != name or len(name) > MAX_NAME_LENGTH:
        errs.append(api_errors.invalid("metadata.name", name, INVALID_LABEL_VALUE.format(
            err="a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
                "and must start and end with an alphanumeric character")))
    errs += _validate_common(md, old, mismatch_forbidden=True)
    rolling = ((md.get("spec") or {}).get("strategy") or {}).get("rollingUpdate") or {}
    for field_name in ("maxSurge", "maxUnavailable"):
        value = rolling.get(field_name)
        if value is None:
            continue
        problem = int_or_percent_error(value)
        if problem:
            errs.append(api_errors.invalid(f"spec.strategy.rollingUpdate.{field_name}", value,
                                           INT_OR_PERCENT.format(err=problem)))
    return errs


admit_machine_set = webhook_admitter(MACHINE_SET_VALIDATION_WEBHOOK, default_machine_set, validate_machine_set)
admit_machine_deployment = webhook_admitter(MACHINE_DEPLOYMENT_VALIDATION_WEBHOOK, default_machine_deployment,
                                     validate_machine_deployment)

# (API group, kind, plugin) for the composition root to install on the management cluster.
ADMISSION_PLUGINS = (
    (CLUSTER_API_GROUP, MACHINE_SET_KIND, admit_machine_set),
    (CLUSTER_API_GROUP, MACHINE_DEPLOYMENT_KIND, admit_machine_deployment),
)
