"""samples/governance.py and docs/governance.md run as printed. The sample, run as a program,
refuses the requester, an answerer without the role and an answer from nobody, then runs
Alice's approval; remembers an approval for one conversation (covered there, asked elsewhere,
asked again once revoked); prints the audit trail and verifies it. Every Python block of the
doc is a literal excerpt of the sample or is run here: the two ways of plugging
authentication in (Starlette's ``AuthenticationMiddleware``; FastAPI with a dependency and
``identify=``) identify the requester and the approver over AG-UI, so four eyes holds."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_samples import run

from agui_chat import (
    AuthenticationError,
    ChatMessage,
    ChatOptions,
    FunctionCallContent,
    FunctionResultContent,
    RunError,
    ToolApprovalRequestContent,
    approval_required,
)
from agui_chat.agui import AGUIChatClient
from agui_chat.testing import ScriptedChatClient

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "governance.py"
DOC = (ROOT / "docs" / "governance.md").read_text()
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)

#: Blocks of the doc run by a test here: a string that marks the block -> the test.
EXECUTED = {
    "AuthenticationMiddleware, backend=BearerTokens()": "test_the_starlette_block",
    "fastapi_router(agent,": "test_the_fastapi_block",
    'remember_match="arguments"': "test_the_remember_block",
}

TRAIL = [
    "#1 deploy {'service': 'web'} approved by alice, asked by bob -> ran",
    "#3 write_file {'path': 'notes.txt'} approved by alice -> ran",
    "#5 write_file {'path': 'notes.txt'} remembered by alice, on a grant -> ran",
    "#7 write_file {'path': 'notes.txt'} rejected by alice, reason 'not again' -> did not run",
    "verified 4 records",
]


def blocks(lang: str) -> list[str]:
    return [body for found, body in BLOCK.findall(DOC) if found == lang]


def block_marked(marker: str) -> str:
    [block] = [b for b in blocks("python") if marker in b]
    return block


@pytest.fixture(scope="module")
def printed() -> list[str]:
    out = run(SAMPLE.name, unset=("OPENAI_", "AGUI_"))
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    return out.stdout.splitlines()


def test_the_sample_refuses_the_wrong_answerers_then_runs_the_right_ones(
    printed: list[str],
) -> None:
    assert printed[:4] == [
        "refused bob: APPROVER_IS_REQUESTER",
        "refused dave: APPROVER_NOT_ALLOWED",
        "refused nobody: APPROVER_UNKNOWN",
        "approved by alice: Done: deployed web.",
    ]


def test_the_sample_remembers_an_approval_in_its_conversation_until_revoked(
    printed: list[str],
) -> None:
    assert re.fullmatch(
        r'grant: don\'t ask again for write_file\(path="notes.txt"\) in this conversation '
        r"until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC",
        printed[4],
    )
    assert printed[5:9] == [
        "same call, same conversation: Done: wrote notes.txt.",
        "same call, another conversation: asks (1 request)",
        "revoked: True",
        "after revoking: asks (1 request)",
    ]


def test_the_sample_prints_the_trail_and_verifies_it(printed: list[str]) -> None:
    assert printed[9:] == TRAIL


def test_the_doc_shows_what_the_sample_prints(printed: list[str]) -> None:
    shown = [b for b in blocks("text") if b.startswith(("refused", "#1"))]
    assert len(shown) == 2
    for block in shown:
        lines = block.splitlines()
        start = printed.index(lines[0])
        assert printed[start : start + len(lines)] == lines


def test_every_python_block_of_the_doc_is_run_here_or_an_excerpt_of_the_sample() -> None:
    sample = SAMPLE.read_text()
    python = blocks("python")
    assert len(python) >= 6
    for block in python:
        runners = [test for marker, test in EXECUTED.items() if marker in block]
        assert runners or block in sample, f"neither run here nor an excerpt:\n{block}"
        assert all(name in globals() for name in runners)
    assert "`approval_required(allow_remember=True)`" in DOC


def test_the_remember_block() -> None:
    @approval_required(allow_remember=True)
    def write_file(path: str) -> str:
        """Write a file."""
        return f"wrote {path}"

    request = ToolApprovalRequestContent(
        "approval_c1",
        FunctionCallContent("c1", "write_file", {"path": "notes.txt"}),
        allow_remember=True,
    )
    scope: dict[str, Any] = {"request": request, "timedelta": timedelta}
    exec(f"answer = {block_marked('remember_match=').strip()}", scope)
    assert scope["answer"].to_payload() == {
        "approved": True,
        "remember": {"scope": "thread", "seconds": 600.0},
    }


# -- the authentication examples, over AG-UI ------------------------------------------------


class Deployments:
    """The doc's ``model`` and ``deploy``: four eyes, someone in ops; counts the runs."""

    def __init__(self) -> None:
        self.ran: list[str] = []
        self.calls = 0

        @approval_required(approvers="ops", distinct_approver=True)
        def deploy(service: str) -> str:
            """Deploy a service."""
            self.ran.append(service)
            return f"deployed {service}"

        self.deploy = deploy

    def model(self, messages: list[ChatMessage], options: ChatOptions | None) -> Any:
        if any(isinstance(c, FunctionResultContent) for c in messages[-1].contents):
            return "Done."
        self.calls += 1
        return [FunctionCallContent(f"call_{self.calls}", "deploy", {"service": "web"})]

    def scope(self) -> dict[str, Any]:
        return {"model": ScriptedChatClient(self.model), "deploy": self.deploy}


BOB, ALICE = "Bearer token-of-bob", "Bearer token-of-alice"


async def four_eyes_over_agui(
    app: Any, url: str, deployments: Deployments, refused_for_nobody: Callable[..., Awaitable[Any]]
) -> None:
    """Bob asks; nobody, then Bob himself, are refused; Alice's approval runs it once."""
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://localhost")
    async with AGUIChatClient(url, http_client=http) as client:
        options = ChatOptions(conversation_id="t1")
        history = [ChatMessage("user", "deploy web")]
        http.headers["authorization"] = BOB
        paused = await client.get_response(history, options)
        (request,) = paused.input_requests
        assert isinstance(request, ToolApprovalRequestContent)
        history += [*paused.messages, ChatMessage("user", [request.create_response(True)])]
        del http.headers["authorization"]
        await refused_for_nobody(client, history, options)
        http.headers["authorization"] = BOB
        with pytest.raises(RunError) as own:
            await client.get_response(history, options)
        assert own.value.code == "APPROVER_IS_REQUESTER"
        assert deployments.ran == []
        http.headers["authorization"] = ALICE
        done = await client.get_response(history, options)
    assert done.text == "Done."
    assert deployments.ran == ["web"]


async def test_the_starlette_block(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGUI_CHAT_SIGNING_KEY", raising=False)
    deployments = Deployments()
    scope = deployments.scope()
    exec(block_marked("AuthenticationMiddleware, backend=BearerTokens()"), scope)

    async def nobody_is_unknown(client: Any, history: Any, options: Any) -> None:
        with pytest.raises(RunError) as unknown:  # anonymous: the server sees nobody
            await client.get_response(history, options)
        assert unknown.value.code == "APPROVER_UNKNOWN"

    await four_eyes_over_agui(
        scope["app"], "http://localhost/agent/", deployments, nobody_is_unknown
    )


async def test_the_fastapi_block(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("fastapi", reason="needs FastAPI: pip install fastapi (the dev set has it)")
    monkeypatch.delenv("AGUI_CHAT_SIGNING_KEY", raising=False)
    deployments = Deployments()
    scope = deployments.scope()
    exec(block_marked("fastapi_router(agent,"), scope)
    assert scope["agent"].require_identity is True

    async def nobody_is_turned_away(client: Any, history: Any, options: Any) -> None:
        with pytest.raises(AuthenticationError) as turned_away:  # the dependency's 401
            await client.get_response(history, options)
        assert turned_away.value.status_code == 401

    await four_eyes_over_agui(
        scope["app"], "http://localhost/agent", deployments, nobody_is_turned_away
    )
