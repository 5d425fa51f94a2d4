"""``agui-chat chat`` and ``demo`` under a real pseudo-terminal (``pexpect``), as a person
uses them: Ctrl-D at an approval prompt rejects (the tool never runs), Ctrl-C abandons any
prompt and cancels a streaming reply without ending the session, and a second Ctrl-C at
``you>`` quits with status 130, never a traceback. The agent is a live ``AGUIServer`` on
127.0.0.1 whose tools count their runs."""

from __future__ import annotations

import io
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pexpect
from live_agent import Agent, live_agent

from meai_texts import REJECTED

TIMEOUT = 30


@contextmanager
def terminal(*args: str) -> Iterator[pexpect.spawn]:
    """``python -m agui_chat ARGS`` on a pseudo-terminal; killed if still running at the end."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env["PYTHONUNBUFFERED"] = "1"
    child = pexpect.spawn(
        sys.executable,
        ["-m", "agui_chat", *args],
        env=env,
        encoding="utf-8",
        timeout=TIMEOUT,
        dimensions=(40, 200),
    )
    child.logfile_read = io.StringIO()  # everything it printed, for finish()
    try:
        yield child
    finally:
        if child.isalive():
            child.terminate(force=True)
        child.close()


def finish(child: pexpect.spawn) -> tuple[int, str]:
    """Wait for the child to exit: (status, everything it printed)."""
    child.expect(pexpect.EOF)
    child.close()
    output = child.logfile_read.getvalue()
    assert "Traceback" not in output, output
    return child.exitstatus if child.exitstatus is not None else -1, output


def wait_until(condition: object, what: str) -> None:
    for _ in range(500):
        if callable(condition) and condition():
            return
        threading.Event().wait(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def approval_prompt(child: pexpect.spawn) -> None:
    child.expect_exact("you> ")
    child.sendline("clean up the draft")
    child.expect_exact('approve delete_file(path="reports/draft.txt")? [y]es / [n]o / [e]dit: ')


def rejection_seen(agent: Agent) -> str:
    (result,) = agent.results_seen_by_model()
    return str(result)


def test_ctrl_d_at_an_approval_prompt_rejects_and_the_tool_never_runs() -> None:
    with live_agent() as (url, agent), terminal("chat", url) as child:
        approval_prompt(child)
        child.sendeof()
        child.expect_exact("end of input: rejected delete_file (no answer from the person)")
        child.expect_exact("you> ")
        child.sendeof()
        status, _ = finish(child)
    assert status == 0
    assert agent.deleted == []
    assert rejection_seen(agent) == "Tool call invocation rejected. no answer from the person"


def test_ctrl_c_at_an_approval_prompt_rejects_aloud_and_returns_to_you() -> None:
    with live_agent() as (url, agent), terminal("chat", url) as child:
        approval_prompt(child)
        child.sendintr()
        child.expect_exact("rejected delete_file: no answer from the person")
        child.expect_exact(f"agent> Done: {REJECTED}")
        child.expect_exact("you> ")
        child.sendline("hello")
        child.expect_exact("agent> Hello from the live agent.")
        child.expect_exact("you> ")
        child.sendeof()
        status, _ = finish(child)
    assert status == 0
    assert agent.deleted == []
    assert rejection_seen(agent) == "Tool call invocation rejected. no answer from the person"


def test_ctrl_c_at_a_question_prompt_cancels_the_question() -> None:
    with live_agent() as (url, agent), terminal("chat", url) as child:
        child.expect_exact("you> ")
        child.sendline("deploy it")
        child.expect_exact("Build number (integer, required): ")
        child.sendintr()
        child.expect_exact("question cancelled: no answer from the person")
        child.expect_exact("agent> Done: deployment of web cancelled")
        child.expect_exact("you> ")
        child.sendeof()
        status, _ = finish(child)
    assert status == 0
    assert agent.results_seen_by_model() == ["deployment of web cancelled"]


def test_ctrl_c_at_you_abandons_the_line_and_a_second_one_quits_with_130() -> None:
    with live_agent() as (url, agent), terminal("chat", url) as child:
        child.expect_exact("you> ")
        child.send("half a thought")
        child.sendintr()
        child.expect_exact("press Ctrl-C again, or Ctrl-D, to quit")
        child.expect_exact("you> ")
        child.sendintr()
        status, _ = finish(child)
    assert status == 130
    assert agent.model.calls == []  # the abandoned line was never sent


def test_ctrl_c_while_a_reply_streams_cancels_that_turn_and_the_next_one_works() -> None:
    with live_agent() as (url, agent), terminal("chat", url) as child:
        child.expect_exact("you> ")
        child.sendline("go slowly")
        child.expect_exact("agent> tick tick ")
        child.sendintr()
        child.expect_exact("\r\n  turn cancelled (Ctrl-C); the conversation goes on")
        wait_until(lambda: agent.slow_streams_cut == 1, "the server to see the client leave")
        child.expect_exact("you> ")
        child.sendline("hello")
        child.expect_exact("agent> Hello from the live agent.")
        child.expect_exact("you> ")
        child.sendeof()
        status, _ = finish(child)
    assert status == 0  # the last turn succeeded
    # The cancelled turn left no trace: the second turn's history is just "hello".
    assert [m.text for m in agent.model.calls[-1][0] if m.role == "user"] == ["hello"]


def test_demo_at_a_terminal_takes_ctrl_c_at_both_prompts_without_a_traceback() -> None:
    with terminal("demo") as child:
        child.expect_exact("approve delete_file(")
        child.expect_exact("[y]es / [n]o / [e]dit: ")
        child.sendintr()
        child.expect_exact("rejected delete_file: no answer from the person")
        child.expect_exact("Build number to deploy (integer, required) [42]: ")
        child.sendintr()
        child.expect_exact("question cancelled: no answer from the person")
        status, output = finish(child)
    assert status == 1
    assert "deleted reports" not in output
    assert "a prompt got no answer, so nothing was approved" in output


def test_demo_at_a_terminal_runs_what_the_person_typed() -> None:
    with terminal("demo") as child:
        child.expect_exact("[y]es / [n]o / [e]dit: ")
        child.sendline("y")
        child.expect_exact("Build number to deploy (integer, required) [42]: ")
        child.sendline("")
        child.expect_exact("A note for the release log (string, optional): ")
        child.sendline("friday")
        status, output = finish(child)
    assert status == 0, output
    assert "deleted reports/q3-draft.txt" in output
    assert "deployed web build 42 (friday)" in output
    assert "Round trip complete" in output
