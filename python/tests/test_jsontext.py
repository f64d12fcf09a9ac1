"""Strict JSON: what the Python SDK reads and writes is what ``JSON.parse`` reads, and nothing more."""

import json
import math

import pytest

from hookbus import jsontext
from hookbus.errors import HookbusError


@pytest.mark.parametrize("text", [
    b'{"n":NaN}', b'{"n":Infinity}', b'{"n":-Infinity}', b"[NaN]",
    b'{"n":1e999}', b'{"n":-1e999}', b'{"n":1.5E+400}', b"1e309",
])
def test_non_finite_numbers_are_a_bad_message(text):
    with pytest.raises(HookbusError) as raised:
        jsontext.loads(text)
    assert raised.value.code == "HOOKBUS_BAD_MESSAGE"


def test_the_largest_doubles_and_big_integers_are_read_exactly():
    assert jsontext.loads(b"[1.7976931348623157e308,-1e-400,12345678901234567890123]") == [
        1.7976931348623157e308, -0.0, 12345678901234567890123]


@pytest.mark.parametrize("data", [
    b'{"a":"\xff\xfe"}',           # not UTF-8
    b'{"a":"\xed\xa0\x80"}',       # a surrogate encoded in UTF-8 (CESU-8): not UTF-8 either
    '{"a":1}'.encode("utf-16"),   # json.loads would guess UTF-16 from the bytes
    b'\xef\xbb\xbf{"a":1}',        # a UTF-8 byte order mark: JSON.parse refuses it too
    b'{"a":1',
    b"",
])
def test_only_utf8_json_text_is_read(data):
    with pytest.raises(HookbusError) as raised:
        jsontext.loads(data)
    assert raised.value.code == "HOOKBUS_BAD_MESSAGE"


def test_a_lone_surrogate_is_read_as_javascript_reads_it_and_written_back_as_an_escape():
    value = jsontext.loads(b'{"a":"x\\ud800y","b":"\\ud83d\\ude00","\\udfff":1}')
    assert value == {"a": "x\ud800y", "b": "\U0001F600", "\udfff": 1}
    out = jsontext.dumps(value, "HOOKBUS_INVALID_VERDICT", "v")
    out.decode("utf-8")  # valid UTF-8
    assert b"\\ud800" in out and b"\\udfff" in out
    assert jsontext.loads(out) == value
    # What JSON.stringify writes for the same value.
    assert out == b'{"a":"x\\ud800y","b":"\\ud83d\\ude00","\\udfff":1}'


def test_text_without_surrogates_is_written_as_utf8_not_escapes():
    assert jsontext.dumps({"a": "ü😀"}, "X", "v") == '{"a":"ü😀"}'.encode("utf-8")


@pytest.mark.parametrize("value", [
    {"n": math.nan}, {"n": math.inf}, [-math.inf], {"s": {1, 2}}, {"b": b"bytes"},
])
def test_a_value_without_a_json_form_is_the_callers_code(value):
    with pytest.raises(HookbusError) as raised:
        jsontext.dumps(value, "HOOKBUS_INVALID_VERDICT", "the verdict")
    assert raised.value.code == "HOOKBUS_INVALID_VERDICT"
    assert "the verdict has no JSON form" in raised.value.message


def test_whatever_is_written_is_read_back_by_a_strict_reader():
    value = {"k": ["\ud800", "\u2028", "\x00", 1.5, -0.0, 10**30, None, True]}
    out = jsontext.dumps(value, "X", "v")
    assert json.loads(out.decode("utf-8"), parse_constant=pytest.fail) == value
