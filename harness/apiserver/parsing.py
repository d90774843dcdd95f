"""Bounded decoding of client JSON and YAML into plain JSON-shaped data.

kube-apiserver's decoders refuse what would hurt the server: JSON nested past a maximum depth
(``invalid character '{' exceeded max depth``), numbers no float64 can hold, YAML whose aliases
expand far beyond the document (go-yaml's ``document contains excessive aliasing`` rule), and
they replace a lone UTF-16 surrogate escape with U+FFFD, as Go's decoder does.

The depth limit is lower than upstream's 10000: every layer of this fake (copies, patches,
validation, the audit diff) walks objects recursively, and Python's stack ends near 1000 frames.
No Kubernetes object comes near :data:`MAX_DEPTH`. Errors are :class:`DecodeError` carrying the
message the apiserver would put after its prefix; callers turn them into a ``Status``.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import yaml

# Nesting of objects and arrays a body may have (upstream: 10000, see the module docstring).
MAX_DEPTH = 100
# go-yaml v2's alias budget (decode.go): past 100 alias expansions and 1000 decoded nodes, the
# share of expanded nodes may not exceed 99% up to 400k nodes, falling linearly to 10% at 4M.
ALIAS_MIN_COUNT = 100
ALIAS_MIN_DECODES = 1000
ALIAS_RATIO_LOW = 400_000
ALIAS_RATIO_HIGH = 4_000_000

FLOAT64_MAX = 1.7976931348623157e308
JSON_DEPTH_MESSAGE = "invalid character '{}' exceeded max depth"
NUMBER_RANGE_MESSAGE = "json: cannot unmarshal number {} into Go value of type float64"
YAML_DEPTH_MESSAGE = "error converting YAML to JSON: yaml: exceeded max depth of {}"
YAML_ALIASING_MESSAGE = "error converting YAML to JSON: yaml: document contains excessive aliasing"

_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


class DecodeError(ValueError):
    """A body the apiserver's decoder refuses; ``str()`` is the decoder's message."""


class NumberRangeError(DecodeError):
    """A JSON number no Go number type holds (the syntax is fine: no "json parse error")."""


class _JSONLikeLoader(yaml.SafeLoader):
    """SafeLoader without the timestamp rule: ``2026-01-01T00:00:00Z`` stays a string, as in JSON."""


_JSONLikeLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _text(value: str) -> str:
    # json.loads joins valid surrogate pairs, so any surrogate left is a lone one.
    if value.isascii():
        return value
    return _SURROGATE.sub("\ufffd", value)


def _reject_constant(name: str) -> Any:
    raise DecodeError(f"invalid character '{name[0]}' looking for beginning of value")


def _bounded_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise NumberRangeError(NUMBER_RANGE_MESSAGE.format(text))
    return value


def _bounded_int(text: str) -> int | float:
    value = int(text)
    # Past float64 an integer cannot be held by any Go number type either.
    if abs(value) > FLOAT64_MAX:
        raise NumberRangeError(NUMBER_RANGE_MESSAGE.format(text))
    return value


def _check_depth(value: dict[str, Any] | list[Any], depth: int) -> None:
    """DecodeError when containers nest past :data:`MAX_DEPTH` (scalars are not visited)."""
    if depth >= MAX_DEPTH:
        raise DecodeError(JSON_DEPTH_MESSAGE.format("{" if type(value) is dict else "["))
    for item in value.values() if type(value) is dict else value:
        kind = type(item)
        if kind is dict or kind is list:
            _check_depth(item, depth + 1)


def _replace_surrogates(value: Any) -> Any:
    kind = type(value)
    if kind is str:
        return _text(value)
    if kind is dict:
        return {_text(k): _replace_surrogates(v) for k, v in value.items()}
    if kind is list:
        return [_replace_surrogates(v) for v in value]
    return value


def loads_json(raw: bytes | str) -> Any:
    """Decode JSON as the apiserver's decoder would accept it; :class:`DecodeError` otherwise
    (malformed text, NaN/Infinity, numbers past float64, nesting past :data:`MAX_DEPTH`)."""
    text = raw.decode("utf-8", errors="replace") if isinstance(raw, (bytes, bytearray)) else raw
    try:
        value = json.loads(text, parse_constant=_reject_constant, parse_float=_bounded_float, parse_int=_bounded_int)
    except RecursionError:
        opener = next((c for c in text if c in "{["), "{")
        raise DecodeError(JSON_DEPTH_MESSAGE.format(opener)) from None
    except DecodeError:
        raise
    except ValueError as exc:
        raise DecodeError(str(exc)) from None
    if type(value) is dict or type(value) is list:
        _check_depth(value, 0)
        if _SURROGATE_ESCAPE.search(text):
            value = _replace_surrogates(value)
    return value


class _YAMLBudget:
    """go-yaml's alias accounting while a composed YAML node graph is turned into JSON data."""

    def __init__(self, loader: _JSONLikeLoader) -> None:
        self.loader = loader
        self.decodes = 0
        self.aliases = 0
        self.seen: set[int] = set()

    def _count(self, in_alias: bool) -> None:
        self.decodes += 1
        if in_alias:
            self.aliases += 1
        if (
            self.aliases > ALIAS_MIN_COUNT
            and self.decodes > ALIAS_MIN_DECODES
            and self.aliases / self.decodes > _allowed_alias_ratio(self.decodes)
        ):
            raise DecodeError(YAML_ALIASING_MESSAGE)

    def convert(self, node: yaml.Node, depth: int, in_alias: bool) -> Any:
        if id(node) in self.seen:
            # The composer shares an anchored node with every alias to it: a second visit is an
            # alias expansion (the alias node itself counts once, then its whole subtree again).
            self._count(in_alias)
            in_alias = True
        else:
            self.seen.add(id(node))
        self._count(in_alias)
        if isinstance(node, yaml.ScalarNode):
            return _scalar(self.loader.construct_object(node))
        if depth >= MAX_DEPTH:
            raise DecodeError(YAML_DEPTH_MESSAGE.format(MAX_DEPTH))
        if isinstance(node, yaml.SequenceNode):
            return [self.convert(item, depth + 1, in_alias) for item in node.value]
        if isinstance(node, yaml.MappingNode):
            self.loader.flatten_mapping(node)  # merge keys (<<), as go-yaml supports them
            out: dict[str, Any] = {}
            for key_node, value_node in node.value:
                if not isinstance(key_node, yaml.ScalarNode):
                    raise DecodeError(f"error converting YAML to JSON: unsupported map key of type {key_node.id}")
                out[_key(self.loader.construct_object(key_node))] = self.convert(value_node, depth + 1, in_alias)
            return out
        raise DecodeError(f"error converting YAML to JSON: unsupported node {node.id}")


def _allowed_alias_ratio(decodes: int) -> float:
    if decodes <= ALIAS_RATIO_LOW:
        return 0.99
    if decodes >= ALIAS_RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * (decodes - ALIAS_RATIO_LOW) / (ALIAS_RATIO_HIGH - ALIAS_RATIO_LOW)


def _key(value: Any) -> str:
    # sigs.k8s.io/yaml turns every scalar key into its JSON string form.
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, (int, float)):
        return str(value)
    raise DecodeError(f"error converting YAML to JSON: unsupported map key {value!r}")


def _scalar(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        raise DecodeError(f"error converting YAML to JSON: unsupported value: {value}")
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > FLOAT64_MAX:
        raise DecodeError(f"error converting YAML to JSON: yaml: cannot represent {str(value)[:20]}... as a number")
    if value is None or isinstance(value, (int, float, bool)):
        return value
    raise DecodeError(f"error converting YAML to JSON: unsupported value of type {type(value).__name__}")


def loads_yaml(raw: bytes | str) -> Any:
    """The first document of a YAML text as JSON data (None when empty), bounded as go-yaml is:
    :class:`DecodeError` for malformed YAML, nesting past :data:`MAX_DEPTH`, excessive aliasing,
    and values JSON cannot hold."""
    try:
        loader = _JSONLikeLoader(raw)  # reads ahead: an undecodable start is a ReaderError already
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise DecodeError("error converting YAML to JSON: " + str(exc).replace("\n", " ")) from None
    try:
        if not loader.check_node():
            return None
        node = loader.get_node()
        if node is None:
            return None
        return _YAMLBudget(loader).convert(node, 0, False)
    except RecursionError:
        raise DecodeError(YAML_DEPTH_MESSAGE.format(MAX_DEPTH)) from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise DecodeError("error converting YAML to JSON: " + str(exc).replace("\n", " ")) from None
    except DecodeError:
        raise
    except ValueError as exc:  # an integer of thousands of digits: Python's int() refuses it
        raise DecodeError(f"error converting YAML to JSON: {exc}") from None
    finally:
        loader.dispose()
