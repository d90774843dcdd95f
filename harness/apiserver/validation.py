"""Field validation with the messages kube-apiserver 1.32 writes.

The string-level checks (``is_dns1123_subdomain`` and friends) return the message strings of
``apimachinery/pkg/util/validation``; everything else returns a list of
:class:`~harness.apiserver.errors.FieldError` (empty means valid) and never raises on a malformed
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
import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from harness.apiserver.errors import (
    FIELD_VALUE_INVALID,
    FieldError,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
    too_long,
)

# -- limits ----------------------------------------------------------------------------------------

DNS1123_LABEL_MAX_LENGTH = 63
DNS1123_SUBDOMAIN_MAX_LENGTH = 253
DNS1035_LABEL_MAX_LENGTH = 63
QUALIFIED_NAME_MAX_LENGTH = 63
LABEL_VALUE_MAX_LENGTH = 63
TOTAL_ANNOTATION_SIZE_LIMIT_B = 256 * (1 << 10)  # 262144
CSI_DRIVER_NAME_MAX_LENGTH = 63
MAX_ATTACHED_VOLUME_METADATA_SIZE = 256 * (1 << 10)
MAX_VOLUME_ERROR_MESSAGE_SIZE = 1024
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

PDB_BOTH_SET_MSG = "minAvailable and maxUnavailable cannot be both set"
NOT_MORE_THAN_100_PERCENT_MSG = "must not be greater than 100%"
# Upstream's unreachable fallback for an IntOrString of unknown type; the doubled '%' is upstream's
# (the string is never passed through Sprintf).
INT_OR_PERCENT_MSG = "must be an integer or percentage (e.g '5%%')"

VA_SOURCE_MSG = "must specify exactly one of inlineVolumeSpec and persistentVolumeName"
VA_EMPTY_PV_NAME_MSG = "must specify non empty persistentVolumeName"

POD_UPDATABLE_FIELDS = (
    "`spec.containers[*].image`",
    "`spec.initContainers[*].image`",
    "`spec.activeDeadlineSeconds`",
    "`spec.tolerations` (only additions to existing tolerations)",
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
)
# 1.32 without the InPlacePodVerticalScaling gate (alpha, off): the list joined by "," and no space.
POD_UPDATE_FORBIDDEN_MSG = "pod updates may not change fields other than " + ",".join(POD_UPDATABLE_FIELDS)
POD_ADD_REMOVE_CONTAINERS_MSG = "pod updates may not add or remove containers"
IMAGE_WHITESPACE_MSG = "must not have leading or trailing whitespace"
ACTIVE_DEADLINE_INCREASED_MSG = "must be less than or equal to previous value"
ACTIVE_DEADLINE_UNSET_MSG = "must not update from a positive integer to nil value"
TOLERATION_MODIFIED_MSG = "existing toleration can not be modified except its tolerationSeconds"
SCHEDULING_GATE_ADDED_MSG = "only deletion is allowed, but found new scheduling gate '{name}'"

# -- enumerations ------------------------------------------------------------------------------------

FINALIZER_ORPHAN = "orphan"
FINALIZER_FOREGROUND = "foregroundDeletion"
SELECTOR_OPS_WITH_VALUES = ("In", "NotIn")
SELECTOR_OPS_WITHOUT_VALUES = ("Exists", "DoesNotExist")
UNHEALTHY_POD_EVICTION_POLICIES = ("AlwaysAllow", "IfHealthyBudget")  # sorted, as sets.List() returns
RESTART_POLICIES = ("Always", "OnFailure", "Never")  # upstream's order, not sorted
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


def _go_quote(value: str) -> str:
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
    return "[]string{" + ", ".join(_go_quote(v) for v in values) + "}"


def _go_int_or_string(value: Any) -> str:
    """``%#v`` of an ``intstr.IntOrString`` (passed by value, so not a Stringer)."""
    if isinstance(value, str):
        return f"intstr.IntOrString{{Type:1, IntVal:0, StrVal:{_go_quote(value)}}}"
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
    return _normalized(a) == _normalized(b)


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


def is_dns1123_subdomain(value: str) -> list[str]:
    """``IsDNS1123Subdomain``: at most 253 characters of dot-separated DNS-1123 labels."""
    errs = []
    if _blen(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(_max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        errs.append(_regex_error(DNS1123_SUBDOMAIN_ERR_MSG, DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def is_dns1035_label(value: str) -> list[str]:
    """``IsDNS1035Label``: at most 63 characters, starting with a letter (Service names)."""
    errs = []
    if _blen(value) > DNS1035_LABEL_MAX_LENGTH:
        errs.append(_max_len_error(DNS1035_LABEL_MAX_LENGTH))
    if not _DNS1035_LABEL_RE.fullmatch(value):
        errs.append(_regex_error(DNS1035_LABEL_ERR_MSG, DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errs


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


def validate_labels(labels: Mapping[str, Any] | None, field_path: str) -> list[FieldError]:
    """``ValidateLabels``: keys are qualified names, values label values; errors sit at ``field_path``."""
    errs: list[FieldError] = []
    for key, value in _as_dict(labels).items():
        key_text, value_text = _text(key), _text(value)
        errs.extend(invalid(field_path, key_text, msg) for msg in is_qualified_name(key_text))
        errs.extend(invalid(field_path, value_text, msg) for msg in is_valid_label_value(value_text))
    return errs


def validate_annotations(annotations: Mapping[str, Any] | None, field_path: str) -> list[FieldError]:
    """``ValidateAnnotations``: keys (lower-cased first) are qualified names; keys+values at most 256 KiB."""
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
    if api_version in ("", "/"):
        return "", ""
    parts = api_version.split("/")
    if len(parts) == 1:
        return "", parts[0]
    if len(parts) == 2:
        return parts[0], parts[1]
    return None


def validate_owner_references(refs: Any, field_path: str = "metadata.ownerReferences") -> list[FieldError]:
    """``ValidateOwnerReferences``: apiVersion/kind/name/uid set, no Event owner, one controller at most.

    Per-reference errors sit at ``<field_path>.<field>`` without an index, as upstream puts them.
    """
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
    names = [_text(item) for item in _as_list(finalizers)]
    errs = [invalid(field_path, name, msg) for name in names for msg in is_qualified_name(name)]
    if FINALIZER_ORPHAN in names and FINALIZER_FOREGROUND in names:
        detail = FINALIZERS_CONFLICT_MSG.format(orphan=FINALIZER_ORPHAN, foreground=FINALIZER_FOREGROUND)
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

    generate_name = _text(meta.get("generateName"))
    if generate_name:
        errs.extend(invalid("metadata.generateName", generate_name, msg) for msg in name_fn(generate_name, True))
    name = _text(meta.get("name"))
    if not name:
        if not generate_name:
            errs.append(required("metadata.name", NAME_REQUIRED_MSG))
    else:
        errs.extend(invalid("metadata.name", name, msg) for msg in name_fn(name, False))

    namespace = _text(meta.get("namespace"))
    if namespaced:
        if not namespace:
            errs.append(required("metadata.namespace"))
        else:
            errs.extend(validate_namespace_name(namespace, "metadata.namespace"))
    elif namespace:
        errs.append(forbidden("metadata.namespace", NAMESPACE_NOT_ALLOWED_MSG))

    generation = meta.get("generation")
    if isinstance(generation, int) and not isinstance(generation, bool) and generation < 0:
        errs.append(invalid("metadata.generation", generation, IS_NEGATIVE_MSG))
    errs.extend(validate_labels(meta.get("labels"), "metadata.labels"))
    errs.extend(validate_annotations(meta.get("annotations"), "metadata.annotations"))
    errs.extend(validate_owner_references(meta.get("ownerReferences")))
    errs.extend(validate_finalizers(meta.get("finalizers")))
    return errs


def _same_time(a: Any, b: Any) -> bool:
    return _go_time(a) == _go_time(b)


def validate_object_meta_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateObjectMetaUpdate``: no new finalizers while deleting, generation not decremented,
    name/namespace/uid/creationTimestamp/deletionTimestamp/deletionGracePeriodSeconds immutable, and
    the new labels, annotations and owner references valid.

    Fields ``rest.BeforeUpdate`` copies from the stored object before validating are treated as
    copied: an omitted uid, any creationTimestamp when the stored one is set, a changed
    deletionTimestamp when the stored one is set, an omitted deletionGracePeriodSeconds. The
    resourceVersion check is the store's (it gives ``0x0``/409 before validation runs).
    """
    new_meta, old_meta = _as_dict(new.get("metadata")), _as_dict(old.get("metadata"))
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

    errs.extend(validate_labels(new_meta.get("labels"), "metadata.labels"))
    errs.extend(validate_annotations(new_meta.get("annotations"), "metadata.annotations"))
    errs.extend(validate_owner_references(new_meta.get("ownerReferences")))
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


# -- PodDisruptionBudget (pkg/apis/policy/validation) -----------------------------------------------


def _validate_positive_int_or_percent(value: Any, field_path: str) -> list[FieldError]:
    """``ValidatePositiveIntOrPercent``: a non-negative int, or a string that is a percentage."""
    if isinstance(value, str):
        return [_invalid_rendered(field_path, _go_int_or_string(value), msg) for msg in is_valid_percent(value)]
    if isinstance(value, int) and not isinstance(value, bool):
        return [invalid(field_path, value, IS_NEGATIVE_MSG)] if value < 0 else []
    return [invalid(field_path, value, INT_OR_PERCENT_MSG)]


def _is_not_more_than_100_percent(value: Any, field_path: str) -> list[FieldError]:
    """``IsNotMoreThan100Percent``: only a valid percentage string is checked."""
    if not isinstance(value, str) or is_valid_percent(value) or int(value[:-1]) <= 100:
        return []
    return [_invalid_rendered(field_path, _go_int_or_string(value), NOT_MORE_THAN_100_PERCENT_MSG)]


def validate_pdb_spec(spec: Mapping[str, Any] | None, field_path: str = "spec") -> list[FieldError]:
    """``ValidatePodDisruptionBudgetSpec`` (policy/v1): minAvailable xor maxUnavailable, each a
    non-negative int or a percentage of at most 100%, a valid selector, a known unhealthyPodEvictionPolicy.
    """
    body = _as_dict(spec)
    errs: list[FieldError] = []
    min_available, max_unavailable = body.get("minAvailable"), body.get("maxUnavailable")
    if min_available is not None and max_unavailable is not None:
        # Upstream prints the policy.PodDisruptionBudgetSpec struct (pointers); JSON stands in for it.
        errs.append(invalid(field_path, body, PDB_BOTH_SET_MSG))
    for key, value in (("minAvailable", min_available), ("maxUnavailable", max_unavailable)):
        if value is not None:
            errs.extend(_validate_positive_int_or_percent(value, _child(field_path, key)))
            errs.extend(_is_not_more_than_100_percent(value, _child(field_path, key)))
    errs.extend(validate_label_selector(body.get("selector"), _child(field_path, "selector")))
    policy = body.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in UNHEALTHY_POD_EVICTION_POLICIES:
        path = _child(field_path, "unhealthyPodEvictionPolicy")
        errs.append(not_supported(path, policy, list(UNHEALTHY_POD_EVICTION_POLICIES)))
    return errs


# -- VolumeAttachment (pkg/apis/storage/validation) --------------------------------------------------


def validate_csi_driver_name(name: str, field_path: str) -> list[FieldError]:
    """``ValidateCSIDriverName``: required, at most 63 bytes, a DNS-1123 subdomain once lower-cased."""
    text = _text(name)
    errs: list[FieldError] = []
    if not text:
        errs.append(required(field_path))
    if _blen(text) > CSI_DRIVER_NAME_MAX_LENGTH:
        errs.append(too_long(field_path, CSI_DRIVER_NAME_MAX_LENGTH))
    errs.extend(invalid(field_path, text, msg) for msg in is_dns1123_subdomain(text.lower()))
    return errs


def _validate_volume_error(error: Any, field_path: str) -> list[FieldError]:
    if not isinstance(error, dict):
        return []
    errs: list[FieldError] = []
    if _blen(_text(error.get("message"))) > MAX_VOLUME_ERROR_MESSAGE_SIZE:
        # Upstream checks 1024 bytes but reports the attachment-metadata limit; kept as it is.
        errs.append(too_long(_child(field_path, "message"), MAX_ATTACHED_VOLUME_METADATA_SIZE))
    code = error.get("errorCode")
    if isinstance(code, int) and not isinstance(code, bool) and code < 0:
        errs.append(invalid(_child(field_path, "errorCode"), code, _inclusive_range_error(0, MAX_INT32)))
    return errs


def _validate_volume_attachment_common(obj: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateVolumeAttachment`` without its ObjectMeta part: spec and status."""
    spec = _as_dict(obj.get("spec"))
    errs: list[FieldError] = []
    if not _text(spec.get("attacher")):
        errs.append(required("spec.attacher"))
    source = _as_dict(spec.get("source"))
    inline, pv_name = source.get("inlineVolumeSpec"), source.get("persistentVolumeName")
    if inline is None and pv_name is None:
        errs.append(required("spec.source", VA_SOURCE_MSG))
    elif inline is not None and pv_name is not None:
        errs.append(forbidden("spec.source", VA_SOURCE_MSG))
    elif pv_name is not None and not _text(pv_name):
        errs.append(required("spec.source.persistentVolumeName", VA_EMPTY_PV_NAME_MSG))
    # (an inlineVolumeSpec is a PersistentVolumeSpec; its validation is out of scope here)
    node_name = _text(spec.get("nodeName"))
    errs.extend(invalid("spec.nodeName", node_name, msg) for msg in _name_is_dns_subdomain(node_name, False))

    status = _as_dict(obj.get("status"))
    metadata = _as_dict(status.get("attachmentMetadata"))
    if sum(_blen(_text(k)) + _blen(_text(v)) for k, v in metadata.items()) > MAX_ATTACHED_VOLUME_METADATA_SIZE:
        errs.append(too_long("status.attachmentMetadata", MAX_ATTACHED_VOLUME_METADATA_SIZE))
    errs.extend(_validate_volume_error(status.get("attachError"), "status.attachError"))
    errs.extend(_validate_volume_error(status.get("detachError"), "status.detachError"))
    return errs


def validate_volume_attachment(obj: Mapping[str, Any]) -> list[FieldError]:
    """A storage.k8s.io/v1 VolumeAttachment on create: attacher required and a valid CSI driver name,
    exactly one source, a non-empty persistentVolumeName that is a valid PV name, nodeName a valid
    node name, status sizes (``ValidateVolumeAttachment`` + ``ValidateVolumeAttachmentV1``).

    Metadata is :func:`validate_object_meta`'s (cluster-scoped, ``subdomain``). Upstream reports an
    empty attacher twice (both checks run); the duplicate is dropped, as the message drops it.
    """
    errs = _validate_volume_attachment_common(obj)
    spec = _as_dict(obj.get("spec"))
    errs.extend(validate_csi_driver_name(_text(spec.get("attacher")), "spec.attacher"))
    pv_name = _as_dict(spec.get("source")).get("persistentVolumeName")
    if pv_name is not None:
        text = _text(pv_name)
        errs.extend(
            invalid("spec.source.persistentVolumeName", text, msg) for msg in _name_is_dns_subdomain(text, False)
        )
    return _dedupe(errs)


def validate_volume_attachment_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateVolumeAttachmentUpdate``: the new object's spec and status checks (not the v1-only
    attacher/PV name checks, which run on create only) and an unchanged spec.

    The immutable-spec error renders the new spec as compact JSON: upstream prints the Go struct
    ``storage.VolumeAttachmentSpec{...}`` with a pointer address for persistentVolumeName.
    """
    errs = _validate_volume_attachment_common(new)
    new_spec, old_spec = new.get("spec"), old.get("spec")
    if not _semantic_equal(new_spec, old_spec):
        errs.append(invalid("spec", _as_dict(new_spec), FIELD_IMMUTABLE_MSG))
    return _dedupe(errs)


# -- Pod (pkg/apis/core/validation, basics only) -----------------------------------------------------


def _validate_int_field(value: Any, field_path: str, lo: int, hi: int | None, detail: str) -> list[FieldError]:
    if value is None or isinstance(value, bool) or not isinstance(value, int):
        return []
    if value < lo or (hi is not None and value > hi):
        return [invalid(field_path, value, detail)]
    return []


def validate_pod_spec(spec: Mapping[str, Any] | None, field_path: str = "spec") -> list[FieldError]:
    """The quantity-free basics of ``ValidatePodSpec``: containers present, each with a unique
    DNS-1123-label name and an image; restartPolicy, terminationGracePeriodSeconds and
    activeDeadlineSeconds in range. ``field_path`` is ``spec.template.spec`` for pod templates.
    """
    body = _as_dict(spec)
    errs: list[FieldError] = []
    containers_path = _child(field_path, "containers")
    containers = _as_list(body.get("containers"))
    if not containers:
        errs.append(required(containers_path))
    seen: set[str] = set()
    for i, raw in enumerate(containers):
        container = _as_dict(raw)
        path = _index(containers_path, i)
        name = _text(container.get("name"))
        if not name:
            errs.append(required(_child(path, "name")))
        else:
            errs.extend(invalid(_child(path, "name"), name, msg) for msg in is_dns1123_label(name))
        if not _text(container.get("image")):
            errs.append(required(_child(path, "image")))
        if name in seen:
            errs.append(duplicate(_child(path, "name"), name))
        seen.add(name)

    policy = body.get("restartPolicy")
    if policy not in (None, "") and policy not in RESTART_POLICIES:  # "" is defaulted to Always
        errs.append(not_supported(_child(field_path, "restartPolicy"), policy, list(RESTART_POLICIES)))
    errs.extend(
        _validate_int_field(
            body.get("terminationGracePeriodSeconds"),
            _child(field_path, "terminationGracePeriodSeconds"),
            0,
            None,
            IS_NEGATIVE_MSG,
        )
    )
    errs.extend(
        _validate_int_field(
            body.get("activeDeadlineSeconds"),
            _child(field_path, "activeDeadlineSeconds"),
            1,
            MAX_INT32,
            _inclusive_range_error(1, MAX_INT32),
        )
    )
    return errs


def _validate_container_updates(new: list[Any], old: list[Any], field_path: str) -> tuple[list[FieldError], bool]:
    """``ValidateContainerUpdates``: same number of containers (else stop), images set and trimmed."""
    if len(new) != len(old):
        return [forbidden(field_path, POD_ADD_REMOVE_CONTAINERS_MSG)], True
    errs: list[FieldError] = []
    for i, raw in enumerate(new):
        image = _text(_as_dict(raw).get("image"))
        image_path = _child(_index(field_path, i), "image")
        if not image:
            errs.append(required(image_path))
        if image.strip() != image:
            errs.append(invalid(image_path, image, IMAGE_WHITESPACE_MSG))
    return errs, False


def _without_toleration_seconds(toleration: Any) -> Any:
    body = dict(_as_dict(toleration))
    body.pop("tolerationSeconds", None)
    return _normalized(body)


def _spec_diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    """A short ``-``/``+`` listing of the changed top-level spec fields.

    Upstream appends ``cmp.Diff`` of the internal Go ``core.PodSpec`` structs, which cannot be
    reproduced from JSON; this keeps the same shape (a diff after a newline), not the same text.
    """
    old_n, new_n = _as_dict(_normalized(old)), _as_dict(_normalized(new))
    lines = []
    for key in sorted(set(old_n) | set(new_n)):
        if old_n.get(key) != new_n.get(key):
            if key in old_n:
                lines.append(f"- {key}: {json.dumps(old_n[key], separators=(',', ':'), sort_keys=True)}")
            if key in new_n:
                lines.append(f"+ {key}: {json.dumps(new_n[key], separators=(',', ':'), sort_keys=True)}")
    return "\n".join(lines)


def validate_pod_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    """The spec half of ``ValidatePodUpdate`` for two Pod objects: the new spec's basics, then the
    update rules (containers neither added nor removed, activeDeadlineSeconds only set or lowered,
    tolerations only added, scheduling gates only removed), then anything else changed in the spec
    (nodeName included: binding goes through ``pods/binding``) is Forbidden at ``spec``.

    Metadata is :func:`validate_object_meta_update`'s. Not covered: the relaxations for pods still
    gated on scheduling (nodeSelector/affinity additions) and in-place resize (off by default in 1.32).
    """
    new_spec, old_spec = _as_dict(new.get("spec")), _as_dict(old.get("spec"))
    errs = validate_pod_spec(new_spec)

    for key in ("containers", "initContainers"):
        update_errs, stop = _validate_container_updates(
            _as_list(new_spec.get(key)), _as_list(old_spec.get(key)), f"spec.{key}"
        )
        errs.extend(update_errs)
        if stop:
            return errs

    new_deadline, old_deadline = new_spec.get("activeDeadlineSeconds"), old_spec.get("activeDeadlineSeconds")
    if isinstance(new_deadline, int) and not isinstance(new_deadline, bool):
        if new_deadline < 0 or new_deadline > MAX_INT32:
            errs.append(invalid("spec.activeDeadlineSeconds", new_deadline, _inclusive_range_error(0, MAX_INT32)))
            return errs
        if isinstance(old_deadline, int) and old_deadline < new_deadline:
            errs.append(invalid("spec.activeDeadlineSeconds", new_deadline, ACTIVE_DEADLINE_INCREASED_MSG))
            return errs
    elif old_deadline is not None:
        errs.append(invalid("spec.activeDeadlineSeconds", None, ACTIVE_DEADLINE_UNSET_MSG))

    new_tolerations = [_without_toleration_seconds(t) for t in _as_list(new_spec.get("tolerations"))]
    for toleration in _as_list(old_spec.get("tolerations")):
        if _without_toleration_seconds(toleration) not in new_tolerations:
            errs.append(forbidden("spec.tolerations", TOLERATION_MODIFIED_MSG))
            break

    old_gates = {_text(_as_dict(g).get("name")) for g in _as_list(old_spec.get("schedulingGates"))}
    added_gates = {_text(_as_dict(g).get("name")): i for i, g in enumerate(_as_list(new_spec.get("schedulingGates")))}
    for gate_name, i in sorted(added_gates.items(), key=lambda item: item[1]):
        if gate_name not in old_gates:
            path = _child(_index("spec.schedulingGates", i), "name")
            errs.append(forbidden(path, SCHEDULING_GATE_ADDED_MSG.format(name=gate_name)))

    if _semantic_equal(new_spec, old_spec):
        return errs

    # Put back what may change; whatever still differs may not.
    munged = dict(new_spec)
    for key in ("containers", "initContainers"):
        old_containers = _as_list(old_spec.get(key))
        if key in munged:
            munged[key] = [
                {**_as_dict(c), "image": _as_dict(old_containers[i]).get("image")}
                for i, c in enumerate(_as_list(munged[key]))
            ]
    for key in ("activeDeadlineSeconds", "tolerations", "schedulingGates"):
        munged[key] = old_spec.get(key)
    old_grace, new_grace = old_spec.get("terminationGracePeriodSeconds"), munged.get("terminationGracePeriodSeconds")
    if isinstance(old_grace, int) and old_grace < 0 and new_grace == 1:
        munged["terminationGracePeriodSeconds"] = old_grace
    if not _semantic_equal(munged, old_spec):
        errs.append(forbidden("spec", f"{POD_UPDATE_FORBIDDEN_MSG}\n{_spec_diff(old_spec, munged)}"))
    return errs


__all__ = [
    "NAME_RULES",
    "is_dns1035_label",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "is_qualified_name",
    "is_valid_label_value",
    "is_valid_path_segment_name",
    "is_valid_percent",
    "validate_annotations",
    "validate_csi_driver_name",
    "validate_finalizers",
    "validate_label_selector",
    "validate_labels",
    "validate_namespace_name",
    "validate_object_meta",
    "validate_object_meta_update",
    "validate_owner_references",
    "validate_pdb_spec",
    "validate_pod_spec",
    "validate_pod_update",
    "validate_volume_attachment",
    "validate_volume_attachment_update",
]


# -- workloads (pkg/apis/apps/validation, core ValidateReplicationControllerSpec) -------------------

SELECTOR_MISMATCH_MSG = "`selector` does not match template `labels`"
# ReplicaSet validation says "deployment" too upstream.
EMPTY_SELECTOR_TARGET = {"Deployment": "deployment", "ReplicaSet": "deployment", "StatefulSet": "statefulset",
                         "DaemonSet": "daemonset"}
EMPTY_LABEL_SELECTOR = (
    "&v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}"
)
# Kinds whose spec has replicas, a selector and a pod template.
WORKLOAD_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "ReplicationController")


def _go_string_map(values: Any) -> str:
    """``%#v`` of a ``map[string]string`` (keys sorted, as fmt prints maps)."""
    if not isinstance(values, dict):
        return "map[string]string(nil)"
    return "map[string]string{" + ", ".join(
        f"{_go_quote(str(k))}:{_go_quote(str(v))}" for k, v in sorted(values.items())
    ) + "}"


def validate_workload_spec(kind: str, spec: Mapping[str, Any] | None, field_path: str = "spec") -> list[FieldError]:
    """The shape checks every workload spec gets (``ValidateDeploymentSpec`` and its siblings):
    replicas not negative, a selector (a map for a ReplicationController) that the pod template's
    labels match, and the template's pod spec basics."""
    # selectors imports this module (for label rules), so it is imported here, not at the top.
    from harness.apiserver import selectors

    body = _as_dict(spec)
    errs: list[FieldError] = []
    if kind != "DaemonSet":
        errs.extend(_validate_int_field(body.get("replicas"), _child(field_path, "replicas"), 0, None,
                                        IS_NEGATIVE_MSG))
    template = _as_dict(body.get("template"))
    labels = _as_dict(template.get("metadata")).get("labels")
    selector_path = _child(field_path, "selector")
    labels_path = _child(_child(_child(field_path, "template"), "metadata"), "labels")
    if kind == "ReplicationController":
        wanted = _as_dict(body.get("selector"))
        if wanted and any(_as_dict(labels).get(k) != v for k, v in wanted.items()):
            errs.append(_invalid_rendered(labels_path, _go_string_map(labels), SELECTOR_MISMATCH_MSG))
    elif not isinstance(body.get("selector"), dict):
        errs.append(required(selector_path))
    else:
        errs.extend(validate_label_selector(body["selector"], selector_path))
        selector = selectors.label_selector_from_dict(body["selector"])
        if selector is None or selector.empty:
            errs.append(_invalid_rendered(selector_path, EMPTY_LABEL_SELECTOR,
                                          f"empty selector is invalid for {EMPTY_SELECTOR_TARGET[kind]}"))
        elif not errs and not selector.matches(labels if isinstance(labels, dict) else {}):
            errs.append(_invalid_rendered(labels_path, _go_string_map(labels), SELECTOR_MISMATCH_MSG))
    if "template" in body or kind != "ReplicationController":
        errs.extend(validate_pod_spec(template.get("spec"), _child(_child(field_path, "template"), "spec")))
    return errs
