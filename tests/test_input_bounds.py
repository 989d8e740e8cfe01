"""Unit tables: the bounded loader, the extender's request decoding and option parsing."""

from __future__ import annotations

import pytest

from scheduler_build import options, safeyaml
from scheduler_build.errors import UserError
from scheduler_build.extender import protocol
from tests.test_input_errors import BOMB, DEEP_BLOCK, DEEP_FLOW, DEEP_JSON


@pytest.mark.parametrize("text, message", [
    (BOMB, "aliases expand to more than"),
    (DEEP_BLOCK, "nested more than 100 levels"),
    (DEEP_FLOW, "nested more than 100 levels"),
    ("x" * (safeyaml.MAX_BYTES + 1), "larger than the"),
])
def test_hostile_yaml_is_refused(text, message):
    with pytest.raises(safeyaml.InputLimitError, match=message):
        safeyaml.load_yaml(text)


def test_ordinary_anchors_still_load():
    assert safeyaml.load_yaml("a: &x {b: 1}\nc: *x\n") == {"a": {"b": 1}, "c": {"b": 1}}
    assert safeyaml.load_json('{"s": "[[[[{{{{"}') == {"s": "[[[[{{{{"}


def test_deep_json_is_refused_with_its_line():
    with pytest.raises(safeyaml.InputLimitError, match="line 2: nested more than"):
        safeyaml.load_json("\n" + DEEP_JSON)


@pytest.mark.parametrize("decode", [protocol.decode_extender_args, protocol.decode_binding_args,
                                    protocol.decode_preemption_args, protocol.loads])
def test_extender_deep_json_is_a_protocol_error(decode):
    for body in (DEEP_JSON.encode(), b'{"Pod":' + b'{"a":' * 5000 + b"1" + b"}" * 5000 + b"}"):
        with pytest.raises(protocol.ProtocolError, match="nested too deeply"):
            decode(body)


@pytest.mark.parametrize("key, value, expected", [
    ("deploy.timeout", "90", 90.0), ("deploy.timeout", "5m", 300.0), ("deploy.timeout", "1h30m", 5400.0),
    ("extender.max_body_bytes", "64MiB", 64 << 20), ("extender.max_body_bytes", "512k", 512 << 10),
    ("extender.port", "0", 0), ("extender.log_level", "INFO", "info"), ("push.retries", "3", 3),
])
def test_option_values(key, value, expected):
    assert options.convert(key, value, None, from_flag=True) == expected


@pytest.mark.parametrize("key, value, message", [
    ("deploy.timeout", "abc", "--timeout 'abc': not a duration"),
    ("deploy.timeout", "0", "--timeout 0.0: must be at least 1"),
    ("extender.max_body_bytes", "lots", "not a size"),
    ("extender.port", "65536", "not a TCP port"),
    ("extender.log_level", "loud", "not one of debug, info, warning, error"),
    ("push.retries", "-1", "must be at least 0"),
    ("k8s.version", 1.1, "the number 1.1 where a version string is meant"),
])
def test_option_errors(key, value, message):
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace(")", r"\)")):
        options.convert(key, value, None, from_flag=True)


def test_option_error_names_the_setting_when_not_a_flag():
    with pytest.raises(UserError, match="setting deploy.timeout .*SCHEDULER_BUILD_DEPLOY_TIMEOUT"):
        options.convert("deploy.timeout", "abc", 300, from_flag=False)
