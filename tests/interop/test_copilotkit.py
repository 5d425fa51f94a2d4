"""CopilotKit (``@copilotkit/react-core`` 1.74, v2 API, its pinned ``@ag-ui/client`` 0.0.59
``HttpAgent`` posting straight to our server, no CopilotKit runtime) in Debian's Chromium,
through its own hooks: ``useInterrupt`` answers approvals and questions, ``useHumanInTheLoop``
is a frontend tool. Each test counts the tool's runs. The server is configured as a user
would leave it: rule ``strict-pre-1.0-client`` applies because CopilotKit's requests name no
``protocolVersion`` (one test turns it on explicitly, one off); CopilotKit's echo of its
answer is dropped by rule ``copilotkit-resume-echo``, and on later runs, where CopilotKit
keeps it in place of the server's result, replaced by that result (docs/interop.md)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from copilotkit_support import LaneModel, Site, browser_page, page_dir

from agui_chat import FunctionResultContent, ai_function, request_input
from agui_chat.agui import AGUIServer
from agui_chat.stores import InMemoryApprovalStore
from agui_streams import SideEffects
from live_uvicorn import serve
from meai_texts import REJECTED

KEY = "copilotkit-lane-signing-key-0123456789"


class Lane:
    """The page in a browser, the server behind it, its model and its tools' runs."""

    def __init__(self, page: Any, site: Site, model: LaneModel, effects: SideEffects) -> None:
        self.page, self.site, self.model, self.effects = page, site, model, effects

    def say(self, text: str) -> None:
        self.page.fill("#prompt", text)
        self.page.click("#send")

    def settled(self, text: str) -> None:
        """Wait until the conversation holds ``text`` and no run is going on."""
        self.page.wait_for_function(
            "t => document.getElementById('messages').textContent.includes(t)"
            " && document.getElementById('running').dataset.running === 'false'",
            arg=text,
        )

    def errors(self) -> list[str]:
        found: list[str] = self.page.evaluate("window.__ckErrors")
        return [*found, *self.page.errors]


def make_lane(tmp_path: Path, *, strict: bool | None = None) -> Iterator[Lane]:
    page_folder = page_dir()
    effects = SideEffects()

    @ai_function
    def deploy(service: str) -> str:
        """Deploy a service."""
        choice = request_input(
            "Which build of web should I deploy?",
            response_schema={
                "type": "object",
                "properties": {"build": {"type": "integer", "description": "The build number"}},
                "required": ["build"],
            },
        )
        if choice.cancelled:
            return "not deployed: cancelled"
        effects.record("deploy", service=service, build=choice.payload["build"])
        return f"deployed {service} build {choice.payload['build']}"

    model = LaneModel()
    agent = AGUIServer(
        model.client,
        tools=[effects.delete_file(), deploy],
        signing_key=KEY,
        approval_store=InMemoryApprovalStore(),
        strict_pre_1_0_clients=strict,
    )
    site = Site(agent, page_folder)
    with serve(site) as url, browser_page(tmp_path) as page:
        page.goto(f"{url}?thread=ck-{tmp_path.name}")
        page.wait_for_selector("body[data-ready=true]")
        yield Lane(page, site, model, effects)


@pytest.fixture
def lane(tmp_path: Path) -> Iterator[Lane]:
    yield from make_lane(tmp_path)


def echoes(body: dict[str, Any]) -> list[str]:
    """The tool messages a request carries (CopilotKit's echo of its answer among them)."""
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def last_results(model: LaneModel) -> dict[str, str]:
    """The results the model was given in the last history it got, by call id."""
    return {
        c.call_id: str(c.result)
        for m in model.seen[-1]
        for c in m.contents
        if isinstance(c, FunctionResultContent)
    }


def test_approve_runs_the_tool_once_and_the_model_gets_its_result(lane: Lane) -> None:
    lane.say("please delete the report")
    lane.page.wait_for_selector("#interrupt[data-reason=tool_call]")
    lane.page.click("#approve")
    lane.settled("Tool said: deleted reports/q3.txt")
    assert lane.effects.runs["delete_file"] == [{"path": "reports/q3.txt"}]
    assert lane.model.results() == ["deleted reports/q3.txt"]
    (resume,) = lane.site.resumes()
    assert resume[0]["status"] == "resolved" and resume[0]["payload"] == {"approved": True}
    assert json.dumps({"approved": True}, separators=(",", ":")) in echoes(lane.site.posts[-1])
    assert lane.errors() == []


def test_a_double_click_on_approve_runs_the_tool_once(lane: Lane) -> None:
    lane.say("please delete the report")
    lane.page.wait_for_selector("#interrupt[data-reason=tool_call]")
    lane.page.dblclick("#approve")
    lane.settled("Tool said: deleted reports/q3.txt")
    assert lane.effects.count("delete_file") == 1
    assert lane.model.results() == ["deleted reports/q3.txt"]


def test_reject_never_runs_and_the_reason_reaches_the_model(lane: Lane) -> None:
    lane.say("please delete the report")
    lane.page.wait_for_selector("#interrupt[data-reason=tool_call]")
    lane.page.click("#reject")
    lane.settled(f"Tool said: {REJECTED} not today")
    assert lane.effects.count("delete_file") == 0
    assert lane.model.results() == [f"{REJECTED} not today"]  # never CopilotKit's echo
    assert lane.errors() == []


def test_cancel_never_runs(lane: Lane) -> None:
    lane.say("please delete the report")
    lane.page.wait_for_selector("#interrupt[data-reason=tool_call]")
    lane.page.click("#cancel")
    lane.settled(f"Tool said: {REJECTED} cancelled")
    assert lane.effects.count("delete_file") == 0
    assert lane.site.resumes()[-1][0]["status"] == "cancelled"
    assert lane.model.results() == [f"{REJECTED} cancelled"]


def test_a_question_answered_reaches_the_tool_once(lane: Lane) -> None:
    lane.say("deploy please")
    lane.page.wait_for_selector("#interrupt[data-reason=input_required]")
    assert lane.page.text_content("#interrupt-message") == "Which build of web should I deploy?"
    lane.page.click("#answer")
    lane.settled("Tool said: deployed web build 7")
    assert lane.effects.runs["deploy"] == [{"service": "web", "build": 7}]
    assert lane.errors() == []


def test_a_question_cancelled_takes_the_tools_other_branch(lane: Lane) -> None:
    lane.say("deploy please")
    lane.page.wait_for_selector("#interrupt[data-reason=input_required]")
    lane.page.click("#cancel")
    lane.settled("Tool said: not deployed: cancelled")
    assert lane.effects.count("deploy") == 0


def test_the_frontend_tool_round_trip(lane: Lane) -> None:
    lane.say("please confirm it")
    lane.page.click("#confirm")  # the card useHumanInTheLoop renders (it waits for it)
    lane.settled('Tool said: {\\"confirmed\\":true}')
    assert lane.model.results() == ['{"confirmed":true}']
    assert lane.errors() == []


def test_the_frontend_tool_in_the_run_that_resumes_an_approval(lane: Lane) -> None:
    # The rule covers every run: here the resumed run, whose model calls the frontend tool
    # once the approved call ran; CopilotKit takes its end and renders the card.
    lane.say("please delete the report, then confirm it")
    lane.page.wait_for_selector("#interrupt[data-reason=tool_call]")
    lane.page.click("#approve")
    lane.page.wait_for_selector("#confirm")
    assert lane.effects.runs["delete_file"] == [{"path": "reports/q3.txt"}]
    assert lane.model.results() == ["deleted reports/q3.txt"]
    assert lane.errors() == []


def test_the_frontend_tools_answer_after_an_approval_reaches_the_model(lane: Lane) -> None:
    # CopilotKit keeps its echo of the approval ({"approved":true}, under its own id) in place
    # of the server's sealed result and sends it again on this run, without the resume: the
    # model gets the server's result for that call, never the echo.
    lane.say("please delete the report, then confirm it")
    lane.page.wait_for_selector("#interrupt[data-reason=tool_call]")
    lane.page.click("#approve")
    lane.page.click("#confirm")
    lane.page.wait_for_function(  # the answer, or CopilotKit's error (then fail at once)
        "t => window.__ckErrors.length > 0"
        " || document.getElementById('messages').textContent.includes(t)",
        arg='Tool said: {\\"confirmed',
    )
    assert lane.errors() == []
    lane.settled('Tool said: {\\"confirmed\\":true}')
    assert lane.model.results() == ["deleted reports/q3.txt", '{"confirmed":true}']
    assert '{"approved":true}' in echoes(lane.site.posts[-1])  # what CopilotKit sent
    assert last_results(lane.model)["call_1"] == "deleted reports/q3.txt"  # what the model got
    assert lane.effects.count("delete_file") == 1


@pytest.mark.parametrize(
    ("button", "echo", "result"),
    [
        ("#approve", '{"approved":true}', "deleted reports/q3.txt"),
        ("#reject", '{"approved":false,"reason":"not today"}', f"{REJECTED} not today"),
    ],
)
def test_a_later_turn_after_an_answer_goes_on_with_the_servers_result(
    lane: Lane, button: str, echo: str, result: str
) -> None:
    lane.say("please delete the report")
    lane.page.wait_for_selector("#interrupt[data-reason=tool_call]")
    lane.page.click(button)
    lane.settled(f"Tool said: {result}")
    lane.say("and now?")
    lane.settled("You said: and now?")
    assert lane.errors() == []
    assert echoes(lane.site.posts[-1]) == [echo]  # CopilotKit's echo, not the server's result
    assert last_results(lane.model) == {"call_1": result}
    assert lane.effects.count("delete_file") == (1 if button == "#approve" else 0)


def test_with_the_rule_turned_on_the_frontend_tool_round_trip(tmp_path: Path) -> None:
    for lane in make_lane(tmp_path, strict=True):
        lane.say("please confirm it")
        lane.page.click("#confirm")
        lane.settled('Tool said: {\\"confirmed\\":true}')
        assert lane.model.results() == ['{"confirmed":true}']
        assert lane.errors() == []


def test_with_the_rule_turned_off_copilotkit_refuses_the_1_0_outcome(tmp_path: Path) -> None:
    # What the rule is for: CopilotKit's pinned @ag-ui/core 0.0.59 rejects pendingToolCallIds.
    for lane in make_lane(tmp_path, strict=False):
        lane.say("please confirm it")
        lane.page.wait_for_function("window.__ckErrors.length > 0")
        assert lane.page.query_selector("#confirm") is None
        assert any("pendingToolCallIds" in e or "unrecognized" in e for e in lane.errors())
