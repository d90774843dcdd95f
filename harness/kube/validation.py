"""Generic field validation (apimachinery) with the messages kube-apiserver 1.32 writes.

The string-level checks (``is_dns1123_subdomain`` and friends) return the message strings of
``apimachinery/pkg/util/validation``; everything else returns a list of
:class:`~harness.kube.errors.FieldError` (empty means valid) and never raises on a malformed
object: wrong JSON types are read as empty values.

Division of work with the store: :func:`validate_object_meta` / :func:`validate_object_meta_update`
cover ``metadata`` for every kind (call them first, as ``rest.BeforeCreate``/``BeforeUpdate`` put
the metadata errors first); the kind validators (:func:`validate_pdb_spec`,
:func:`validate_volume_attachment`, :func:`validate_pod_spec`, ...) cover only the kind's own
fields, so no error is reported twice.

Values are rendered as ``field.Error`` renders them (Go ``%q`` for strings, ``%v`` for numbers).
Where upstream renders a Go struct with ``%#v``:

* ``intstr.IntOrString`` and ``[]string`` values print deterministically and are rendered exactly
  (``intstr.IntOrString{Type:1, IntVal:0, StrVal:"150%"}``, ``[]string{"x"}``);
* ``metav1.Time`` values implement ``fmt.Stringer`` and print as ``2024-01-01 00:00:00 +0000 UTC``;
* structs holding pointers (a whole PDB or VolumeAttachment spec, an owner-reference list) print
  memory addresses upstream, so they are rendered as compact JSON of the submitted value instead.
"""

from __future__ import annotations

import datetime as _dt
import functools
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from harness.kube.errors import (
    FIELD_VALUE_INVALID,
    FieldError,
    forbidden,
    invalid,
    required,
    too_long,
)
from harness.kube.groupversion import parse_group_version
from harness.kube.names.meta import FOREGROUND_FINALIZER, ORPHAN_FINALIZER
from harness.kube.objects import JsonMemo

# -- limits ----------------------------------------------------------------------------------------

DNS1123_LABEL_MAX_LENGTH = 63
DNS1123_SUBDOMAIN_MAX_LENGTH = 253
DNS1035_LABEL_MAX_LENGTH = 63
QUALIFIED_NAME_MAX_LENGTH = 63
LABEL_VALUE_MAX_LENGTH = 63
TOTAL_ANNOTATION_SIZE_LIMIT_B = 256 * (1 << 10)  # 262144
MAX_INT32 = 2**31 - 1

# -- regular expressions (as upstream writes them; shown verbatim in messages) ----------------------

DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_SUBDOMAIN_FMT = DNS1123_LABEL_FMT + "(\\." + DNS1123_LABEL_FMT + ")*"
DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
LABEL_VALUE_FMT = "(" + QUALIFIED_NAME_FMT + ")?"
PERCENT_FMT = "[0-9]+%"

_DNS1123_LABEL_RE = re.compile(DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN_RE = re.compile(DNS1123_SUBDOMAIN_FMT)
_DNS1035_LABEL_RE = re.compile(DNS1035_LABEL_FMT)
_QUALIFIED_NAME_RE = re.compile(QUALIFIED_NAME_FMT)
_LABEL_VALUE_RE = re.compile(LABEL_VALUE_FMT)
_PERCENT_RE = re.compile(PERCENT_FMT)

# -- message templates -------------------------------------------------------------------------------

DNS1123_LABEL_ERR_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
DNS1123_SUBDOMAIN_ERR_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
DNS1035_LABEL_ERR_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
    "start with an alphabetic character, and end with an alphanumeric character"
)
QUALIFIED_NAME_ERR_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
)
LABEL_VALUE_ERR_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
PERCENT_ERR_MSG = "a valid percent string must be a numeric string followed by an ending '%'"
MAX_LEN_MSG = "must be no more than {limit} characters"
EMPTY_MSG = "must be non-empty"
NO_DOTS_MSG = "must not contain dots"
INCLUSIVE_RANGE_MSG = "must be between {lo} and {hi}, inclusive"
QUALIFIED_NAME_PREFIX_HINT = " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
PATH_SEGMENT_MAY_NOT_BE_MSG = "may not be '{name}'"
PATH_SEGMENT_MAY_NOT_CONTAIN_MSG = "may not contain '{part}'"

IS_NEGATIVE_MSG = "must be greater than or equal to 0"
# IntOrString rules (ValidatePositiveIntOrPercent, IsNotMoreThan100Percent) shared by PDBs and workloads.
NOT_MORE_THAN_100_PERCENT_MSG = "must not be greater than 100%"
# Upstream's unreachable fallback for an IntOrString of unknown type; the doubled '%' is upstream's
# (the string is never passed through Sprintf).
INT_OR_PERCENT_MSG = "must be an integer or percentage (e.g '5%%')"
FIELD_IMMUTABLE_MSG = "field is immutable"
NAME_REQUIRED_MSG = "name or generateName is required"
NAMESPACE_NOT_ALLOWED_MSG = "not allowed on this type"
GENERATION_DECREMENTED_MSG = "must not be decremented"
NO_NEW_FINALIZERS_MSG = "no new finalizers can be added if the object is being deleted, found new finalizers {found}"
FINALIZERS_CONFLICT_MSG = "finalizer {orphan} and {foreground} cannot be both set"
ONE_CONTROLLER_MSG = (
    'Only one reference can have Controller set to true. Found "true" in references for {first} and {second}'
)
OWNER_VERSION_EMPTY_MSG = "version must not be empty"
OWNER_KIND_EMPTY_MSG = "kind must not be empty"
OWNER_NAME_EMPTY_MSG = "name must not be empty"
OWNER_UID_EMPTY_MSG = "uid must not be empty"
OWNER_BANNED_MSG = "{gvk} is disallowed from being an owner"

SELECTOR_VALUES_REQUIRED_MSG = "must be specified when `operator` is 'In' or 'NotIn'"
SELECTOR_VALUES_FORBIDDEN_MSG = "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
SELECTOR_BAD_OPERATOR_MSG = "not a valid selector operator"


# -- enumerations ------------------------------------------------------------------------------------

SELECTOR_OPS_WITH_VALUES = ("In", "NotIn")
SELECTOR_OPS_WITHOUT_VALUES = ("Exists", "DoesNotExist")
BANNED_OWNERS = {("", "v1", "Event")}

# -- small helpers -------------------------------------------------------------------------------------


def _text(value: Any) -> str:
    """A JSON scalar as the Go string it would decode to (None → "")."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _blen(value: str) -> int:
    """Go's ``len`` of a string: its UTF-8 byte count."""
    return len(value.encode("utf-8"))


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _index(path: str, i: int) -> str:
    return f"{path}[{i}]"


_GO_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
}


def go_quote(value: str) -> str:
    """Go's ``strconv.Quote``: printable runes kept, the rest escaped."""
    out = []
    for ch in value:
        if ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


def _go_string_slice(values: Iterable[str]) -> str:
    """``%#v`` of a ``[]string``."""
    return "[]string{" + ", ".join(go_quote(v) for v in values) + "}"


def _go_int_or_string(value: Any) -> str:
    """``%#v`` of an ``intstr.IntOrString`` (passed by value, so not a Stringer)."""
    if isinstance(value, str):
        return f"intstr.IntOrString{{Type:1, IntVal:0, StrVal:{go_quote(value)}}}"
    return f'intstr.IntOrString{{Type:0, IntVal:{value}, StrVal:""}}'


def _go_time(value: Any) -> str:
    """``metav1.Time.String()`` of an RFC 3339 timestamp (UTC, as the apiserver's zone is UTC)."""
    text = _text(value)
    if not text:
        return "0001-01-01 00:00:00 +0000 UTC"
    try:
        parsed = _dt.datetime.fromisoformat(text)
    except ValueError:
        return text
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=_dt.UTC)
    parsed = parsed.astimezone(_dt.UTC)
    rendered = parsed.strftime("%Y-%m-%d %H:%M:%S")
    if parsed.microsecond:
        rendered += f".{parsed.microsecond:06d}".rstrip("0")
    return rendered + " +0000 UTC"


def _invalid_rendered(field_path: str, rendered: str, detail: str) -> FieldError:
    """An Invalid error whose value is already rendered (Go text that JSON rendering would mangle).

    The value is omitted and the rendering prefixed to the detail, which gives the same body:
    ``Invalid value: <rendered>: <detail>``.
    """
    return FieldError(field_path, FIELD_VALUE_INVALID, f"{rendered}: {detail}")


def _normalized(value: Any) -> Any:
    """JSON data with empty values dropped, for ``apiequality.Semantic.DeepEqual``-like comparison.

    Go decodes a missing key, ``null``, ``""``, ``[]`` and ``{}`` into equal zero values (the
    semantic equality treats nil and empty slices and maps alike); ``false`` and ``0`` are kept, as
    they differ from nil for pointer fields.
    """
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            norm = _normalized(item)
            if norm is None or norm == "" or norm == [] or norm == {}:
                continue
            out[key] = norm
        return out
    if isinstance(value, list):
        return [_normalized(item) for item in value]
    return value


def _semantic_equal(a: Any, b: Any) -> bool:
    # Equal data normalizes to equal data: the walk is needed only when something differs (an
    # update usually leaves the spec as it was).
    return a == b or _normalized(a) == _normalized(b)


def _dedupe(errs: list[FieldError]) -> list[FieldError]:
    """Drop repeated identical errors, as the ``Invalid`` message does (``ErrorList.ToAggregate``)."""
    seen: set[str] = set()
    out = []
    for err in errs:
        text = str(err)
        if text not in seen:
            seen.add(text)
            out.append(err)
    return out


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    """``validation.RegexError``: the message, the examples and the regular expression."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{example}', " for example in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def _max_len_error(limit: int) -> str:
    return MAX_LEN_MSG.format(limit=limit)


def _inclusive_range_error(lo: int, hi: int) -> str:
    return INCLUSIVE_RANGE_MSG.format(lo=lo, hi=hi)


# -- string-level checks (apimachinery/pkg/util/validation) -----------------------------------------


def _remembered(check: Callable[[str], list[str]]) -> Callable[[str], list[str]]:
    # The checks are pure functions of one string, and the same label keys, values and annotation
    # keys come back on every write of every object: each distinct string is checked once (a
    # bounded cache), and each caller gets a list of its own.
    cached = functools.lru_cache(maxsize=8192)(lambda value: tuple(check(value)))

    @functools.wraps(check)
    def remembered(value: str) -> list[str]:
        return list(cached(value))

    return remembered


@_remembered
def is_dns1123_label(value: str) -> list[str]:
    """``IsDNS1123Label``: at most 63 characters of ``[a-z0-9]([-a-z0-9]*[a-z0-9])?``."""
    errs = []
    if _blen(value) > DNS1123_LABEL_MAX_LENGTH:
        errs.append(_max_len_error(DNS1123_LABEL_MAX_LENGTH))
    if not _DNS1123_LABEL_RE.fullmatch(value):
        if _DNS1123_SUBDOMAIN_RE.fullmatch(value):
            errs.append(NO_DOTS_MSG)
        else:
            errs.append(_regex_error(DNS1123_LABEL_ERR_MSG, DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


@_remembered
def is_dns1123_subdomain(value: str) -> list[str]:
    """``IsDNS1123Subdomain``: at most 253 characters of dot-separated DNS-1123 labels."""
    errs = []
    if _blen(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(_max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        errs.append(_regex_error(DNS1123_SUBDOMAIN_ERR_MSG, DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


@_remembered
def is_dns1035_label(value: str) -> list[str]:
    """``IsDNS1035Label``: at most 63 characters, starting with a letter (Service names)."""
    errs = []
    if _blen(value) > DNS1035_LABEL_MAX_LENGTH:
        errs.append(_max_len_error(DNS1035_LABEL_MAX_LENGTH))
    if not _DNS1035_LABEL_RE.fullmatch(value):
        errs.append(_regex_error(DNS1035_LABEL_ERR_MSG, DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errs


@_remembered
def is_qualified_name(value: str) -> list[str]:
    """``IsQualifiedName``: an optional DNS-subdomain prefix and ``/``, then a name of at most 63 characters."""
    qualified_regex_error = _regex_error(QUALIFIED_NAME_ERR_MSG, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part " + EMPTY_MSG)
        else:
            errs.extend("prefix part " + msg for msg in is_dns1123_subdomain(prefix))
    else:
        return ["a qualified name " + qualified_regex_error + QUALIFIED_NAME_PREFIX_HINT]
    if not name:
        errs.append("name part " + EMPTY_MSG)
    elif _blen(name) > QUALIFIED_NAME_MAX_LENGTH:
        errs.append("name part " + _max_len_error(QUALIFIED_NAME_MAX_LENGTH))
    if not _QUALIFIED_NAME_RE.fullmatch(name):
        errs.append("name part " + qualified_regex_error)
    return errs


@_remembered
def is_valid_label_value(value: str) -> list[str]:
    """``IsValidLabelValue``: empty, or at most 63 characters shaped like a qualified name's name part."""
    errs = []
    if _blen(value) > LABEL_VALUE_MAX_LENGTH:
        errs.append(_max_len_error(LABEL_VALUE_MAX_LENGTH))
    if not _LABEL_VALUE_RE.fullmatch(value):
        errs.append(_regex_error(LABEL_VALUE_ERR_MSG, LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def is_valid_percent(value: str) -> list[str]:
    """``IsValidPercent``: digits followed by ``%``."""
    if not _PERCENT_RE.fullmatch(value):
        return [_regex_error(PERCENT_ERR_MSG, PERCENT_FMT, "1%", "93%")]
    return []


def is_valid_path_segment_name(value: str, prefix: bool = False) -> list[str]:
    """``path.ValidatePathSegmentName``: not ``.`` or ``..`` (unless a prefix), no ``/`` or ``%``."""
    if not prefix:
        for illegal in (".", ".."):
            if value == illegal:
                return [PATH_SEGMENT_MAY_NOT_BE_MSG.format(name=illegal)]
    return [PATH_SEGMENT_MAY_NOT_CONTAIN_MSG.format(part=part) for part in ("/", "%") if part in value]


# -- name rules (apimachinery/pkg/api/validation ValidateNameFunc) -----------------------------------


def _mask_trailing_dash(name: str) -> str:
    """``maskTrailingDash``, quirk included: a trailing dash drops the last *two* characters, then adds 'a'."""
    if len(name) > 1 and name.endswith("-"):
        return name[:-2] + "a"
    return name


def _name_is_dns_subdomain(name: str, prefix: bool) -> list[str]:
    return is_dns1123_subdomain(_mask_trailing_dash(name) if prefix else name)


def _name_is_dns_label(name: str, prefix: bool) -> list[str]:
    return is_dns1123_label(_mask_trailing_dash(name) if prefix else name)


def _name_is_dns1035_label(name: str, prefix: bool) -> list[str]:
    return is_dns1035_label(_mask_trailing_dash(name) if prefix else name)


NameRule = Callable[[str, bool], list[str]]

NAME_RULES: dict[str, NameRule] = {
    "subdomain": _name_is_dns_subdomain,  # most kinds, Pod, Node, PV, VolumeAttachment
    "label": _name_is_dns_label,  # Namespace
    "label1035": _name_is_dns1035_label,  # Service
    "path": is_valid_path_segment_name,  # kinds validated only as a REST path segment
}


# -- metadata ------------------------------------------------------------------------------------------


def validate_namespace_name(name: str, field_path: str = "metadata.name") -> list[FieldError]:
    """A namespace name is a DNS-1123 label (``ValidateNamespaceName``); one Invalid error per message."""
    text = _text(name)
    return [invalid(field_path, text, msg) for msg in _name_is_dns_label(text, False)]


# Metadata parts found valid before: a write that keeps its labels, annotations, owner references or
# finalizers (every status write, most updates; the Pods of one workload share their labels) checks
# them once (harness.kube.objects.JsonMemo says when a value is the one remembered). Only values without
# errors are remembered, so an error's path and text are always computed afresh.
_VALID = JsonMemo(4096)  # what -> True for a value found valid as what


def checked_once(what: str, check: Callable[[Any, str], list[FieldError]], value: Any,
                 field_path: str) -> list[FieldError]:
    """``check(value, field_path)``, except for a non-empty ``value`` that passed as ``what`` before
    (then no errors). For a check whose errors depend on the value alone (their path aside)."""
    if not value:
        return check(value, field_path)
    key, known = _VALID.find(what, value)
    if known:
        return []
    errs = check(value, field_path)
    if not errs:
        _VALID.remember(key, value, True)
    return errs


def validate_labels(labels: Mapping[str, Any] | None, field_path: str) -> list[FieldError]:
    """``ValidateLabels``: keys are qualified names, values label values; errors sit at ``field_path``."""
    return checked_once("labels", _validate_labels, labels, field_path)


def _validate_labels(labels: Mapping[str, Any] | None, field_path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for key, value in _as_dict(labels).items():
        key_text, value_text = _text(key), _text(value)
        errs.extend(invalid(field_path, key_text, msg) for msg in is_qualified_name(key_text))
        errs.extend(invalid(field_path, value_text, msg) for msg in is_valid_label_value(value_text))
    return errs


def validate_annotations(annotations: Mapping[str, Any] | None, field_path: str) -> list[FieldError]:
    """``ValidateAnnotations``: keys (lower-cased first) are qualified names; keys+values at most 256 KiB."""
    return checked_once("annotations", _validate_annotations, annotations, field_path)


def _validate_annotations(annotations: Mapping[str, Any] | None, field_path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    total = 0
    for key, value in _as_dict(annotations).items():
        key_text = _text(key)
        errs.extend(invalid(field_path, key_text, msg) for msg in is_qualified_name(key_text.lower()))
        total += _blen(key_text) + _blen(_text(value))
    if total > TOTAL_ANNOTATION_SIZE_LIMIT_B:
        errs.append(too_long(field_path, TOTAL_ANNOTATION_SIZE_LIMIT_B))
    return errs


def _split_api_version(api_version: str) -> tuple[str, str] | None:
    """``schema.ParseGroupVersion``: (group, version), or None when unparseable."""
    try:
        return parse_group_version(api_version)
    except ValueError:
        return None


def validate_owner_references(refs: Any, field_path: str = "metadata.ownerReferences") -> list[FieldError]:
    """``ValidateOwnerReferences``: apiVersion/kind/name/uid set, no Event owner, one controller at most.

    Per-reference errors sit at ``<field_path>.<field>`` without an index, as upstream puts them.
    """
    return checked_once("ownerReferences", _validate_owner_references, refs, field_path)


def _validate_owner_references(refs: Any, field_path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    first_controller = ""
    ref_list = _as_list(refs)
    for raw in ref_list:
        ref = _as_dict(raw)
        api_version, kind = _text(ref.get("apiVersion")), _text(ref.get("kind"))
        name, uid = _text(ref.get("name")), _text(ref.get("uid"))
        group_version = _split_api_version(api_version) or ("", "")
        if not group_version[1]:
            errs.append(invalid(_child(field_path, "apiVersion"), api_version, OWNER_VERSION_EMPTY_MSG))
        if not kind:
            errs.append(invalid(_child(field_path, "kind"), kind, OWNER_KIND_EMPTY_MSG))
        if not name:
            errs.append(invalid(_child(field_path, "name"), name, OWNER_NAME_EMPTY_MSG))
        if not uid:
            errs.append(invalid(_child(field_path, "uid"), uid, OWNER_UID_EMPTY_MSG))
        if (*group_version, kind) in BANNED_OWNERS:
            gvk = f"{group_version[0]}/{group_version[1]}, Kind={kind}"
            # Upstream prints the OwnerReference struct (with pointers); JSON stands in for it.
            errs.append(invalid(field_path, ref, OWNER_BANNED_MSG.format(gvk=gvk)))
        if ref.get("controller") is True:
            current = f"{kind}/{name}"
            if first_controller:
                detail = ONE_CONTROLLER_MSG.format(first=first_controller, second=current)
                # Upstream prints the []OwnerReference (with pointers); JSON stands in for it.
                errs.append(invalid(field_path, ref_list, detail))
            else:
                first_controller = current
    return errs


def validate_finalizers(finalizers: Any, field_path: str = "metadata.finalizers") -> list[FieldError]:
    """``ValidateFinalizers``: each a qualified name; ``orphan`` and ``foregroundDeletion`` not both.

    (The "neither a standard finalizer name nor is it fully qualified" rule applies to a Namespace's
    ``spec.finalizers`` only; unqualified ``metadata.finalizers`` get a warning, not an error.)
    """
    return checked_once("finalizers", _validate_finalizers, finalizers, field_path)


def _validate_finalizers(finalizers: Any, field_path: str) -> list[FieldError]:
    names = [_text(item) for item in _as_list(finalizers)]
    errs = [invalid(field_path, name, msg) for name in names for msg in is_qualified_name(name)]
    if ORPHAN_FINALIZER in names and FOREGROUND_FINALIZER in names:
        detail = FINALIZERS_CONFLICT_MSG.format(orphan=ORPHAN_FINALIZER, foreground=FOREGROUND_FINALIZER)
        errs.append(_invalid_rendered(field_path, _go_string_slice(names), detail))
    return errs


def validate_object_meta(obj: Mapping[str, Any], *, namespaced: bool, name_rule: str = "subdomain") -> list[FieldError]:
    """``ValidateObjectMeta`` on create: name/generateName, namespace by scope, generation, labels,
    annotations, owner references and finalizers.

    Unlike upstream (which runs after the name is generated), an empty name is accepted when
    ``generateName`` is set. ``name_rule`` is one of :data:`NAME_RULES` (``subdomain``, ``label``,
    ``label1035``, ``path``); an unknown rule is a programming error and raises ``ValueError``.
    """
    try:
        name_fn = NAME_RULES[name_rule]
    except KeyError:
        raise ValueError(f"unknown name rule {name_rule!r}; expected one of {sorted(NAME_RULES)}") from None
    meta = _as_dict(obj.get("metadata"))
    errs: list[FieldError] = []

    # Every write runs this: the checks of a valid name make no error objects, and absent or empty
    # labels, annotations, owner references and finalizers (which have no errors) are not checked.
    generate_name = _text(meta.get("generateName"))
    if generate_name:
        messages = name_fn(generate_name, True)
        if messages:
            errs.extend(invalid("metadata.generateName", generate_name, msg) for msg in messages)
    name = _text(meta.get("name"))
    if not name:
        if not generate_name:
            errs.append(required("metadata.name", NAME_REQUIRED_MSG))
    else:
        messages = name_fn(name, False)
        if messages:
            errs.extend(invalid("metadata.name", name, msg) for msg in messages)

    namespace = _text(meta.get("namespace"))
    if namespaced:
        if not namespace:
            errs.append(required("metadata.namespace"))
        elif _name_is_dns_label(namespace, False):
            errs.extend(validate_namespace_name(namespace, "metadata.namespace"))
    elif namespace:
        errs.append(forbidden("metadata.namespace", NAMESPACE_NOT_ALLOWED_MSG))

    generation = meta.get("generation")
    if isinstance(generation, int) and not isinstance(generation, bool) and generation < 0:
        errs.append(invalid("metadata.generation", generation, IS_NEGATIVE_MSG))
    labels, annotations = meta.get("labels"), meta.get("annotations")
    if labels:
        errs.extend(validate_labels(labels, "metadata.labels"))
    if annotations:
        errs.extend(validate_annotations(annotations, "metadata.annotations"))
    owners, finalizers = meta.get("ownerReferences"), meta.get("finalizers")
    if owners:
        errs.extend(validate_owner_references(owners))
    if finalizers:
        errs.extend(validate_finalizers(finalizers))
    return errs


def _same_time(a: Any, b: Any) -> bool:
    return _go_time(a) == _go_time(b)


# The metadata fields validate_object_meta_update compares (the labels, annotations and owner
# references it checks are validate_object_meta's too).
_UPDATE_CHECKED = ("finalizers", "generation", "name", "namespace", "uid", "creationTimestamp",
                   "deletionTimestamp", "deletionGracePeriodSeconds")


def validate_object_meta_update(
    new: Mapping[str, Any], old: Mapping[str, Any], *, parts_valid: bool = False
) -> list[FieldError]:
    """``ValidateObjectMetaUpdate``: no new finalizers while deleting, generation not decremented,
    name/namespace/uid/creationTimestamp/deletionTimestamp/deletionGracePeriodSeconds immutable, and
    the new labels, annotations and owner references valid. ``parts_valid``: the caller found
    :func:`validate_object_meta` of ``new`` without errors, so those three are known valid (their
    checks are the same functions of the same values at the same paths) and are not run again.

    Fields ``rest.BeforeUpdate`` copies from the stored object before validating are treated as
    copied: an omitted uid, any creationTimestamp when the stored one is set, a changed
    deletionTimestamp when the stored one is set, an omitted deletionGracePeriodSeconds. The
    resourceVersion check is the store's (it gives ``0x0``/409 before validation runs).
    """
    new_meta, old_meta = _as_dict(new.get("metadata")), _as_dict(old.get("metadata"))
    if parts_valid and all(new_meta.get(key) is old_meta.get(key) for key in _UPDATE_CHECKED):
        grace = new_meta.get("deletionGracePeriodSeconds")
        if grace is None or grace == grace:  # noqa: PLR0124 - (a NaN is not equal to itself)
            # The same values on both sides (a status write keeps them all): no finalizer added, the
            # generation not lowered, nothing immutable changed; there is nothing to find.
            return []
    errs: list[FieldError] = []

    if old_meta.get("deletionTimestamp"):
        old_finalizers = {_text(f) for f in _as_list(old_meta.get("finalizers"))}
        extra = sorted({_text(f) for f in _as_list(new_meta.get("finalizers"))} - old_finalizers)
        if extra:
            found = _go_string_slice(extra)
            errs.append(forbidden("metadata.finalizers", NO_NEW_FINALIZERS_MSG.format(found=found)))

    new_generation, old_generation = new_meta.get("generation"), old_meta.get("generation")
    if isinstance(new_generation, int) and isinstance(old_generation, int) and new_generation < old_generation:
        errs.append(invalid("metadata.generation", new_generation, GENERATION_DECREMENTED_MSG))

    for key in ("name", "namespace", "uid"):
        new_value, old_value = _text(new_meta.get(key)), _text(old_meta.get(key))
        if key == "uid" and not new_value:
            continue
        if new_value != old_value:
            errs.append(invalid(f"metadata.{key}", new_value, FIELD_IMMUTABLE_MSG))

    old_created, new_created = old_meta.get("creationTimestamp"), new_meta.get("creationTimestamp")
    if not old_created and not _same_time(new_created, old_created):
        errs.append(_invalid_rendered("metadata.creationTimestamp", _go_time(new_created), FIELD_IMMUTABLE_MSG))

    old_deleted, new_deleted = old_meta.get("deletionTimestamp"), new_meta.get("deletionTimestamp")
    if not old_deleted and new_deleted:
        errs.append(_invalid_rendered("metadata.deletionTimestamp", _go_time(new_deleted), FIELD_IMMUTABLE_MSG))

    old_grace, new_grace = old_meta.get("deletionGracePeriodSeconds"), new_meta.get("deletionGracePeriodSeconds")
    if new_grace is not None and new_grace != old_grace:
        errs.append(invalid("metadata.deletionGracePeriodSeconds", new_grace, FIELD_IMMUTABLE_MSG))

    if not parts_valid:
        # (Absent or empty ones have no errors.)
        labels, annotations = new_meta.get("labels"), new_meta.get("annotations")
        owners = new_meta.get("ownerReferences")
        if labels:
            errs.extend(validate_labels(labels, "metadata.labels"))
        if annotations:
            errs.extend(validate_annotations(annotations, "metadata.annotations"))
        if owners:
            errs.extend(validate_owner_references(owners))
    return errs


# -- label selectors (apimachinery/pkg/apis/meta/v1/validation) ------------------------------------


def validate_label_selector(selector: Any, field_path: str) -> list[FieldError]:
    """``ValidateLabelSelector``: matchLabels as labels; each matchExpression's operator, values and key."""
    if not isinstance(selector, dict):
        return []
    errs = validate_labels(selector.get("matchLabels"), _child(field_path, "matchLabels"))
    for i, raw in enumerate(_as_list(selector.get("matchExpressions"))):
        expr = _as_dict(raw)
        path = _index(_child(field_path, "matchExpressions"), i)
        operator = _text(expr.get("operator"))
        values = [_text(v) for v in _as_list(expr.get("values"))]
        if operator in SELECTOR_OPS_WITH_VALUES:
            if not values:
                errs.append(required(_child(path, "values"), SELECTOR_VALUES_REQUIRED_MSG))
        elif operator in SELECTOR_OPS_WITHOUT_VALUES:
            if values:
                errs.append(forbidden(_child(path, "values"), SELECTOR_VALUES_FORBIDDEN_MSG))
        else:
            errs.append(invalid(_child(path, "operator"), operator, SELECTOR_BAD_OPERATOR_MSG))
        key = _text(expr.get("key"))
        errs.extend(invalid(_child(path, "key"), key, msg) for msg in is_qualified_name(key))
        for j, value in enumerate(values):
            value_path = _index(_child(path, "values"), j)
            errs.extend(invalid(value_path, value, msg) for msg in is_valid_label_value(value))
    return errs


__all__ = [
    "INT_OR_PERCENT_MSG",
    "NOT_MORE_THAN_100_PERCENT_MSG",
    "NAME_RULES",
    "is_dns1035_label",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "is_qualified_name",
    "is_valid_label_value",
    "is_valid_path_segment_name",
    "is_valid_percent",
    "validate_annotations",
    "validate_finalizers",
    "validate_label_selector",
    "validate_labels",
    "validate_namespace_name",
    "validate_object_meta",
    "validate_object_meta_update",
    "validate_owner_references",
]
