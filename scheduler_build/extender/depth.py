"""The extender's JSON nesting bound, the same on every Python.

The JSON decoder's own guard is the interpreter's recursion limit: about 1,000 levels on
Python 3.10 and 3.11, about 10,000 on 3.13 (a separate C limit), so a request nested 5,000
deep was refused on one and served on the other. `too_deep` measures the nesting first, at
C speed (bytes.translate and bytes.replace; no Python loop over the body): everything but
brackets, quotes and backslashes is deleted, escapes and then strings are removed, and each
pass of removing innermost pairs peels one level. About a third of the decoder's
own time on a NodeList body (BENCHMARKS.md); a NodeNames body is a few KiB of structure.
"""

from __future__ import annotations

import functools
import itertools
import re
from typing import Any, Callable

MAX_DEPTH = 100  # Kubernetes objects nest about 15 levels (as scheduler_build.safeyaml.MAX_DEPTH)

TOO_DEEP = (f"JSON nested too deeply: more than {MAX_DEPTH} levels (a hostile or broken request); "
            "Kubernetes objects nest about 15 levels")
_STRUCTURE = b'[]{}"\\'
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in _STRUCTURE)
_ONE_KIND = bytes.maketrans(b"{}", b"[]")  # depth does not care which; the decoder reports a mismatch
_STRING = re.compile(rb'"[^"]*"')  # after escapes are gone: a string holding brackets


def _structure(body: bytes) -> bytes:
    """The brackets of `body` outside strings, in order."""
    skeleton = body.translate(_ONE_KIND, _NOT_STRUCTURE)
    if b"\\" in skeleton:  # escapes: \\ first, then \", then the rest lost their letter already
        skeleton = skeleton.replace(b"\\\\", b"").replace(b'\\"', b"").replace(b"\\", b"")
    # A string without brackets is now `""`. Removing any `""` (an empty string, or the end of one
    # string and the start of the next, merging them) keeps what lies outside strings.
    skeleton = skeleton.replace(b'""', b"")
    return _STRING.sub(b"", skeleton) if b'"' in skeleton else skeleton


def too_deep(body: bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether `body` (JSON, possibly malformed) nests more than `limit` arrays/objects deep."""
    skeleton = _structure(body)
    for level in range(limit + 1):
        if not skeleton:
            return False
        peeled = skeleton.replace(b"[]", b"")  # one scan: a pair it forms waits for the next pass
        if len(peeled) == len(skeleton):  # unbalanced (malformed): count what is left open
            return level + _open_depth(skeleton) > limit
        skeleton = peeled
    return True


def _open_depth(skeleton: bytes) -> int:
    """The deepest run of still-open brackets in an unbalanced rest (malformed input only)."""
    steps = (1 if c == ord("[") else -1 for c in skeleton)
    return max(itertools.accumulate(steps, initial=0))


def bounded(error: Callable[[str], Exception]) -> Callable[[Callable[[bytes], Any]], Callable[[bytes], Any]]:
    """A decorator for decoders: a body nested too deeply raises error(TOO_DEEP), on every Python
    (the client's fault, a 400, not ours)."""
    def decorate(decode: Callable[[bytes], Any]) -> Callable[[bytes], Any]:
        @functools.wraps(decode)
        def wrapper(body: bytes) -> Any:
            if too_deep(body):
                raise error(TOO_DEEP)
            try:
                return decode(body)
            except RecursionError:  # not expected below MAX_DEPTH; the last line of defence
                raise error(TOO_DEEP) from None
        return wrapper
    return decorate
