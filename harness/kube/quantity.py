"""Resource quantities (``resource.Quantity``: ``500m``, ``1Gi``, ``1.5``, ``2e3``) as exact numbers.

The kit needs no quantity arithmetic of its own yet (no other module parses them); this is the one
parser when it does. :func:`parse_quantity` accepts what ``resource.ParseQuantity`` accepts: a signed
decimal number and one suffix, binary (``Ki`` .. ``Ei``), decimal SI (``n`` .. ``E``) or a decimal
exponent (``e3``, ``E-2``); the value is an exact :class:`~fractions.Fraction`, never a float.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

BINARY_SUFFIXES = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
DECIMAL_SUFFIXES = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
# apimachinery's ErrFormatWrong text.
FORMAT_WRONG_MSG = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
_QUANTITY = re.compile(r"([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?")


def parse_quantity(text: str) -> Fraction:
    """The exact value of a quantity string; ``ValueError`` with upstream's text when it is malformed."""
    match = _QUANTITY.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        raise ValueError(FORMAT_WRONG_MSG)
    number, suffix = Fraction(match.group(1)), match.group(2) or ""
    if suffix in BINARY_SUFFIXES:
        return number * BINARY_SUFFIXES[suffix]
    if suffix in DECIMAL_SUFFIXES:
        return number * DECIMAL_SUFFIXES[suffix]
    return number * Fraction(10) ** int(suffix[1:])


def value(text: str) -> int:
    """``Quantity.Value()``: the value rounded up to a whole number (``500m`` gives 1)."""
    return math.ceil(parse_quantity(text))


def milli_value(text: str) -> int:
    """``Quantity.MilliValue()``: thousandths, rounded up (``1.5`` gives 1500, ``1n`` gives 1)."""
    return math.ceil(parse_quantity(text) * 1000)


__all__ = ["parse_quantity", "milli_value", "value"]
