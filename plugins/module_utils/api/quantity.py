# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Kubernetes resource.Quantity in its canonical form, as kops writes every quantity of the specs it stores.

kops reads a quantity (``3.14``, ``0.5``, ``1024Mi``) into a resource.Quantity and writes it back as
Quantity.String(): ``3140m``, ``500m``, ``1Gi``.  The rules (apimachinery's CanonicalizeBytes):

  - the format is the one written: binary-SI (Ki..Ei), decimal exponent (e3) or decimal-SI (the rest, a bare
    number included); a binary-SI value under 1024 in magnitude, or not a whole number, is written decimal-SI;
  - decimal: the mantissa is the whole number left once every trailing zero is moved into the exponent, then
    the exponent lowered to a multiple of 3 (3.14 = 314e-2 -> 3140e-3 -> 3140m; 1500 = 15e2 -> 1500);
  - binary: every factor of 1024 moved into the suffix (1048576 -> 1Mi, 1536Mi stays 1536Mi);
  - precision below a nano is rounded up (away from zero), as ParseQuantity does; zero is "0".
"""

from __future__ import annotations

import decimal
import re

from ansible_collections.kubeops.kops.plugins.module_utils.errors import SpecError

_PARSE = re.compile(r"^([+-]?(?:\d+(?:\.\d*)?|\.\d+))([KMGTPE]i|[numkMGTPE]|[eE][+-]?\d+)?$")
_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_SUFFIX = {exponent: suffix for suffix, exponent in _DECIMAL.items()}
_BINARY_SUFFIX = {power: suffix for suffix, power in _BINARY.items()}
_CONTEXT = decimal.Context(prec=200)


def canonical(value):
    """The canonical string of a quantity given as a YAML number or string; ValueError for anything else."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise SpecError("%r is not a quantity (for example 100m, 0.5 or 1Gi)" % (value,))
    match = _PARSE.match(value.strip() if isinstance(value, str) else repr(value))
    if not match:
        raise SpecError("%r is not a quantity (for example 100m, 0.5 or 1Gi)" % (value,))
    number, suffix = _CONTEXT.create_decimal(match.group(1)), match.group(2) or ""
    if suffix in _BINARY:
        amount, form = number * _CONTEXT.power(1024, _BINARY[suffix]), "binary"
    elif suffix[:1] in ("e", "E"):
        amount, form = _CONTEXT.multiply(number, _CONTEXT.power(10, int(suffix[1:]))), "exponent"
    else:
        amount, form = _CONTEXT.multiply(number, _CONTEXT.power(10, _DECIMAL[suffix])), "decimal"
    # ParseQuantity keeps nano precision at most, rounding up away from zero.
    amount = amount.quantize(decimal.Decimal("1e-9"), rounding=decimal.ROUND_UP, context=_CONTEXT)
    if amount == 0:
        return "0"
    if form == "binary" and (abs(amount) < 1024 or amount != amount.to_integral_value()):
        form = "decimal"
    if form == "binary":
        mantissa, power = int(amount), 0
        while mantissa % 1024 == 0 and power < 6:
            mantissa, power = mantissa // 1024, power + 1
        return "%d%s" % (mantissa, _BINARY_SUFFIX[power])
    sign, digits, exponent = amount.normalize(_CONTEXT).as_tuple()
    mantissa = int("".join(map(str, digits))) * (-1 if sign else 1)
    shift = exponent % 3  # down to the multiple of 3 below: 314e-2 -> 3140e-3
    mantissa, exponent = mantissa * 10 ** shift, exponent - shift
    if form == "decimal" and exponent in _DECIMAL_SUFFIX:
        return "%d%s" % (mantissa, _DECIMAL_SUFFIX[exponent])
    return "%d%s" % (mantissa, "e%d" % exponent if exponent else "")


def as_number(value):
    """A quantity as kops writes it into a component's config file (AsDec, then a float64): 3140m -> 3.14, 3 -> 3."""
    text = canonical(value)
    match = _PARSE.match(text)
    number, suffix = decimal.Decimal(match.group(1)), match.group(2) or ""
    if suffix in _BINARY:
        number *= 1024 ** _BINARY[suffix]
    elif suffix[:1] in ("e", "E"):
        number = number.scaleb(int(suffix[1:]))
    else:
        number = number.scaleb(_DECIMAL[suffix])
    return int(number) if number == number.to_integral_value() else float(number)
