"""module_utils/durations.py: every duration option reads seconds or kops' (Go's) form, and refuses anything else
in one line naming the option, the value and the forms."""

from __future__ import annotations

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils import durations
from ansible_collections.kubeops.kops.plugins.module_utils.errors import KopsError


@pytest.mark.parametrize("value, expected", [
    (0, 0), (600, 600), ("600", 600), (" 90 ", 90), (1.5, 1.5), ("2.5", 2.5),
    ("40s", 40), ("10m", 600), ("1h", 3600), ("1h30m", 5400), ("15m0s", 900), ("1.5h", 5400), ("2h45m30s", 9930),
    ("500ms", 0.5), ("0s", 0), ("1m30.5s", 90.5),
])
def test_seconds_and_kops_forms(value, expected):
    assert durations.seconds(value, "wait") == expected


def test_whole_seconds_are_ints():
    assert isinstance(durations.seconds("10m", "wait"), int)
    assert isinstance(durations.seconds(5.0, "wait"), int)


@pytest.mark.parametrize("value", ["10x", "m10", "ten", "1h 30m", "-5", -5, "10m-5s", "", True, None, [10], "1e3",
                                   "nan", float("nan")])
def test_anything_else_is_refused_in_one_line(value):
    with pytest.raises(durations.DurationError) as raised:
        durations.seconds(value, "validation_timeout")
    message = str(raised.value)
    assert isinstance(raised.value, KopsError)
    assert "\n" not in message
    assert message == ("validation_timeout: %r is not a duration; give plain seconds (600) or kops' form: "
                       "40s, 10m, 1h, 1h30m" % (value,))


def test_an_option_in_hours_reads_plain_numbers_as_hours():
    assert durations.seconds(2, "renew_before", "h") == 7200
    assert durations.seconds("30m", "renew_before", "h") == 1800
    with pytest.raises(durations.DurationError, match=r"renew_before: 'soon' is not a duration; give a plain "
                                                      r"number of hours \(2\)"):
        durations.seconds("soon", "renew_before", "h")


class Module(object):
    argument_spec = {"wait": {"type": "raw", "default": 0}, "interval": {"type": "raw", "default": 10},
                     "renew_before": {"type": "raw", "default": 1}}

    def __init__(self, **params):
        self.params = params


@pytest.mark.parametrize("given, expected", [(None, 10), ("", 10), ("  ", 10), ("1m", 60), (5, 5)])
def test_module_options_in_place_blank_takes_the_default(given, expected):
    module = Module(wait="10m", interval=given, renew_before="90m")
    durations.in_seconds(module, "wait", "interval", "renew_before", renew_before="h")
    assert module.params == {"wait": 600, "interval": expected, "renew_before": 5400}


@pytest.mark.parametrize("total, text", [(0, "0s"), (45, "45s"), (600, "10m0s"), (5430, "1h30m30s"), (0.4, "0s")])
def test_describe_as_kops_prints(total, text):
    assert durations.describe(total) == text
