"""Consent fails closed: a piped ``chat`` reads its answers from stdin like a person and
never invents one (end of input rejects, the tool never runs); only ``--yes`` approves by
itself, and ``chat`` refuses ``--yes`` for a server on another machine unless told
``--yes-i-mean-it``."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from live_agent import live_agent
from test_chat_command import chat
from test_help_and_errors import Outcome, agui_chat  # noqa: F401  (a fixture)


def test_end_of_piped_input_at_an_approval_rejects_and_says_so() -> None:
    with live_agent() as (url, agent):
        out = chat(url, "clean up the draft\n")
    assert out.returncode == 0, out.stdout + out.stderr
    assert agent.deleted == []
    assert "end of input: rejected delete_file (no answer from the person)" in out.stdout
    assert agent.results_seen_by_model() == [
        "Tool call invocation rejected. no answer from the person"
    ]


def test_end_of_piped_input_in_a_question_cancels_it() -> None:
    with live_agent() as (url, agent):
        out = chat(url, "deploy it\n")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "end of input: question cancelled (no answer from the person)" in out.stdout
    assert agent.results_seen_by_model() == ["deployment of web cancelled"]


def test_piped_answers_are_read_as_typed_and_unclear_ones_asked_again() -> None:
    with live_agent() as (url, agent):
        out = chat(url, "clean up the draft\nmaybe\n\nyes\n\n")
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.count("please answer y or n (or e to edit)") == 2
    assert agent.deleted == ["reports/draft.txt"]


def test_the_persons_reason_reaches_the_model_in_their_words() -> None:
    with live_agent() as (url, agent):
        out = chat(url, "clean up the draft\nn\nkeep it\n\n")
    assert out.returncode == 0, out.stdout + out.stderr
    assert agent.deleted == []
    assert agent.results_seen_by_model() == ["Tool call invocation rejected. keep it"]


@pytest.mark.parametrize(
    "url", ["http://10.1.2.3:8000/", "https://agents.example.com/agui", "http://[2001:db8::1]/"]
)
def test_yes_is_refused_for_another_machine(
    url: str,
    agui_chat: Callable[..., Outcome],  # noqa: F811
) -> None:
    out = agui_chat("chat", url, "--yes")
    assert out.returncode == 1
    (line,) = out.stderr.strip().splitlines()
    host = url.split("//")[1].split("/")[0].split(":8000")[0].strip("[]")
    assert line == (
        f"agui-chat: error: --yes would approve every tool call of {host}, another machine, "
        "without asking; drop --yes to decide yourself, or add --yes-i-mean-it"
    )
    assert out.stdout == ""  # refused before anything was sent


def test_yes_i_mean_it_lets_yes_through_for_another_machine(
    agui_chat: Callable[..., Outcome],  # noqa: F811
) -> None:
    # Nothing is typed, so nothing is sent: the session starts and ends at once.
    out = agui_chat("chat", "https://agents.example.com/agui", "--yes", "--yes-i-mean-it")
    assert out.returncode == 0, out.stderr
    assert "talking to https://agents.example.com/agui" in out.stdout


@pytest.mark.parametrize(
    ("url", "loopback"),
    [
        ("http://127.0.0.1:8000/", True),
        ("http://127.5.6.7/", True),
        ("http://localhost:8000/", True),
        ("http://[::1]:8000/", True),
        ("http://10.0.0.1/", False),
        ("http://localhost.example.com/", False),
        ("http://0.0.0.0/", False),
    ],
)
def test_yes_is_let_through_only_for_a_loopback_url(
    url: str,
    loopback: bool,
    agui_chat: Callable[..., Outcome],  # noqa: F811
) -> None:
    # Nothing is typed, so nothing is sent: a session let through starts and ends at once.
    out = agui_chat("chat", url, "--yes")
    assert (out.returncode == 0) is loopback, out.stderr
    assert ("another machine" in out.stderr) is not loopback


def test_yes_against_a_loopback_server_approves_by_itself() -> None:
    with live_agent() as (url, agent):
        out = chat(url.replace("127.0.0.1", "localhost"), "clean up the draft\n\n", "--yes")
    assert out.returncode == 0, out.stdout + out.stderr
    assert agent.deleted == ["reports/draft.txt"]
    assert "[auto]" in out.stdout
