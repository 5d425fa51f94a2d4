"""Code points a renderer draws as nothing (Unicode's ``Default_Ignorable_Code_Point``), for
the tests of what a person is shown in the terminal, on the page and by the display
endpoint: a name or a path holding them reads as another (``notes.txt`` with a variation
selector after it, ``lookup`` with a combining grapheme joiner inside), so each must be shown
as an escape.

The escapes are written out here by hand, not computed by the display function they test.
"""

from __future__ import annotations

import unicodedata

#: One of each kind (both ends of a range), with the escape a person must see for it.
INVISIBLE = (
    ("\u00ad", "\\xad"),  # soft hyphen
    ("\u034f", "\\u034f"),  # combining grapheme joiner
    ("\u061c", "\\u061c"),  # Arabic letter mark
    ("\u115f", "\\u115f"),  # Hangul choseong filler
    ("\u1160", "\\u1160"),  # Hangul jungseong filler
    ("\u17b4", "\\u17b4"),  # Khmer vowel inherent aq
    ("\u17b5", "\\u17b5"),  # Khmer vowel inherent aa
    ("\u180b", "\\u180b"),  # Mongolian free variation selector one
    ("\u180c", "\\u180c"),
    ("\u180d", "\\u180d"),
    ("\u180e", "\\u180e"),  # Mongolian vowel separator
    ("\u180f", "\\u180f"),  # Mongolian free variation selector four
    ("\u200b", "\\u200b"),  # zero width space
    ("\u2065", "\\u2065"),  # reserved, default-ignorable
    ("\u3164", "\\u3164"),  # Hangul filler
    ("\ufe00", "\\ufe00"),  # variation selector-1
    ("\ufe0f", "\\ufe0f"),  # variation selector-16 (emoji presentation)
    ("\ufeff", "\\ufeff"),  # zero width no-break space
    ("\uffa0", "\\uffa0"),  # halfwidth Hangul filler
    ("\ufff0", "\\ufff0"),  # reserved, default-ignorable
    ("\U0001bca0", "\\U0001bca0"),  # shorthand format letter overlap
    ("\U0001d173", "\\U0001d173"),  # musical symbol begin beam
    ("\U000e0000", "\\U000e0000"),  # reserved, default-ignorable
    ("\U000e0001", "\\U000e0001"),  # language tag
    ("\U000e0020", "\\U000e0020"),  # tag space
    ("\U000e0041", "\\U000e0041"),  # tag latin capital letter a
    ("\U000e007f", "\\U000e007f"),  # cancel tag
    ("\U000e0100", "\\U000e0100"),  # variation selector-17
    ("\U000e01ef", "\\U000e01ef"),  # variation selector-256
    ("\U000e0fff", "\\U000e0fff"),  # reserved, default-ignorable
)
#: Every one of them, raw, and as a person must see them.
HIDDEN = "".join(raw for raw, _ in INVISIBLE)
SHOWN = "".join(escape for _, escape in INVISIBLE)

#: A tool name, an argument's key and its value, each holding every one of them.
NAME = f"look{HIDDEN}up"
KEY = f"pa{HIDDEN}th"
VALUE = f"notes.txt{HIDDEN}"
#: How the call ``NAME(KEY=VALUE)`` must be shown (a key that is not a plain identifier is
#: shown as a JSON string).
SHOWN_NAME = f"look{SHOWN}up"
SHOWN_CALL = f'{SHOWN_NAME}("pa{SHOWN}th"="notes.txt{SHOWN}")'

#: ``café.txt`` composed (NFC) and decomposed (NFD): the same on screen, another path to the
#: tool.
COMPOSED = unicodedata.normalize("NFC", "café.txt")
DECOMPOSED = unicodedata.normalize("NFD", "café.txt")
assert COMPOSED != DECOMPOSED and "\u0301" in DECOMPOSED

#: Edits that change nothing a person sees unless the display tells them apart: the value
#: proposed, the value edited, and the change as it must be shown (before, after).
LOOK_ALIKE_EDITS = {
    "decomposed": (COMPOSED, DECOMPOSED, ('path="caf\\xe9.txt"', 'path="cafe\\u0301.txt"')),
    "recomposed": (DECOMPOSED, COMPOSED, ('path="cafe\\u0301.txt"', 'path="caf\\xe9.txt"')),
    "variation selector appended": (
        "notes.txt",
        "notes.txt\ufe0f",
        ('path="notes.txt"', 'path="notes.txt\\ufe0f"'),
    ),
    "grapheme joiner inserted": (
        "notes.txt",
        "no\u034ftes.txt",
        ('path="notes.txt"', 'path="no\\u034ftes.txt"'),
    ),
    "no-break space": (
        "my notes.txt",
        "my\u00a0notes.txt",
        ('path="my notes.txt"', 'path="my\\xa0notes.txt"'),
    ),
}
