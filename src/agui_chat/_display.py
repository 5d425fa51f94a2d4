"""What a person is shown: the consent engine's one display function (DESIGN §3 rule 8).

Everything a person reads before deciding — a tool's name and arguments, an interrupt's
message, a question, a tool result, the model's text — goes through :func:`shown_text` or
:func:`shown_call`, in the terminal and on the page alike:

- control characters (C0, DEL, C1), escape sequences, bidirectional and other invisible
  format characters, lone surrogates, line/paragraph separators and every code point a
  renderer draws as nothing (Unicode's ``Default_Ignorable_Code_Point``: variation
  selectors, the combining grapheme joiner, Hangul fillers, tags, ...) are shown as visible
  escapes (``\\x1b``, ``\\u202e``, ``\\ufe0f``), so nothing can hide, reorder or overwrite
  what runs;
- arguments are shown as the JSON the tool receives (strings quoted and escaped, a literal
  backslash as ``\\\\``), numbers exactly as they are (no float rounding of large integers);
- an edit is shown as what changed (:func:`shown_changes`), and two values that differ
  but would look alike (the same letters composed and decomposed, a space and a no-break
  space) show the code points where they differ escaped;
- a value longer than the limit is cut with a marker that says how much is left out, and the
  whole (escaped) text is kept beside it: a display never cuts silently.
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: Characters at most shown before a value is cut (the whole stays in :attr:`Shown.full`).
DISPLAY_LIMIT = 2000

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
#: Control, format (bidi overrides, zero-width), lone surrogates, private use, unassigned
#: (as this Python's ``unicodedata`` knows them), line and paragraph separators.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
#: Unicode's ``Default_Ignorable_Code_Point`` ranges, from DerivedCoreProperties.txt of
#: Unicode 17.0.0: what a renderer draws as nothing. Python's ``unicodedata`` has no such
#: property, and several of these are letters or marks (Hangul fillers, variation selectors)
#: that no category above catches, so a name or a path could carry them unseen. Its Unicode
#: is older (14.0 on Python 3.11, 15.1 on 3.13): a code point it does not know yet is
#: unassigned to it, so escaped anyway. A test holds this table to the ``regex`` package's
#: and Chromium's own.
_DEFAULT_IGNORABLE_RANGES = (
    (0x00AD, 0x00AD),  # SOFT HYPHEN
    (0x034F, 0x034F),  # COMBINING GRAPHEME JOINER
    (0x061C, 0x061C),  # ARABIC LETTER MARK
    (0x115F, 0x1160),  # HANGUL CHOSEONG FILLER..HANGUL JUNGSEONG FILLER
    (0x17B4, 0x17B5),  # KHMER VOWEL INHERENT AQ..KHMER VOWEL INHERENT AA
    (0x180B, 0x180F),  # MONGOLIAN FREE VARIATION SELECTORS, VOWEL SEPARATOR
    (0x200B, 0x200F),  # ZERO WIDTH SPACE..RIGHT-TO-LEFT MARK
    (0x202A, 0x202E),  # LEFT-TO-RIGHT EMBEDDING..RIGHT-TO-LEFT OVERRIDE
    (0x2060, 0x206F),  # WORD JOINER..NOMINAL DIGIT SHAPES (U+2065 reserved)
    (0x3164, 0x3164),  # HANGUL FILLER
    (0xFE00, 0xFE0F),  # VARIATION SELECTOR-1..VARIATION SELECTOR-16
    (0xFEFF, 0xFEFF),  # ZERO WIDTH NO-BREAK SPACE
    (0xFFA0, 0xFFA0),  # HALFWIDTH HANGUL FILLER
    (0xFFF0, 0xFFF8),  # reserved
    (0x1BCA0, 0x1BCA3),  # SHORTHAND FORMAT LETTER OVERLAP..SHORTHAND FORMAT UP STEP
    (0x1D173, 0x1D17A),  # MUSICAL SYMBOL BEGIN BEAM..MUSICAL SYMBOL END PHRASE
    (0xE0000, 0xE0FFF),  # tags, VARIATION SELECTOR-17..256, reserved
)
_DEFAULT_IGNORABLE = frozenset(
    code for first, last in _DEFAULT_IGNORABLE_RANGES for code in range(first, last + 1)
)


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


def _hidden(char: str) -> bool:
    return ord(char) in _DEFAULT_IGNORABLE or unicodedata.category(char) in _HIDDEN_CATEGORIES


def visible(text: str, *, multiline: bool = False) -> str:
    """``text`` with every hidden character as a visible escape; with ``multiline`` a
    newline (and a tab) stays as it is, for prose such as the model's answer."""
    kept = "\n\t" if multiline else ""
    return "".join(_escape(char) if char not in kept and _hidden(char) else char for char in text)


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


def _canonical(value: Any) -> str:
    """One text per value the tool would receive alike (object keys in any order)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=True)


def shown_changes(
    before: Mapping[str, Any], after: Mapping[str, Any]
) -> list[tuple[str | None, str | None]]:
    """What an edit changed, one argument each: ``(before, after)`` as shown ``key=value``,
    ``None`` where the key is not there; the proposed call's keys first, then the new ones.

    A value differs when the tool would receive it differently (``1`` and ``1.0`` do, two
    objects whose keys are in another order do not). Shown texts that differ but would
    look alike are told apart (see :func:`_told_apart`), also across lines: a key renamed to
    its decomposed spelling reads as one key removed and another added."""
    pairs = [
        (
            shown_arguments({key: before[key]}) if key in before else None,
            shown_arguments({key: after[key]}) if key in after else None,
        )
        for key in [*before, *(k for k in after if k not in before)]
        if key not in before
        or key not in after
        or _canonical(before[key]) != _canonical(after[key])
    ]
    alike: dict[str, set[str]] = {}
    for text in (t for pair in pairs for t in pair if t is not None):
        alike.setdefault(_looks(text), set()).add(text)
    told: dict[str, str] = {}
    for group in alike.values():
        if len(group) > 1:
            texts = sorted(group)
            told.update(zip(texts, _told_apart(texts), strict=True))

    def tell(text: str | None) -> str | None:
        return None if text is None else told.get(text, text)

    return [(tell(b), tell(a)) for b, a in pairs]


def _looks(text: str) -> str:
    """What ``text`` looks like, near enough: its compatibility composition (NFKC), under
    which ``é`` and ``e`` + combining acute, a space and a no-break space, ``K`` and the
    Kelvin sign are one."""
    return unicodedata.normalize("NFKC", text)


def _told_apart(texts: list[str]) -> list[str]:
    """``texts`` (distinct, alike to the eye) with every non-ASCII code point between their
    common start and common end escaped, so a person sees ``caf\\xe9`` against
    ``cafe\\u0301`` where both would read ``café``."""
    start = _shared(texts)
    end = min(_shared([t[::-1] for t in texts]), min(map(len, texts)) - start)
    # A mark left just after the escaped part would sit on an escape's last digit: take the
    # marks into the escaped part.
    while end and unicodedata.category(texts[0][-end])[0] == "M":
        end -= 1
    return [
        t[:start]
        + "".join(c if c.isascii() else _escape(c) for c in t[start : len(t) - end])
        + t[len(t) - end :]
        for t in texts
    ]


def _shared(texts: list[str]) -> int:
    """How many code points every one of ``texts`` starts with."""
    # character by character is what is wanted here: these are texts, not paths
    return len(os.path.commonprefix(texts))  # noqa: RUF071
