"""``agui-chat chat URL`` against a live AGUIServer (uvicorn on 127.0.0.1), driven through a
piped stdin: it streams the reply, shows tool calls, their results and state changes, and
answers approvals (approve, reject with a reason, edit) and questions (a form built from the
interrupt's schema, or cancel) — and what it answered is what ran on the server."""

from __future__ import annotations

import os
import subprocess
import sys

from live_agent import live_agent


def chat(url: str, stdin: str, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    return subprocess.run(
        [sys.executable, "-m", "agui_chat", "chat", url, *extra],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


def test_an_approval_typed_on_stdin_runs_the_tool_once_and_shows_the_call_and_state() -> None:
    with live_agent() as (url, agent):
        out = chat(url, "clean up the draft\na\n\n")
    assert out.returncode == 0, out.stdout + out.stderr
    assert agent.deleted == ["reports/draft.txt"]
    text = out.stdout
    assert "Deleting the draft." in text
    # The call waiting for approval is shown once, by its prompt (issue 25).
    assert [line for line in text.splitlines() if "delete_file(" in line] == [
        '  approve delete_file(path="reports/draft.txt")? [y]es / [n]o / [e]dit: '
        "  <- deleted reports/draft.txt"
    ]
    assert "<- deleted reports/draft.txt" in text
    assert 'state: {"messages_seen": 1}' in text
    assert "Done: deleted reports/draft.txt" in text
    assert "Traceback" not in out.stderr


def test_a_rejection_typed_on_stdin_runs_nothing_and_its_reason_reaches_the_model() -> None:
    with live_agent() as (url, agent):
        out = chat(url, "clean up the draft\nr\nnot today\n\n")
    assert out.returncode == 0, out.stdout + out.stderr
    assert agent.deleted == []
    assert agent.results_seen_by_model() == ["Tool call invocation rejected. not today"]
    assert "Tool call invocation rejected. not today" in out.stdout


def test_a_typed_reason_reaches_the_model_exactly_as_typed() -> None:
    """Nothing of the person's reason is trimmed, capitalised or added (DESIGN §3 rule 7);
    a reason of only spaces is no reason."""
    with live_agent() as (url, agent):
        out = chat(url, "clean up the draft\nr\n  rm -rf /tmp  \n\n")
        blank = chat(url, "clean up the draft\nr\n   \n\n")
    assert out.returncode == 0 and blank.returncode == 0, out.stdout + blank.stdout
    assert agent.deleted == []
    assert agent.results_seen_by_model() == [
        "Tool call invocation rejected.   rm -rf /tmp  ",
        "Tool call invocation rejected.",
    ]


def test_edited_arguments_typed_on_stdin_are_what_runs() -> None:
    with live_agent() as (url, agent):
        out = chat(url, 'clean up the draft\ne\n{"path": "reports/old.txt"}\ny\n\n')
    assert out.returncode == 0, out.stdout + out.stderr
    assert agent.deleted == ["reports/old.txt"]
    assert 'changed  path="reports/draft.txt"  →  path="reports/old.txt"' in out.stdout
    assert 'run the edited call delete_file(path="reports/old.txt") instead?' in out.stdout
    assert "<- deleted reports/old.txt" in out.stdout


def test_a_question_is_answered_through_a_form_built_from_its_schema() -> None:
    with live_agent() as (url, agent):
        out = chat(url, "deploy it\nseven\n0\n7\nhotfix\n\n")
    assert out.returncode == 0, out.stdout + out.stderr
    text = out.stdout
    assert "question: Which build of web?" in text
    assert "Build number (integer, required): " in text
    assert "Release note (string, optional): " in text
    assert "expected integer, got 'seven'" in text
    assert "minimum of 1" in text
    assert "<- deployed web build 7 (hotfix)" in text
    assert agent.results_seen_by_model() == ["deployed web build 7 (hotfix)"]
    assert agent.deploy_runs == ["web", "web"]  # asked, then run again with the answer


def test_a_question_can_be_cancelled_and_the_tool_takes_its_other_branch() -> None:
    with live_agent() as (url, agent):
        out = chat(url, "deploy it\ncancel\n\n")
    assert out.returncode == 0, out.stdout + out.stderr
    assert agent.results_seen_by_model() == ["deployment of web cancelled"]
    assert "Done: deployment of web cancelled" in out.stdout


def test_an_approval_and_a_question_in_one_session_keep_one_history() -> None:
    with live_agent() as (url, agent):
        out = chat(url, "clean up the draft\na\ndeploy it\n3\n\n\n")
    assert out.returncode == 0, out.stdout + out.stderr
    assert agent.deleted == ["reports/draft.txt"]
    assert agent.results_seen_by_model() == ["deleted reports/draft.txt", "deployed web build 3"]
    # The second prompt was sent with the first turn's whole transcript before it.
    last_history = agent.model.calls[-1][0]
    assert [m.text for m in last_history if m.role == "user" and m.text] == [
        "clean up the draft",
        "deploy it",
    ]


def test_yes_answers_every_prompt_itself() -> None:
    with live_agent() as (url, agent):
        out = chat(url, "clean up the draft\n\n", "--yes")
    assert out.returncode == 0, out.stdout + out.stderr
    assert agent.deleted == ["reports/draft.txt"]
    assert "[auto]" in out.stdout


def test_headers_given_with_header_reach_the_server() -> None:
    with live_agent() as (url, agent):
        out = chat(
            url, "hello\n\n", "--header", "Authorization: Bearer s3cret", "--header", "X-Team:blue"
        )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Hello from the live agent." in out.stdout
    assert agent.headers and all(h["authorization"] == "Bearer s3cret" for h in agent.headers)
    assert all(h["x-team"] == "blue" for h in agent.headers)


def test_end_of_input_ends_the_session_cleanly() -> None:
    with live_agent() as (url, agent):
        out = chat(url, "")
    assert out.returncode == 0, out.stdout + out.stderr
    assert agent.model.calls == []
