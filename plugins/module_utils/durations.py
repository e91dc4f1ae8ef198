# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Durations a user gives (timeouts, waits, intervals): plain seconds, or kops' form (Go's time.ParseDuration:
40s, 10m, 1h, 1h30m, 1.5h, 500ms).

One parser for every option that takes a duration, so `wait=10m` means ten minutes wherever it is given, and a
value that is neither form is refused in one line naming the option, the value and the accepted forms (never read
as 0, as Jinja's `int` filter reads "10m").
"""

from __future__ import annotations

import math
import re

from ansible_collections.kubeops.kops.plugins.module_utils.errors import KopsError

# Go's units (time.ParseDuration), longest spelling first where one is a prefix of another.
UNITS = (("ns", 1e-9), ("us", 1e-6), ("\u00b5s", 1e-6), ("ms", 1e-3), ("s", 1.0), ("m", 60.0), ("h", 3600.0))
_NUMBER = r"(?:\d+(?:\.\d*)?|\.\d+)"
_PART = re.compile(r"(%s)(%s)" % (_NUMBER, "|".join(re.escape(unit) for unit, _factor in UNITS)))
_WHOLE = re.compile(r"(?:%s)+" % _PART.pattern)
_PLAIN = re.compile(r"%s" % _NUMBER)
FORMS = "40s, 10m, 1h, 1h30m"


class DurationError(KopsError):
    """A duration given in neither accepted form."""


def seconds(value, option, plain_unit="s"):
    """value as a number of seconds (an int when whole).  A plain number (or numeric text) counts in plain_unit
    ("s", or "h" for an option documented in hours); text with units is Go's form.  Negative values, booleans and
    anything else are refused naming the option."""
    factor = dict(UNITS)[plain_unit]
    if isinstance(value, bool):
        raise _refused(option, value, plain_unit)
    if isinstance(value, (int, float)):
        total = float(value) * factor
    elif isinstance(value, str) and _PLAIN.fullmatch(value.strip()):
        total = float(value.strip()) * factor
    elif isinstance(value, str) and _WHOLE.fullmatch(value.strip()):
        units = dict(UNITS)
        total = sum(float(number) * units[unit] for number, unit in _PART.findall(value.strip()))
    else:
        raise _refused(option, value, plain_unit)
    if total < 0 or math.isnan(total):
        raise _refused(option, value, plain_unit)
    return int(total) if total == int(total) else total


def _refused(option, value, plain_unit):
    plain = "plain seconds (600)" if plain_unit == "s" else "a plain number of %s (2)" % (
        {"h": "hours", "m": "minutes"}.get(plain_unit, plain_unit))
    return DurationError("%s: %r is not a duration; give %s or kops' form: %s" % (option, value, plain, FORMS))


def in_seconds(module, *options, **plain_units):
    """Turn each of the module's duration options into seconds in module.params, in place (an option given as null
    or blank, as an AWX survey sends a question left blank, takes its default).  plain_units: {option: unit} for
    options whose plain numbers are not seconds."""
    spec = module.argument_spec
    for option in options:
        value = module.params.get(option)
        if value is None or isinstance(value, str) and not value.strip():
            value = spec[option].get("default")
        if value is not None:
            module.params[option] = seconds(value, option, plain_units.get(option, "s"))


def describe(total):
    """Seconds as kops prints a duration: 45s, 10m0s, 1h30m0s (whole seconds; fractions as Go would round)."""
    total = int(round(total))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return "%dh%dm%ds" % (hours, minutes, secs)
    if minutes:
        return "%dm%ds" % (minutes, secs)
    return "%ds" % secs
