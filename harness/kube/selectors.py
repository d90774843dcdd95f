"""Label and field selectors as kube-apiserver 1.32 parses, validates, prints and matches them.

Label selectors follow ``apimachinery/pkg/labels/selector.go`` (the string grammar, including the
rarely used ``>``/``<``) and ``metav1.LabelSelectorAsSelector`` (the structured form). Field
selectors follow ``apimachinery/pkg/fields/selector.go`` for syntax and escaping, and the per-kind
field-label conversion functions of kube-apiserver for which fields each kind accepts and how an
object's values are rendered.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from harness.kube.errors import bad_request
from harness.kube.validation import is_qualified_name, is_valid_label_value


def _go_string(value: str) -> str:
    """Go's ``%q`` for the ASCII strings selectors hold."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _go_string_slice(values: list[str] | None) -> str:
    """Go's ``%#v`` of a ``[]string`` (``nil`` prints as ``[]string(nil)``)."""
    if values is None:
        return "[]string(nil)"
    return "[]string{" + ", ".join(_go_string(v) for v in values) + "}"


def _invalid(field: str, shown_value: str, detail: str) -> str:
    return f"{field}: Invalid value: {shown_value}: {detail}"


def _aggregate(errors: list[str]) -> str:
    """``utilerrors.NewAggregate(...).Error()``: one message alone, several bracketed and de-duplicated."""
    unique = list(dict.fromkeys(errors))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


# ---------------------------------------------------------------------------------------------
# Label selectors
# ---------------------------------------------------------------------------------------------

# ``selection.Operator`` spellings.
IN = "in"
NOT_IN = "notin"
EQUALS = "="
DOUBLE_EQUALS = "=="
NOT_EQUALS = "!="
EXISTS = "exists"
DOES_NOT_EXIST = "!"
GREATER_THAN = "gt"
LESS_THAN = "lt"

_BINARY_OPERATORS = (IN, NOT_IN, EQUALS, DOUBLE_EQUALS, NOT_EQUALS, GREATER_THAN, LESS_THAN)
_VALID_OPERATORS = _BINARY_OPERATORS + (EXISTS, DOES_NOT_EXIST)
_GO_INT64 = re.compile(r"[+-]?[0-9]+")


@dataclass(frozen=True)
class Requirement:
    """One ``key <op> values`` term of a label selector."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether ``labels`` satisfy this term (a missing key satisfies ``!=``, ``notin`` and ``!``)."""
        present = self.key in labels
        if self.operator in (IN, EQUALS, DOUBLE_EQUALS):
            return present and labels[self.key] in self.values
        if self.operator in (NOT_IN, NOT_EQUALS):
            return not present or labels[self.key] not in self.values
        if self.operator == EXISTS:
            return present
        if self.operator == DOES_NOT_EXIST:
            return not present
        if self.operator in (GREATER_THAN, LESS_THAN):
            if not present or len(self.values) != 1:
                return False
            if not _GO_INT64.fullmatch(labels[self.key]) or not _GO_INT64.fullmatch(self.values[0]):
                return False
            have, want = int(labels[self.key]), int(self.values[0])
            return have > want if self.operator == GREATER_THAN else have < want
        return False

    def __str__(self) -> str:
        if self.operator == EXISTS:
            return self.key
        if self.operator == DOES_NOT_EXIST:
            return "!" + self.key
        spelled = {IN: " in ", NOT_IN: " notin ", GREATER_THAN: ">", LESS_THAN: "<"}.get(self.operator, self.operator)
        joined = self.values[0] if len(self.values) == 1 else ",".join(sorted(self.values))
        if self.operator in (IN, NOT_IN):
            joined = f"({joined})"
        return f"{self.key}{spelled}{joined}"


def _requirement_errors(key: str, operator: str, values: list[str] | None, path: str) -> list[str]:
    """``labels.NewRequirement`` validation, with field paths rooted at ``path``."""
    def child(name: str) -> str:
        return f"{path}.{name}" if path else name

    errs: list[str] = []
    key_errs = is_qualified_name(key)
    if key_errs:
        errs.append(_invalid(child("key"), _go_string(key), "; ".join(key_errs)))
    shown = _go_string_slice(values)
    given = values or []
    if operator in (IN, NOT_IN):
        if not given:
            errs.append(_invalid(child("values"), shown, "for 'in', 'notin' operators, values set can't be empty"))
    elif operator in (EQUALS, DOUBLE_EQUALS, NOT_EQUALS):
        if len(given) != 1:
            errs.append(_invalid(child("values"), shown, "exact-match compatibility requires one single value"))
    elif operator in (EXISTS, DOES_NOT_EXIST):
        if given:
            errs.append(_invalid(child("values"), shown, "values set must be empty for exists and does not exist"))
    elif operator in (GREATER_THAN, LESS_THAN):
        if len(given) != 1:
            errs.append(_invalid(child("values"), shown, "for 'Gt', 'Lt' operators, exactly one value is required"))
        for i, value in enumerate(given):
            if not _GO_INT64.fullmatch(value):
                errs.append(_invalid(f"{child('values')}[{i}]", _go_string(value),
                                     "for 'Gt', 'Lt' operators, the value must be an integer"))
    else:
        supported = ", ".join(_go_string(o) for o in _VALID_OPERATORS)
        errs.append(f"{child('operator')}: Unsupported value: {_go_string(operator)}: supported values: {supported}")
    for i, value in enumerate(given):
        value_errs = is_valid_label_value(value)
        if value_errs:
            errs.append(_invalid(f"{child('values')}[{i}][{key}]", _go_string(value), "; ".join(value_errs)))
    return errs


class LabelSelector:
    """An AND of label requirements, kept sorted by key as upstream does."""

    def __init__(self, requirements: Iterable[Requirement] = ()) -> None:
        self._requirements = tuple(sorted(requirements, key=lambda r: r.key))

    @property
    def requirements(self) -> tuple[Requirement, ...]:
        """The terms, sorted by key."""
        return self._requirements

    @property
    def empty(self) -> bool:
        """True when the selector has no terms (it then matches everything)."""
        return not self._requirements

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        """Whether every term holds for ``labels`` (None means no labels)."""
        present = labels or {}
        return all(r.matches(present) for r in self._requirements)

    def __str__(self) -> str:
        return ",".join(str(r) for r in self._requirements)

    def __repr__(self) -> str:
        return f"LabelSelector({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LabelSelector) and self._requirements == other._requirements

    def __hash__(self) -> int:
        return hash(self._requirements)


class _SelectorSyntaxError(Exception):
    pass


# Lexer tokens.
_END, _IDENT, _IN, _NOT_IN, _COMMA, _OPEN, _CLOSE, _BANG, _EQ, _EQEQ, _NEQ, _GT, _LT = range(13)
_SYMBOLS = {")": _CLOSE, ",": _COMMA, "!": _BANG, "==": _EQEQ, "=": _EQ, ">": _GT, "!=": _NEQ, "(": _OPEN, "<": _LT}
_KEYWORDS = {"in": _IN, "notin": _NOT_IN}
_SPECIAL_CHARS = set("=!(),><")
_WHITESPACE = set(" \t\r\n")


def _lex(text: str) -> list[tuple[int, str]]:
    tokens: list[tuple[int, str]] = []
    pos = 0
    while True:
        while pos < len(text) and text[pos] in _WHITESPACE:
            pos += 1
        if pos >= len(text):
            tokens.append((_END, ""))
            return tokens
        if text[pos] in _SPECIAL_CHARS:
            # Longest run of symbol characters that still spells a known operator ("!=" not "!" "=").
            end = pos + 1
            while end < len(text) and text[end] in _SPECIAL_CHARS and text[pos : end + 1] in _SYMBOLS:
                end += 1
            tokens.append((_SYMBOLS[text[pos:end]], text[pos:end]))
            pos = end
            continue
        start = pos
        while pos < len(text) and text[pos] not in _SPECIAL_CHARS and text[pos] not in _WHITESPACE:
            pos += 1
        word = text[start:pos]
        tokens.append((_KEYWORDS.get(word, _IDENT), word))


class _LabelParser:
    """Recursive descent over the token list; ``in``/``notin`` are plain words where values go."""

    def __init__(self, text: str) -> None:
        self.tokens = _lex(text)
        self.position = 0

    def peek(self, values: bool = True) -> tuple[int, str]:
        kind, literal = self.tokens[self.position]
        return (_IDENT if values and kind in (_IN, _NOT_IN) else kind), literal

    def take(self, values: bool = True) -> tuple[int, str]:
        token = self.peek(values)
        self.position += 1
        return token

    def parse(self) -> list[Requirement]:
        requirements: list[Requirement] = []
        while True:
            kind, literal = self.peek()
            if kind == _END:
                return requirements
            if kind not in (_IDENT, _BANG):
                raise _SelectorSyntaxError(f"found '{literal}', expected: !, identifier, or 'end of string'")
            try:
                requirements.append(self.requirement())
            except _SelectorSyntaxError as err:
                raise _SelectorSyntaxError(f"unable to parse requirement: {err}") from None
            kind, literal = self.take()
            if kind == _END:
                return requirements
            if kind != _COMMA:
                raise _SelectorSyntaxError(f"found '{literal}', expected: ',' or 'end of string'")
            kind, literal = self.peek()
            if kind not in (_IDENT, _BANG):
                raise _SelectorSyntaxError(f"found '{literal}', expected: identifier after ','")

    def requirement(self) -> Requirement:
        kind, literal = self.take()
        operator = ""
        if kind == _BANG:
            operator = DOES_NOT_EXIST
            kind, literal = self.take()
        if kind != _IDENT:
            raise _SelectorSyntaxError(f"found '{literal}', expected: identifier")
        key_errs = is_qualified_name(literal)
        if key_errs:
            # The key is checked before the operator, with no field path ("<nil>").
            raise _SelectorSyntaxError(_invalid("<nil>", _go_string(literal), "; ".join(key_errs)))
        key = literal
        if operator != DOES_NOT_EXIST and self.peek()[0] in (_END, _COMMA):
            operator = EXISTS
        if operator in (EXISTS, DOES_NOT_EXIST):
            return self.build(key, operator, [])
        operator = self.operator()
        values = self.value_set() if operator in (IN, NOT_IN) else self.exact_value()
        return self.build(key, operator, sorted(values))

    def build(self, key: str, operator: str, values: list[str]) -> Requirement:
        errs = _requirement_errors(key, operator, values, "")
        if errs:
            raise _SelectorSyntaxError(_aggregate(errs))
        return Requirement(key, operator, tuple(values))

    def operator(self) -> str:
        kind, literal = self.take(values=False)
        spelled = {_IN: IN, _NOT_IN: NOT_IN, _EQ: EQUALS, _EQEQ: DOUBLE_EQUALS, _NEQ: NOT_EQUALS,
                   _GT: GREATER_THAN, _LT: LESS_THAN}.get(kind)
        if spelled is None:
            raise _SelectorSyntaxError(f"found '{literal}', expected: {', '.join(_BINARY_OPERATORS)}")
        return spelled

    def value_set(self) -> set[str]:
        kind, literal = self.take()
        if kind != _OPEN:
            raise _SelectorSyntaxError(f"found '{literal}' expected: '('")
        kind, literal = self.peek()
        if kind == _CLOSE:
            self.take()
            return {""}
        if kind not in (_IDENT, _COMMA):
            raise _SelectorSyntaxError(f"found '{literal}', expected: ',', ')' or identifier")
        values = self.identifiers()
        if self.take()[0] != _CLOSE:
            raise _SelectorSyntaxError(f"found '{literal}', expected: ')'")
        return values

    def identifiers(self) -> set[str]:
        values: set[str] = set()
        while True:
            kind, literal = self.take()
            if kind == _IDENT:
                values.add(literal)
                following, shown = self.peek()
                if following == _CLOSE:
                    return values
                if following != _COMMA:
                    raise _SelectorSyntaxError(f"found '{shown}', expected: ',' or ')'")
            elif kind == _COMMA:
                # Empty slots between commas are empty-string values: "(,a)", "(a,,b)", "(a,)".
                if not values:
                    values.add("")
                following, _ = self.peek()
                if following == _CLOSE:
                    values.add("")
                    return values
                if following == _COMMA:
                    values.add("")
            else:
                raise _SelectorSyntaxError(f"found '{literal}', expected: ',', or identifier")

    def exact_value(self) -> set[str]:
        if self.peek()[0] in (_END, _COMMA):
            return {""}
        kind, literal = self.take()
        if kind != _IDENT:
            raise _SelectorSyntaxError(f"found '{literal}', expected: identifier")
        return {literal}


def parse_label_selector(text: str) -> LabelSelector:
    """Parse the string form (``a=b,c!=d,e in (f,g),h notin (i),j,!k``, plus ``==``, ``>``, ``<``).

    An empty string is the empty selector (matches everything). Bad syntax or an invalid key or
    value raises 400 ``BadRequest`` with upstream's message, e.g.
    ``unable to parse requirement: found '', expected: '('``.
    """
    try:
        return LabelSelector(_LabelParser(text).parse())
    except _SelectorSyntaxError as err:
        raise bad_request(str(err)) from None


_DICT_OPERATORS = {"In": IN, "NotIn": NOT_IN, "Exists": EXISTS, "DoesNotExist": DOES_NOT_EXIST}


def label_selector_from_dict(selector: dict[str, Any] | None) -> LabelSelector | None:
    """Convert a ``metav1.LabelSelector`` dict (see :func:`_selector_from_dict`); parsed selectors are
    remembered, since the same PDB and workload selectors are matched against every pod."""
    if selector is None:
        return None
    try:
        key = json.dumps(selector, sort_keys=True)
    except (TypeError, ValueError):
        return _selector_from_dict(selector)
    return _cached_selector(key)


@functools.lru_cache(maxsize=4096)
def _cached_selector(key: str) -> LabelSelector | None:
    return _selector_from_dict(json.loads(key))


def _selector_from_dict(selector: dict[str, Any] | None) -> LabelSelector | None:
    """Convert a ``metav1.LabelSelector`` dict, as ``metav1.LabelSelectorAsSelector`` does.

    None stays None (the caller decides: for PDBs it selects nothing); ``{}`` or a selector with no
    terms is the empty selector, which matches everything. An unknown operator, values given with
    ``Exists``/``DoesNotExist``, no values with ``In``/``NotIn`` or an invalid key or value raises
    ``ValueError`` carrying upstream's text.
    """
    if selector is None:
        return None
    match_labels = selector.get("matchLabels") or {}
    expressions = selector.get("matchExpressions") or []
    requirements: list[Requirement] = []
    for key, value in match_labels.items():
        if not isinstance(value, str):
            raise ValueError(
                "json: cannot unmarshal number into Go struct field LabelSelector.matchLabels of type string"
            )
        errs = _requirement_errors(key, EQUALS, [value], "")
        if errs:
            raise ValueError(_aggregate(errs))
        requirements.append(Requirement(key, EQUALS, (value,)))
    for expression in expressions:
        raw_operator = expression.get("operator", "")
        operator = _DICT_OPERATORS.get(raw_operator)
        if operator is None:
            raise ValueError(f"{_go_string(str(raw_operator))} is not a valid label selector operator")
        key = expression.get("key", "")
        values = expression.get("values")
        listed = [str(v) for v in values] if values else None
        errs = _requirement_errors(key, operator, listed, "")
        if errs:
            raise ValueError(_aggregate(errs))
        requirements.append(Requirement(key, operator, tuple(listed or ())))
    return LabelSelector(requirements)


# ---------------------------------------------------------------------------------------------
# Field selectors
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FieldSelector:
    """An AND of ``field=value`` / ``field!=value`` terms (``==`` is stored as ``=``)."""

    requirements: tuple[tuple[str, str, str], ...] = ()

    @property
    def empty(self) -> bool:
        """True when there are no terms (matches everything)."""
        return not self.requirements

    def matches(self, fields: Mapping[str, str]) -> bool:
        """Whether every term holds; a field absent from ``fields`` reads as ``""``."""
        for field, operator, value in self.requirements:
            have = fields.get(field, "")
            if (have == value) != (operator == "="):
                return False
        return True

    def fields(self) -> set[str]:
        """The field names the selector mentions."""
        return {field for field, _, _ in self.requirements}

    def __str__(self) -> str:
        return ",".join(f"{f}{op}{escape_field_value(v)}" for f, op, v in self.requirements)


def escape_field_value(value: str) -> str:
    """Escape ``\\``, ``,`` and ``=`` so the value survives in a field selector string."""
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def _unescape_field_value(raw: str) -> str:
    out: list[str] = []
    escaped = False
    for char in raw:
        if escaped:
            if char not in "\\,=":
                raise bad_request(f"invalid field selector: invalid escape sequence: \\{char}")
            out.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char in ",=":
            # Upstream prints the rune as its code point (%v of a rune).
            raise bad_request(f"invalid field selector: unescaped character in value: {ord(char)}")
        else:
            out.append(char)
    if escaped:
        raise bad_request("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def _split_terms(text: str) -> list[str]:
    terms: list[str] = []
    start = 0
    escaped = False
    for i, char in enumerate(text):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == ",":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms


def parse_field_selector(text: str) -> FieldSelector:
    """Parse ``field=value``, ``field==value`` and ``field!=value`` terms joined by commas.

    Values may escape ``\\,``, ``\\=`` and ``\\\\``; no whitespace is trimmed, like upstream. Terms
    are kept in sorted order. Bad syntax raises 400 ``invalid selector: '<text>'; can't understand
    '<term>'`` and bad escaping 400 ``invalid field selector: ...``.
    """
    requirements: list[tuple[str, str, str]] = []
    for term in sorted(_split_terms(text)) if text else []:
        if not term:
            continue
        match = re.search("!=|==|=", term)
        if match is None:
            raise bad_request(f"invalid selector: '{text}'; can't understand '{term}'")
        field, operator, raw = term[: match.start()], match.group(), term[match.end() :]
        requirements.append((field, "!=" if operator == "!=" else "=", _unescape_field_value(raw)))
    return FieldSelector(tuple(requirements))


# Fields each kind selects on beyond ``metadata.name`` / ``metadata.namespace``: the field-label
# conversion functions registered in kube-apiserver 1.32 (core/v1 and batch/v1). apps/v1 registers
# none, so ReplicaSet's ``status.replicas`` is rejected there, and so it is here.
FIELD_SELECTORS: dict[str, tuple[str, ...]] = {
    "Pod": (
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.schedulerName",
        "spec.serviceAccountName",
        "spec.hostNetwork",
        "status.phase",
        "status.podIP",
        "status.podIPs",
        "status.nominatedNodeName",
        "spec.host",
    ),
    "Node": ("spec.unschedulable",),
    "Event": (
        "involvedObject.kind",
        "involvedObject.namespace",
        "involvedObject.name",
        "involvedObject.uid",
        "involvedObject.apiVersion",
        "involvedObject.resourceVersion",
        "involvedObject.fieldPath",
        "reason",
        "reportingComponent",
        "source",
        "type",
    ),
    "Secret": ("type",),
    "Service": ("spec.clusterIP", "spec.type"),
    "Namespace": ("status.phase",),
    "ReplicationController": ("status.replicas",),
    "Job": ("status.successful",),
}

_NAME = "metadata.name"
_NAMESPACE = "metadata.namespace"

# Kinds whose conversion function omits metadata.namespace: selecting on it is a 400 there.
_NAME_ONLY_KINDS = {"Node", "Namespace"}

_UNSUPPORTED = "field label not supported: {}"
_UNSUPPORTED_BY_KIND = {"Job": 'field label "{}" not supported for Job'}
# Built-in kinds that register no conversion function fall back to runtime's default one.
_DEFAULT_CONVERSION = '"{}" is not a known field selector: only "metadata.name", "metadata.namespace"'
_BUILTIN_KINDS = {
    "Pod", "Node", "Namespace", "Event", "Secret", "Service", "ReplicationController", "Job",
    "ConfigMap", "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "CronJob", "PodDisruptionBudget",
    "PersistentVolume", "PersistentVolumeClaim", "VolumeAttachment", "StorageClass", "CSIDriver", "CSINode",
    "ControllerRevision", "CustomResourceDefinition", "ServiceAccount", "Endpoints", "EndpointSlice", "Lease",
    "PriorityClass", "LimitRange", "ResourceQuota", "PodTemplate", "Role", "RoleBinding", "ClusterRole",
    "ClusterRoleBinding",
}


def _supported_fields(kind: str, extra: tuple[str, ...], namespaced: bool) -> set[str]:
    name_only = kind in _NAME_ONLY_KINDS or (kind not in _BUILTIN_KINDS and not namespaced)
    meta = {_NAME} if name_only else {_NAME, _NAMESPACE}
    return meta | set(FIELD_SELECTORS.get(kind, ())) | {_field_label(e) for e in extra}


def check_field_selector(
    kind: str, selector: FieldSelector, extra: tuple[str, ...] = (), *, namespaced: bool = True
) -> None:
    """Raise 400 ``BadRequest`` unless every field in ``selector`` is selectable for ``kind``.

    ``kind`` is the Kind of a built-in resource; anything else (including ``""``) is treated as a
    custom resource, which selects only on ``metadata.name``, ``metadata.namespace`` (when
    ``namespaced``) and the CRD's ``selectableFields`` passed as ``extra``. The message is the one the
    kind's upstream conversion function gives, e.g. ``field label not supported: spec.foo``.
    """
    supported = _supported_fields(kind, extra, namespaced)
    if kind in _UNSUPPORTED_BY_KIND:
        template = _UNSUPPORTED_BY_KIND[kind]
    elif kind in _BUILTIN_KINDS and kind not in FIELD_SELECTORS:
        template = _DEFAULT_CONVERSION
    else:
        template = _UNSUPPORTED
    # Upstream transforms terms in sorted order and stops at the first bad one.
    for field, _, _ in selector.requirements:
        if field not in supported:
            raise bad_request(template.format(field))


def _field_label(json_path: str) -> str:
    # CRD selectableFields are JSON paths (".spec.color"); the selector names them without the dot.
    return json_path[1:] if json_path.startswith(".") else json_path


def _lookup(obj: Any, dotted: str) -> Any:
    node = obj
    for part in dotted.split("."):
        if not isinstance(node, dict):
            return None
        node = node.get(part)
    return node


def _render(value: Any) -> str:
    """A field value as the apiserver's field set holds it: Go's formatting of the typed field."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (dict, list)):
        return ""
    return str(value)


def _text(obj: dict[str, Any], dotted: str) -> str:
    return _render(_lookup(obj, dotted))


def _spec(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.get("spec") or {}


def _status(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.get("status") or {}


def _pod_ip(pod: dict[str, Any]) -> str:
    status = _status(pod)
    pod_ips = status.get("podIPs") or []
    # The internal Pod keeps only podIPs; the v1 podIP converts into podIPs[0] when podIPs is empty.
    first_ip = (pod_ips[0] or {}).get("ip") if pod_ips and isinstance(pod_ips[0], dict) else status.get("podIP")
    return _render(first_ip)


def _node_name(pod: dict[str, Any]) -> str:
    return _render(_spec(pod).get("nodeName"))


# One renderer per selectable field, so a selector renders only the fields it names (a kubelet's
# spec.nodeName watch must not work out nine other Pod fields for every Pod event).
_Renderer = Callable[[dict[str, Any]], str]

_POD_FIELDS: dict[str, _Renderer] = {
    "spec.nodeName": _node_name,
    "spec.host": _node_name,
    "spec.restartPolicy": lambda p: _render(_spec(p).get("restartPolicy")),
    "spec.schedulerName": lambda p: _render(_spec(p).get("schedulerName")),
    "spec.serviceAccountName": lambda p: _render(_spec(p).get("serviceAccountName") or _spec(p).get("serviceAccount")),
    "spec.hostNetwork": lambda p: "true" if _spec(p).get("hostNetwork") is True else "false",
    "status.phase": lambda p: _render(_status(p).get("phase")),
    "status.podIP": _pod_ip,
    # Accepted by the conversion function but never put in the field set: always "".
    "status.podIPs": lambda p: "",
    "status.nominatedNodeName": lambda p: _render(_status(p).get("nominatedNodeName")),
}


def _involved(name: str) -> _Renderer:
    return lambda e: _render((e.get("involvedObject") or {}).get(name))


def _event_source(event: dict[str, Any]) -> str:
    return _text(event, "source.component") or _render(event.get("reportingComponent"))


_EVENT_FIELDS: dict[str, _Renderer] = {
    **{f"involvedObject.{name}": _involved(name) for name in (
        "kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")},
    "reason": lambda e: _render(e.get("reason")),
    "reportingComponent": lambda e: _render(e.get("reportingComponent")),
    "source": _event_source,
    "type": lambda e: _render(e.get("type")),
}


def _count(value: Any) -> str:
    # int32 counters default to 0 and print through strconv.Itoa.
    return _render(value if value is not None else 0)


_KIND_FIELDS: dict[str, dict[str, _Renderer]] = {
    "Pod": _POD_FIELDS,
    "Node": {"spec.unschedulable": lambda o: "true" if _spec(o).get("unschedulable") is True else "false"},
    "Event": _EVENT_FIELDS,
    "Secret": {"type": lambda o: _render(o.get("type"))},
    "Service": {"spec.clusterIP": lambda o: _text(o, "spec.clusterIP"), "spec.type": lambda o: _text(o, "spec.type")},
    "Namespace": {"status.phase": lambda o: _text(o, "status.phase")},
    "ReplicationController": {"status.replicas": lambda o: _count(_lookup(o, "status.replicas"))},
    "Job": {"status.successful": lambda o: _count(_lookup(o, "status.succeeded"))},
}


def _meta_name(obj: dict[str, Any]) -> str:
    return _render((obj.get("metadata") or {}).get("name"))


def _meta_namespace(obj: dict[str, Any]) -> str:
    return _render((obj.get("metadata") or {}).get("namespace"))


def _renderer(kind: str, field: str, extra: tuple[str, ...]) -> _Renderer | None:
    # Precedence as object_fields builds its map: a CRD's selectableFields over the kind's fields over
    # metadata. None: a field the object never has, which reads as "".
    for path in extra:
        if _field_label(path) == field:
            return lambda o: _text(o, field)
    kind_fields = _KIND_FIELDS.get(kind)
    if kind_fields is not None and field in kind_fields:
        return kind_fields[field]
    if field == _NAME:
        return _meta_name
    if field == _NAMESPACE:
        return _meta_namespace
    return None


def field_matcher(
    kind: str, selector: FieldSelector, extra: tuple[str, ...] = ()
) -> Callable[[dict[str, Any]], bool]:
    """A test of ``obj`` against ``selector`` that renders only the fields the selector names.

    Same answer as ``selector.matches(object_fields(kind, obj, extra))``, at the cost of the named
    fields alone.
    """
    terms = tuple((_renderer(kind, field, extra), value, operator == "=")
                  for field, operator, value in selector.requirements)

    def matches(obj: dict[str, Any]) -> bool:
        for render, value, equal in terms:
            have = render(obj) if render is not None else ""
            if (have == value) != equal:
                return False
        return True

    return matches


def object_fields(kind: str, obj: dict[str, Any], extra: tuple[str, ...] = ()) -> dict[str, str]:
    """The selectable field values of ``obj`` as strings, rendered as upstream renders them.

    Always includes ``metadata.name`` and ``metadata.namespace`` (``""`` when cluster-scoped), the
    kind's fields from :data:`FIELD_SELECTORS` (booleans as ``"true"``/``"false"``, counters as
    decimal, missing values as ``""``) and the JSON paths in ``extra`` (CRD ``selectableFields``).
    """
    metadata = obj.get("metadata") or {}
    fields = {_NAME: _render(metadata.get("name")), _NAMESPACE: _render(metadata.get("namespace"))}
    for field, render in _KIND_FIELDS.get(kind, {}).items():
        fields[field] = render(obj)
    for path in extra:
        label = _field_label(path)
        fields[label] = _text(obj, label)
    return fields
