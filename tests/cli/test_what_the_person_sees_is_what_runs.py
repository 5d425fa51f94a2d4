"""Issue 25, the terminal: what the person sees is what runs, under a real pseudo-terminal.

A hostile server puts a conceal sequence and a fake ``approve lookup(...)? [y]es`` line (with
an OSC title, a C1 CSI and a right-to-left override) in every place the terminal shows: each
arrives visibly escaped, the real prompt for ``delete_file("/home/you/thesis.tex")`` is on
screen, and a person who answers no deletes nothing. An approval is one line; an edit is
shown as the new call and runs, once, only when confirmed; a long call says it is cut and
shows the whole on ``v``; one Ctrl-C is echoed once.
"""

from __future__ import annotations

import re

import pytest
from hostile_agent import ESCAPED, ESCAPED_JSON, LONG_PATH, RAW, SITES, THESIS, hostile_agent
from live_agent import live_agent
from test_terminal_under_a_pty import finish, terminal

from meai_texts import REJECTED

REAL_PROMPT = f'approve delete_file(path="{THESIS}")? [y]es / [n]o / [e]dit: '
#: The real prompt where it differs from ``REAL_PROMPT``, in the pieces it is matched by.
PROMPTS = {
    "message": (f'approve erase_file(path="{THESIS}")? [y]es / [n]o / [e]dit: ',),
    "own-arguments": (
        f'approve delete_file(path="{THESIS}", note="',
        '")? [y]es / [n]o / [e]dit: ',
    ),
}
PROPOSED = 'approve delete_file(path="reports/draft.txt")? [y]es / [n]o / [e]dit: '
#: The edit line starts as the proposed arguments; Ctrl-U empties it (readline's kill).
PREFILLED = '{"path": "reports/draft.txt"}'
CLEAR_LINE = "\x15"
LEFT, BACKSPACE = "\x1b[D", "\x7f"


def _gnu_readline() -> bool:
    try:
        import readline
    except ImportError:
        return False
    return getattr(readline, "backend", "readline") == "readline" and "libedit" not in (
        readline.__doc__ or ""
    )


#: The edit line is pre-filled through GNU readline (elsewhere the arguments are shown above
#: an empty line, as ``test_demo_interactive_prompts`` checks).
prefilled = pytest.mark.skipif(not _gnu_readline(), reason="this Python has no GNU readline")


def lines_of(output: str) -> list[str]:
    return output.replace("\r\n", "\n").split("\n")


def assert_nothing_raw(output: str) -> None:
    for char in RAW:
        assert char not in output, f"{char!r} reached the terminal raw"
    # The fake prompt never starts a line of its own.
    assert not [line for line in lines_of(output) if re.match(r"\s{0,2}approve lookup", line)]


@pytest.mark.parametrize("site", SITES)
def test_an_injected_fake_prompt_is_shown_escaped_and_the_real_one_is_answered(site: str) -> None:
    with hostile_agent() as (url, agent), terminal("chat", url) as child:
        child.expect_exact("you> ")
        child.sendline(f"attack {site}")
        if site == "question":
            child.expect_exact("/b, required): ")  # the form, every label escaped
            child.sendline("b")
        for part in PROMPTS.get(site, (REAL_PROMPT,)):
            child.expect_exact(part)
        child.sendline("n")
        child.expect_exact("reason (optional): ")
        child.sendline("")
        child.expect_exact(f"agent> Done: {REJECTED}")
        child.expect_exact("you> ")
        child.sendeof()
        status, output = finish(child)
    assert status == 0
    assert agent.deleted == [] and agent.erased == []
    assert_nothing_raw(output)
    escaped = ESCAPED_JSON if site in ("arguments", "own-arguments") else ESCAPED
    for piece in escaped:
        assert piece in output, (piece, output)


def test_one_line_per_approval_and_the_approved_call_runs_once() -> None:
    with live_agent() as (url, agent), terminal("chat", url) as child:
        child.expect_exact("you> ")
        child.sendline("clean up the draft")
        child.expect_exact(PROPOSED)
        shown = child.logfile_read.getvalue()
        child.sendline("y")
        child.expect_exact("agent> Done: deleted reports/draft.txt")
        child.expect_exact("you> ")
        child.sendeof()
        finish(child)
    assert [line for line in lines_of(shown) if "delete_file" in line] == [f"  {PROPOSED}"]
    assert agent.deleted == ["reports/draft.txt"]


def edit(child: object, arguments: str) -> None:
    child.expect_exact("you> ")  # type: ignore[attr-defined]
    child.sendline("clean up the draft")  # type: ignore[attr-defined]
    child.expect_exact(PROPOSED)  # type: ignore[attr-defined]
    child.sendline("e")  # type: ignore[attr-defined]
    child.expect_exact(f"new arguments as JSON: {PREFILLED}")  # type: ignore[attr-defined]
    child.sendline(CLEAR_LINE + arguments)  # type: ignore[attr-defined]
    child.expect_exact(  # type: ignore[attr-defined]
        'changed  path="reports/draft.txt"  →  path="reports/old.txt"'
    )
    child.expect_exact(  # type: ignore[attr-defined]
        'run the edited call delete_file(path="reports/old.txt") instead? [y]es / [n]o, back: '
    )


@prefilled
def test_an_edit_is_shown_as_the_new_call_and_runs_once_only_when_confirmed() -> None:
    with live_agent() as (url, agent), terminal("chat", url) as child:
        edit(child, '{"path": "reports/old.txt"}')
        assert agent.deleted == []  # nothing is sent before the confirmation
        child.sendline("y")
        child.expect_exact("agent> Done: deleted reports/old.txt")
        child.expect_exact("you> ")
        child.sendeof()
        status, _ = finish(child)
    assert status == 0
    assert agent.deleted == ["reports/old.txt"]


@prefilled
def test_a_declined_edit_goes_back_to_the_proposed_call_and_never_runs() -> None:
    with live_agent() as (url, agent), terminal("chat", url) as child:
        edit(child, '{"path": "reports/old.txt"}')
        child.sendline("n")
        child.expect_exact("edit dropped; the proposed call is still waiting for your answer")
        child.expect_exact(PROPOSED)
        child.sendline("n")
        child.expect_exact("reason (optional): ")
        child.sendline("neither")
        child.expect_exact(f"agent> Done: {REJECTED} neither")
        child.expect_exact("you> ")
        child.sendeof()
        finish(child)
    assert agent.deleted == []


@prefilled
@pytest.mark.parametrize("how", ["ctrl-d", "ctrl-c"])
def test_no_answer_to_an_edit_confirmation_rejects(how: str) -> None:
    with live_agent() as (url, agent), terminal("chat", url) as child:
        edit(child, '{"path": "reports/old.txt"}')
        if how == "ctrl-d":
            child.sendeof()
            child.expect_exact("end of input: rejected delete_file (no answer from the person)")
        else:
            child.sendintr()
            child.expect_exact("rejected delete_file: no answer from the person")
        child.expect_exact(f"agent> Done: {REJECTED} no answer from the person")
        child.expect_exact("you> ")
        child.sendeof()
        finish(child)
    assert agent.deleted == []


@prefilled
def test_an_unchanged_or_invalid_edit_is_not_sent() -> None:
    with live_agent() as (url, agent), terminal("chat", url) as child:
        child.expect_exact("you> ")
        child.sendline("clean up the draft")
        child.expect_exact(PROPOSED)
        child.sendline("e")
        child.expect_exact(f"new arguments as JSON: {PREFILLED}")
        child.sendline("")  # the proposed arguments, as they were put on the line
        child.expect_exact("unchanged: that is the proposed call")
        child.expect_exact(PROPOSED)
        child.sendline("e")
        child.expect_exact(f"new arguments as JSON: {PREFILLED}")
        child.sendline(CLEAR_LINE + "[1]")
        child.expect_exact("not accepted: arguments must be a JSON object")
        child.expect_exact(PROPOSED)
        child.sendeof()
        child.expect_exact("you> ")
        child.sendeof()
        finish(child)
    assert agent.deleted == []


@prefilled
def test_the_edit_line_starts_as_the_proposed_arguments_and_is_edited_in_place() -> None:
    with live_agent() as (url, agent), terminal("chat", url) as child:
        child.expect_exact("you> ")
        child.sendline("clean up the draft")
        child.expect_exact(PROPOSED)
        child.sendline("e")
        child.expect_exact(f"new arguments as JSON: {PREFILLED}")
        # Back over `.txt"}`, rub out "draft", type "old": the rest of the line stays.
        child.send(LEFT * 6 + BACKSPACE * 5 + "old")
        child.sendline("")
        child.expect_exact('changed  path="reports/draft.txt"  →  path="reports/old.txt"')
        child.expect_exact("instead? [y]es / [n]o, back: ")
        child.sendline("y")
        child.expect_exact("agent> Done: deleted reports/old.txt")
        child.expect_exact("you> ")
        child.sendeof()
        status, _ = finish(child)
    assert status == 0
    assert agent.deleted == ["reports/old.txt"]


@prefilled
def test_ctrl_c_at_the_edit_line_rejects_and_the_terminal_is_itself_again() -> None:
    with live_agent() as (url, agent), terminal("chat", url) as child:
        child.expect_exact("you> ")
        child.sendline("clean up the draft")
        child.expect_exact(PROPOSED)
        child.sendline("e")
        child.expect_exact(f"new arguments as JSON: {PREFILLED}")
        child.sendintr()
        child.expect_exact("rejected delete_file: no answer from the person")
        child.expect_exact(f"agent> Done: {REJECTED} no answer from the person")
        child.expect_exact("you> ")
        child.sendline("hello")  # read as typed: nothing of the edit line comes with it
        child.expect_exact("agent> Hello from the live agent.")
        child.expect_exact("you> ")
        child.sendintr()  # Ctrl-C is a signal again
        child.expect_exact("press Ctrl-C again, or Ctrl-D, to quit")
        child.sendeof()
        status, _ = finish(child)
    assert status == 0
    assert agent.deleted == []


def test_a_long_call_says_it_is_cut_and_shows_the_whole_on_v() -> None:
    with hostile_agent() as (url, agent), terminal("chat", url) as child:
        child.expect_exact("you> ")
        child.sendline("long")
        cut = "more characters]? [y]es / [n]o / [e]dit / [v]iew all: "
        child.expect_exact(cut)
        child.sendline("v")
        child.expect_exact(f'delete_file(path="{LONG_PATH}")')
        child.expect_exact(cut)  # asked again
        child.sendline("y")
        child.expect_exact("agent> Done: deleted")
        child.expect_exact("you> ")
        child.sendeof()
        finish(child)
    assert agent.deleted == [LONG_PATH]


def test_one_ctrl_c_is_echoed_once() -> None:
    with live_agent() as (url, agent), terminal("chat", url) as child:
        child.expect_exact("you> ")
        child.sendline("clean up the draft")
        child.expect_exact(PROPOSED)
        child.sendintr()
        child.expect_exact("rejected delete_file: no answer from the person")
        child.expect_exact("you> ")
        child.sendintr()
        child.expect_exact("press Ctrl-C again, or Ctrl-D, to quit")
        child.expect_exact("you> ")
        child.sendeof()
        status, output = finish(child)
    assert status == 0
    assert output.count("^C") == 2, output
    assert agent.deleted == []
