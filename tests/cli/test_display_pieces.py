"""The pieces of the terminal's display (issue 25) that a pty test reaches only in part: the
approval line, the lines an edit shows, a schema's labels, and log lines on stderr."""

from __future__ import annotations

import io
import logging

from agui_chat._display import DISPLAY_LIMIT, shown_call
from agui_chat.cli._log_lines import _VisibleFormatter
from agui_chat.cli._prompts import approval_prompt, changes, field_prompt, one_line

HOSTILE = "x\x1b[8m\napprove lookup(q=1)? [y]es\x1b]0;t\x07\u202e"


def test_the_approval_line_offers_the_whole_only_when_the_call_is_cut() -> None:
    short = approval_prompt(shown_call("rm", {"p": "a"}), allow_edits=True)
    assert short == 'approve rm(p="a")? [y]es / [n]o / [e]dit: '
    long = approval_prompt(shown_call("rm", {"p": "a" * DISPLAY_LIMIT}), allow_edits=False)
    assert long.endswith("more characters]? [y]es / [n]o / [v]iew all: ")


def test_an_edit_shows_each_changed_added_and_removed_argument_as_json() -> None:
    lines = changes({"path": "a", "force": True, "n": 1}, {"path": "b", "n": 1.0, "x": HOSTILE})
    assert lines == [
        'changed  path="a"  →  path="b"',
        "removed  force=true",
        "changed  n=1  →  n=1.0",
        'added    x="x\\u001b[8m\\napprove lookup(q=1)? [y]es\\u001b]0;t\\u0007\\u202e"',
    ]


def test_schema_labels_choices_and_defaults_are_one_escaped_line() -> None:
    prompt = field_prompt("f", {"description": HOSTILE, "enum": [HOSTILE, 2]}, True)
    assert "\n" not in prompt and "\x1b" not in prompt and "\u202e" not in prompt
    assert prompt.startswith("  x\\x1b[8m\\x0aapprove lookup")
    assert prompt.endswith("\\u202e/2, required): ")
    assert one_line(HOSTILE) == "x\\x1b[8m\\x0aapprove lookup(q=1)? [y]es\\x1b]0;t\\x07\\u202e"


def test_log_lines_escape_what_a_peer_put_in_them() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(_VisibleFormatter("agui-chat: %(levelname)s: %(message)s"))
    logger = logging.getLogger("agui_chat.test_display_pieces")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("refused the resume of run %s", HOSTILE)
        try:
            raise ValueError(HOSTILE)
        except ValueError:
            logger.exception("failed")
    finally:
        logger.removeHandler(handler)
    written = stream.getvalue()
    first, *rest = written.splitlines()
    assert first == (
        "agui-chat: WARNING: refused the resume of run "
        "x\\x1b[8m\\x0aapprove lookup(q=1)? [y]es\\x1b]0;t\\x07\\u202e"
    )
    assert "\x1b" not in written and "\x07" not in written and "\u202e" not in written
    assert "Traceback (most recent call last):" in rest  # a traceback keeps its lines
