"""Typed option values: the one place a flag or setting's text becomes a number, size,
duration, enum or version, with one error style (`--flag VALUE: what is wrong; e.g. ...`).

`inputs.common.option` calls `convert()` for every value it decides; the kind of each
key is declared with it (settings.SETTINGS), else the default's type decides (int, float, bool, str).
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from scheduler_build import settings
from scheduler_build.errors import UserError

_DURATION = re.compile(r"^\s*(?:(\d+(?:\.\d+)?)h)?\s*(?:(\d+(?:\.\d+)?)m(?!s))?\s*(?:(\d+(?:\.\d+)?)s?)?\s*$")
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(i?b?)\s*$", re.IGNORECASE)
_SIZE_UNITS = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4}


Kind = settings.Kind  # a setting's kind is declared with it (settings.SETTINGS)


def kind_of(key: str) -> Kind | None:
    """The declared kind of a setting (None: its default's type decides)."""
    row = settings.BY_KEY.get(key)
    return row.kind if row is not None else None


_EXAMPLES = {"duration": "e.g. 300 (seconds), 90s, 5m or 1h30m", "size": "e.g. 65536, 512KiB, 64MiB or 1GiB",
             "int": "a whole number", "float": "a number", "port": "0..65535 (0 picks a free port)"}


def flag_of(key: str) -> str:
    """The command-line flag of a setting."""
    row = settings.BY_KEY.get(key)
    return row.flag_name if row is not None else "--" + key.rsplit(".", 1)[-1].replace("_", "-")


def source(key: str, from_flag: bool) -> str:
    """How an error names where a value came from: the flag, or the setting (invoke.yaml / env)."""
    flag = flag_of(key)
    if from_flag:
        return flag
    env = key.upper().replace(".", "_")
    return f"setting {key} (invoke.yaml, INVOKE_{env} or SCHEDULER_BUILD_{env}{'; flag ' + flag if flag else ''})"


def duration_seconds(text: Any) -> float | None:
    """`300`, `300s`, `1.5s`, `5m`, `1h30m` in seconds; None when not a duration."""
    if isinstance(text, bool):
        return None
    if isinstance(text, (int, float)):
        return float(text)
    match = _DURATION.match(str(text))
    if not match or not any(match.groups()):
        return None
    hours, minutes, secs = (float(g) if g else 0.0 for g in match.groups())
    return hours * 3600 + minutes * 60 + secs


def size_bytes(text: Any) -> int | None:
    """`65536`, `512k`, `64MiB`, `1GB` (binary units throughout) in bytes; None when not a size."""
    if isinstance(text, bool):
        return None
    if isinstance(text, int):
        return text
    match = _SIZE.match(str(text))
    if not match:
        return None
    return int(float(match[1]) * 1024 ** _SIZE_UNITS[match[2].lower()])


# What a boolean setting accepts from a file or the environment (any case); anything else is refused.
BOOLEAN_WORDS = {"true": True, "yes": True, "on": True, "1": True, "false": False, "no": False, "off": False, "0": False}


def convert(key: str, value: Any, default: Any, from_flag: bool, where: str | None = None) -> Any:
    """`value` as the option's kind (declared in settings.SETTINGS, else the default's type), or a one-line UserError.

    `where` names the value's origin (a file and key, an environment variable); default: the flag or setting."""
    kind = kind_of(key) or Kind({bool: "bool", int: "int", float: "float"}.get(type(default), "str"))
    where = where or source(key, from_flag)
    if kind.name == "bool":
        return boolean(value, where)
    if isinstance(value, (dict, list, tuple)):
        raise UserError(f"{where}: a {'mapping' if isinstance(value, dict) else 'list'} where one value is meant",
                        f"e.g. {key.rsplit('.', 1)[-1]}: {default if default not in ('', None) else 'VALUE'}")
    if kind.name == "version" or kind.name == "str":
        return _text(kind, value, where)
    if kind.name == "enum":
        text = str(value).strip().lower()
        if text not in kind.choices:
            raise UserError(f"{where} {value!r}: not one of {', '.join(kind.choices)}", _did_you_mean(text, kind.choices))
        return text
    number = _number(kind, value)
    if number is None:
        raise UserError(f"{where} {_short(value)}: not {_article(kind.name)}", _EXAMPLES[kind.name])
    if kind.name == "port" and not 0 <= number <= 65535:
        raise UserError(f"{where} {number}: not a TCP port", _EXAMPLES["port"])
    if kind.lo is not None and number < kind.lo:
        raise UserError(f"{where} {number}: must be at least {kind.lo:g}", _EXAMPLES.get(kind.name))
    return number


def boolean(value: Any, where: str) -> bool:
    """true/false/yes/no/on/off/1/0 (a YAML boolean, or text in any case) as a bool, else a one-line UserError."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    word = BOOLEAN_WORDS.get(str(value).strip().lower()) if isinstance(value, (str, int)) else None
    if word is None:
        raise UserError(f"{where} {_short(value)}: not a boolean", "use true or false (also yes/no, on/off, 1/0)")
    return word


def _number(kind: Kind, value: Any) -> float | int | None:
    if kind.name == "duration":
        return duration_seconds(value)
    if kind.name == "size":
        return size_bytes(value)
    if isinstance(value, bool):
        return None
    try:
        return int(str(value).strip()) if kind.name in ("int", "port") else float(value)
    except (TypeError, ValueError):
        return None


def _text(kind: Kind, value: Any, where: str) -> Any:
    if kind.name == "version" and isinstance(value, (int, float)) and not isinstance(value, bool):
        # YAML reads `version: 1.10` as the number 1.1: refuse rather than guess.
        raise UserError(f"{where}: the number {value!r} where a version string is meant",
                        "quote it (YAML reads 1.10 as 1.1), e.g. version: \"1.36\"")
    if isinstance(value, bool):  # `dist_dir: true`: YAML's boolean where a text or path is meant
        raise UserError(f"{where} {str(value).lower()}: a boolean where a text or path is meant",
                        "quote it if you mean the word, e.g. \"true\"")
    if isinstance(value, (int, float)):
        return str(value)
    return value


def _article(name: str) -> str:
    return {"int": "a whole number", "float": "a number", "port": "a TCP port number"}.get(name, f"a {name}")


def _short(value: Any) -> str:
    text = repr(value) if len(str(value)) <= 60 else repr(str(value)[:57] + "...")
    return text


def _did_you_mean(text: str, choices: tuple[str, ...]) -> str | None:
    close = difflib.get_close_matches(text, choices, n=1)
    return f"did you mean {close[0]!r}?" if close else None
