"""MachineDrainRules: which rules apply to a Machine, and what they say about a Pod.

A rule applies to a Machine when ``spec.machines`` is missing or empty, or when one entry's
``selector`` matches the Machine's labels and its ``clusterSelector`` the Cluster's (entries are ORed,
the two selectors of an entry ANDed; a missing or empty selector matches everything). It applies to a
Pod likewise through ``spec.pods`` (``selector`` on the Pod, ``namespaceSelector`` on its Namespace).
Rules are tried by name, byte-wise ascending; the first that applies to the Pod decides.

Only the rules in the Machine's namespace count, and the selectors of *every* rule there are
validated first: one invalid rule fails the drain of every Machine in the namespace.
"""

from __future__ import annotations

from typing import Any

from controllers.machine.api import labels, meta
from controllers.machine.errors import aggregate
from harness.kube import errors as api_errors
from harness.kube.errors import FieldError
from harness.kube.selectors import label_selector_from_dict

BEHAVIOR_DRAIN = "Drain"
BEHAVIOR_SKIP = "Skip"
BEHAVIOR_WAIT_COMPLETED = "WaitCompleted"
BEHAVIORS = (BEHAVIOR_DRAIN, BEHAVIOR_SKIP, BEHAVIOR_WAIT_COMPLETED)

INVALID_SELECTORS_MESSAGE = "invalid selectors in MachineDrainRule {name}"
MATCHING_RULES_ERROR = "failed to get matching MachineDrainRules"

# (list field, selector fields) of spec, in the order the webhook checks them.
_SELECTOR_FIELDS = (("machines", ("selector", "clusterSelector")), ("pods", ("selector", "namespaceSelector")))


def _go_string(value: Any) -> str:
    text = str(value)
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _go_string_slice(values: Any) -> str:
    if values is None:
        return "[]string(nil)"
    return "[]string{" + ", ".join(_go_string(v) for v in values) + "}"


def go_label_selector(selector: dict[str, Any]) -> str:
    """Go's ``%#v`` of a ``metav1.LabelSelector`` (how a field error shows the invalid selector)."""
    match_labels = selector.get("matchLabels")
    if match_labels is None:
        labels_text = "map[string]string(nil)"
    else:
        pairs = ", ".join(f"{_go_string(k)}:{_go_string(v)}" for k, v in sorted(match_labels.items()))
        labels_text = "map[string]string{" + pairs + "}"
    expressions = selector.get("matchExpressions")
    if expressions is None:
        expressions_text = "[]v1.LabelSelectorRequirement(nil)"
    else:
        items = ", ".join(
            "v1.LabelSelectorRequirement{Key:" + _go_string(e.get("key", "")) + ", Operator:"
            + _go_string(e.get("operator", "")) + ", Values:" + _go_string_slice(e.get("values")) + "}"
            for e in expressions
        )
        expressions_text = "[]v1.LabelSelectorRequirement{" + items + "}"
    return f"v1.LabelSelector{{MatchLabels:{labels_text}, MatchExpressions:{expressions_text}}}"


def validate_selectors(rule: dict[str, Any]) -> list[FieldError]:
    """``ValidateMachineDrainRulesSelectors``: every selector must convert (``LabelSelectorAsSelector``);
    each failure is a field error at ``spec.<list>[i].<selector>`` showing the selector."""
    spec = rule.get("spec") or {}
    errs: list[FieldError] = []
    for list_field, selector_fields in _SELECTOR_FIELDS:
        for i, entry in enumerate(spec.get(list_field) or []):
            if not isinstance(entry, dict):
                continue
            for selector_field in selector_fields:
                selector = entry.get(selector_field)
                if selector is None:
                    continue
                try:
                    label_selector_from_dict(selector)
                except ValueError as err:
                    errs.append(api_errors.invalid(
                        f"spec.{list_field}[{i}].{selector_field}",
                        api_errors.GoLiteral(go_label_selector(selector)), str(err),
                    ))
    return errs


def matches_selector(selector: dict[str, Any] | None, object_labels: dict[str, str]) -> bool:
    """``matchesSelector``: a nil or empty selector matches everything; otherwise the labels must match.
    The selector was validated before."""
    if selector is None:
        return True
    parsed = label_selector_from_dict(selector)
    if parsed is None or parsed.empty:
        return True
    return parsed.matches(object_labels)


def applies_to_machine(rule: dict[str, Any], machine: dict[str, Any], cluster: dict[str, Any]) -> bool:
    """Whether the rule's ``spec.machines`` selects the Machine (in its Cluster)."""
    entries = (rule.get("spec") or {}).get("machines") or []
    if not entries:
        return True
    return any(
        matches_selector(entry.get("selector"), labels(machine))
        and matches_selector(entry.get("clusterSelector"), labels(cluster))
        for entry in entries
    )


def applies_to_pod(rule: dict[str, Any], pod: dict[str, Any], namespace: dict[str, Any]) -> bool:
    """Whether the rule's ``spec.pods`` selects the Pod (in its Namespace)."""
    entries = (rule.get("spec") or {}).get("pods") or []
    if not entries:
        return True
    return any(
        matches_selector(entry.get("selector"), labels(pod))
        and matches_selector(entry.get("namespaceSelector"), labels(namespace))
        for entry in entries
    )


def invalid_rules(rules: list[dict[str, Any]]) -> list[str]:
    """One error text per rule whose selectors do not convert (``invalid selectors in MachineDrainRule
    <name>: <field errors>``)."""
    out = []
    for rule in rules:
        errs = validate_selectors(rule)
        if errs:
            text = aggregate(str(e) for e in errs)
            out.append(f"{INVALID_SELECTORS_MESSAGE.format(name=meta(rule).get('name', ''))}: {text}")
    return out


def matching_rules(
    rules: list[dict[str, Any]], machine: dict[str, Any], cluster: dict[str, Any]
) -> list[dict[str, Any]]:
    """The rules that apply to the Machine, sorted by name (the order they are tried in)."""
    selected = [r for r in rules if applies_to_machine(r, machine, cluster)]
    return sorted(selected, key=lambda r: str(meta(r).get("name", "")).encode())


def drain_order(rule: dict[str, Any]) -> int | None:
    """``spec.drain.order`` (None when unset: no defaulting, the drain treats it as 0)."""
    order = ((rule.get("spec") or {}).get("drain") or {}).get("order")
    return int(order) if isinstance(order, int) and not isinstance(order, bool) else None


def drain_behavior(rule: dict[str, Any]) -> str:
    """``spec.drain.behavior``."""
    return str(((rule.get("spec") or {}).get("drain") or {}).get("behavior", ""))
