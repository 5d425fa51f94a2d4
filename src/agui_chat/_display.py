"""What a person is shown: the consent engine's one display function (DESIGN §3 rule 8).

Everything a person reads before deciding — a tool's name and arguments, an interrupt's
message, a question, a tool result, the model's text — goes through :func:`shown_text` or
:func:`shown_call`, in the terminal and on the page alike:

- control characters (C0, DEL, C1), escape sequences, bidirectional and other invisible
  format characters, lone surrogates and line/paragraph separators are shown as visible
  escapes (``\\x1b``, ``\\u202e``), so nothing can hide, reorder or overwrite what runs;
- arguments are shown as the JSON the tool receives (strings quoted and escaped, a literal
  backslash as ``\\\\``), numbers exactly as they are (no float rounding of large integers);
- a value longer than the limit is cut with a marker that says how much is left out, and the
  whole (escaped) text is kept beside it: a display never cuts silently.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: Characters at most shown before a value is cut (the whole stays in :attr:`Shown.full`).
DISPLAY_LIMIT = 2000

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


@dataclass(frozen=True, slots=True)
class Shown:
    """A display: ``text`` to show first, ``full`` the whole, ``omitted`` the characters of
    ``full`` that ``text`` leaves out (0 when ``text`` is the whole)."""

    text: str
    full: str
    omitted: int

    @property
    def cut(self) -> bool:
        return self.omitted > 0


def _escape(char: str) -> str:
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def visible(text: str, *, multiline: bool = False) -> str:
    """``text`` with every hidden character as a visible escape; with ``multiline`` a
    newline (and a tab) stays as it is, for prose such as the model's answer."""
    kept = "\n\t" if multiline else ""
    return "".join(
        _escape(char)
        if char not in kept and unicodedata.category(char) in _HIDDEN_CATEGORIES
        else char
        for char in text
    )


def _cut(full: str, limit: int) -> Shown:
    if len(full) <= limit:
        return Shown(full, full, 0)
    omitted = len(full) - limit
    return Shown(f"{full[:limit]}… [{omitted} more characters]", full, omitted)


def shown_text(text: str, *, multiline: bool = True, limit: int = DISPLAY_LIMIT) -> Shown:
    """How a piece of text (a message, a question, a result) is shown to a person."""
    return _cut(visible(text, multiline=multiline), limit)


def _json(value: Any) -> str:
    return visible(json.dumps(value, ensure_ascii=False, allow_nan=True))


def shown_arguments(arguments: Mapping[str, Any]) -> str:
    """``key=value, ...`` with each value as the JSON the tool receives; a key that is not a
    plain identifier is shown as a JSON string."""
    return ", ".join(
        f"{key if _IDENTIFIER.match(key) else _json(key)}={_json(value)}"
        for key, value in arguments.items()
    )


def shown_call(
    name: str, arguments: Mapping[str, Any] | None, *, limit: int = DISPLAY_LIMIT
) -> Shown:
    """How a tool call is shown for consent: ``name(key=value, ...)``, exactly the call that
    runs."""
    return _cut(f"{visible(name)}({shown_arguments(arguments or {})})", limit)
