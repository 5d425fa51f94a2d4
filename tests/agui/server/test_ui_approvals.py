"""The page in a real Chromium: approving, rejecting and editing gated calls, once each
(issue 20). The server runs under uvicorn on 127.0.0.1 with a scripted model; every test
counts the tool's side effects and looks at what the model received."""

from __future__ import annotations

from pathlib import Path

from browser_support import WAIT_MS, RecordingModel, open_page, ready, say, serve
from server_support import SideEffects

from agui_chat.agui import AGUIServer, InMemoryApprovalStore


def _server(model: RecordingModel, tools: SideEffects, **kwargs: object) -> AGUIServer:
    return AGUIServer(
        model.client,
        tools=[tools.delete_file(**kwargs)],  # type: ignore[arg-type]
        signing_key="ui-test-signing-key-0123456789abcdef",
        approval_store=InMemoryApprovalStore(),
        ui=True,
    )


def test_approve_runs_the_tool_once_and_the_answer_appears(tmp_path: Path) -> None:
    tools = SideEffects()
    model = RecordingModel({"tidy": [("delete_file", {"path": "notes.txt"})]})
    with serve(_server(model, tools)) as url, open_page(tmp_path) as page:
        ready(page, url)
        say(page, "Please tidy up")
        card = page.get_by_role("group", name="Approve delete_file?")
        card.wait_for()
        assert tools.count("delete_file") == 0
        assert "notes.txt" in card.inner_text()
        page.screenshot(path=str(tmp_path / "approval-card.png"))
        card.get_by_role("button", name="Approve delete_file").click()
        page.get_by_text("Done: deleted notes.txt").wait_for(timeout=WAIT_MS)
        page.screenshot(path=str(tmp_path / "approved.png"))
    assert tools.runs["delete_file"] == [{"path": "notes.txt"}]
