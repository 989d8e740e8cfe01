"""Unit tables: the bounded loader, the extender's request decoding and option parsing."""

from __future__ import annotations

import msgspec
import pytest

from scheduler_build import safeyaml
from scheduler_build.settings import options
from scheduler_build.errors import UserError
from scheduler_build.extender import depth, protocol
from testkit import samples
from tests.integration.test_input_errors import BOMB, DEEP_BLOCK, DEEP_FLOW, DEEP_JSON


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


DECODERS = [protocol.decode_extender_args, protocol.decode_binding_args, protocol.decode_preemption_args,
            protocol.loads]


def _nest(levels: int, inner: bytes = b"1") -> bytes:
    return b'{"a":' * levels + inner + b"}" * levels


@pytest.mark.parametrize("decode", DECODERS)
def test_extender_deep_json_is_a_protocol_error(decode):
    """The same bound on every Python: 5,000 levels decoded on 3.13 (its C recursion limit is about
    10,000) and failed on 3.11 (about 1,000) before depth.too_deep measured it first."""
    node = samples.node("n1")
    deep_node = msgspec.json.encode(node)[:-1] + b',"x":' + _nest(5000) + b"}"
    for body in (DEEP_JSON.encode(), b'{"Pod":' + _nest(5000) + b"}", b"[" * 5000,
                 b'{"Pod":' + _nest(depth.MAX_DEPTH) + b"}",  # one more than the bound with the outer object
                 b'{"Pod": {}, "Nodes": {"items": [' + deep_node + b"]}}"):
        with pytest.raises(protocol.ProtocolError, match="nested too deeply"):
            decode(body)


@pytest.mark.parametrize("decode", DECODERS)
def test_extender_json_at_the_bound_is_decoded(decode):
    """Exactly MAX_DEPTH levels: decoded (and maybe refused for what it lacks, never for its depth)."""
    at_bound = b'{"Pod":' + _nest(depth.MAX_DEPTH - 1) + b"}"
    try:
        decoded = decode(at_bound)
    except protocol.ProtocolError as exc:
        assert "nested too deeply" not in str(exc)
    else:
        assert decoded is not None


@pytest.mark.parametrize("text", [
    "[]", "{}", "1", '"[[[["', '["]]]", "[[["]', '{"k": "\\"}', '{"k": "\"[[", "v": [[[]]]}',
    '[' * 100 + ']' * 100, '[' * 101 + ']' * 101, '[{"a": "}"}, [[["{"]]]]', '{"a":' * 150 + '1' + '}' * 150,
    '[[[[', ']]]]', '[}', '[[{"a": [1, "x\\\"]"]}]]', '["\u005b[", [["\\"]]]',
])
@pytest.mark.parametrize("limit", [2, 3, 100])
def test_too_deep_agrees_with_the_exact_scan(text, limit):
    """depth.too_deep (C-speed passes) against safeyaml.check_json_depth (an exact scan, the oracle);
    strings holding brackets, quotes and backslashes count for nothing."""
    try:
        safeyaml.check_json_depth(text, limit)
        expected = False
    except safeyaml.InputLimitError:
        expected = True
    assert depth.too_deep(text.encode(), limit) is expected


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
