"""The page in a real Chromium: approving, rejecting and editing gated calls, each answer
sent once (issue 20). The server runs under uvicorn on 127.0.0.1 with a scripted model;
every test counts the tool's side effects, looks at what the page sent and at what the
model received, and saves screenshots in its temporary folder."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from browser_support import Recorder, RecordingModel, open_page, ready, say, serve, shot
from server_support import SideEffects

from agui_server import agui_server

#: What every expired card says, approval or question alike.
EXPIRED = "Expired: this can no longer be approved or answered, only turned down."


def _app(
    model: RecordingModel,
    tools: SideEffects,
    *,
    allow_edits: bool = True,
    ttl: timedelta | None = timedelta(hours=1),
) -> Recorder:
    server = agui_server(
        model.client, tools=[tools.delete_file(allow_edits=allow_edits)], approval_ttl=ttl, ui=True
    ).app
    return Recorder(server)


def _tidy() -> RecordingModel:
    return RecordingModel({"tidy": [("delete_file", {"path": "notes.txt"})]})


def _card(page: Any, name: str = "Approve delete_file?") -> Any:
    card = page.get_by_role("group", name=name)
    card.wait_for()
    return card


def test_approve_runs_the_tool_once_and_the_answer_appears(tmp_path: Path) -> None:
    tools, model = SideEffects(), _tidy()
    app = _app(model, tools)
    with serve(app) as url, open_page(tmp_path) as page:
        ready(page, url)
        say(page, "Please tidy up")
        card = _card(page)
        assert tools.count("delete_file") == 0
        assert 'delete_file(path="notes.txt")' in card.inner_text()
        # The arguments are shown once: on the card, not also in the conversation above it.
        assert page.locator("body").inner_text().count("notes.txt") == 1
        shot(page, tmp_path, "approval-card.png")
        card.get_by_role("button", name="Approve delete_file").click()
        page.get_by_text("Done: deleted notes.txt").wait_for()
        assert page.locator(".tool .result").inner_text() == "deleted notes.txt"
        assert page.locator(".tool .tool-status").inner_text() == "Ran."
        shot(page, tmp_path, "approved.png")
    assert tools.runs["delete_file"] == [{"path": "notes.txt"}]
    assert [[e["payload"] for e in r] for r in app.resumes()] == [[{"approved": True}]]


def test_reject_with_a_reason_never_runs_and_the_reason_reaches_the_model(
    tmp_path: Path,
) -> None:
    tools, model = SideEffects(), _tidy()
    app = _app(model, tools)
    with serve(app) as url, open_page(tmp_path) as page:
        ready(page, url)
        say(page, "Please tidy up")
        card = _card(page)
        # Typed with spaces around it: the person's words go to the model as typed.
        card.get_by_label("Reason for rejecting (optional)").fill(" keep it for the audit ")
        shot(page, tmp_path, "rejecting.png")
        card.get_by_role("button", name="Reject delete_file").click()
        page.get_by_text("Done: ").wait_for()
        # The call's card says it was rejected, with the reason, not "Done" like a call that ran.
        status = page.locator(".tool .tool-status").text_content()
        assert status == "Rejected:  keep it for the audit  — it did not run."
        assert page.locator(".tool").get_attribute("data-state") == "rejected"
        shot(page, tmp_path, "rejected.png")
    assert tools.count("delete_file") == 0
    assert app.resumes()[0][0]["payload"] == {
        "approved": False,
        "reason": " keep it for the audit ",
    }
    assert "Tool call invocation rejected.  keep it for the audit " in model.results()


def test_edit_runs_with_the_edited_arguments_and_an_invalid_edit_is_never_sent(
    tmp_path: Path,
) -> None:
    tools, model = SideEffects(), _tidy()
    app = _app(model, tools)
    with serve(app) as url, open_page(tmp_path) as page:
        ready(page, url)
        say(page, "Please tidy up")
        card = _card(page)
        card.get_by_role("button", name="Edit arguments").click()
        path = card.get_by_label("path (required)")
        assert path.input_value() == "notes.txt"
        path.fill("")
        card.get_by_role("button", name="Review the edited call").click()
        card.get_by_text("This field is required.").wait_for()
        assert path.get_attribute("aria-invalid") == "true"
        shot(page, tmp_path, "invalid-edit.png")
        assert app.resumes() == []  # refused in the page: nothing was sent
        path.fill("drafts/old.txt")
        card.get_by_role("button", name="Review the edited call").click()
        # The edit is shown as the new call, with what changed, and sent only once confirmed.
        review = card.get_by_role("region", name="The edited call")
        review.get_by_text('delete_file(path="drafts/old.txt")').wait_for()
        assert review.locator(".changes").inner_text() == 'path="notes.txt" → path="drafts/old.txt"'
        assert app.resumes() == []
        shot(page, tmp_path, "edit-review.png")
        card.get_by_role("button", name="Approve the edited call").click()
        page.get_by_text("Done: deleted drafts/old.txt").wait_for()
        assert page.locator(".tool .tool-status").inner_text() == "Ran with your edited arguments."
    assert tools.runs["delete_file"] == [{"path": "drafts/old.txt"}]
    assert app.resumes()[0][0]["payload"] == {
        "approved": True,
        "editedArgs": {"path": "drafts/old.txt"},
    }


def test_edit_is_offered_only_where_the_interrupt_offers_it(tmp_path: Path) -> None:
    tools, model = SideEffects(), _tidy()
    with serve(_app(model, tools, allow_edits=False)) as url, open_page(tmp_path) as page:
        ready(page, url)
        say(page, "Please tidy up")
        card = _card(page)
        assert card.get_by_role("button", name="Edit arguments").count() == 0
        card.get_by_role("button", name="Approve delete_file").click()
        page.get_by_text("Done: deleted notes.txt").wait_for()
    assert tools.count("delete_file") == 1


def test_a_double_click_on_approve_runs_the_tool_once(tmp_path: Path) -> None:
    tools, model = SideEffects(), _tidy()
    app = _app(model, tools)
    with serve(app) as url, open_page(tmp_path) as page:
        ready(page, url)
        say(page, "Please tidy up")
        _card(page).get_by_role("button", name="Approve delete_file").dblclick()
        page.get_by_text("Done: deleted notes.txt").wait_for()
        assert tools.count("delete_file") == 1
        # Two clicks in one task, faster than any person: still one answer.
        say(page, "tidy again")
        button = _card(page).get_by_role("button", name="Approve delete_file")
        page.evaluate("(b) => { b.click(); b.click(); }", button.element_handle())
        page.get_by_text("Done: deleted notes.txt").nth(1).wait_for()
        shot(page, tmp_path, "after-double-clicks.png")
    assert tools.count("delete_file") == 2
    assert len(app.resumes()) == 2


def test_a_reload_during_the_pause_shows_the_same_card_and_the_answer_works_once(
    tmp_path: Path,
) -> None:
    tools, model = SideEffects(), _tidy()
    app = _app(model, tools)
    with serve(app) as url, open_page(tmp_path) as page:
        ready(page, url)
        say(page, "Please tidy up")
        _card(page)
        ready(page, url)  # a reload
        card = _card(page)
        assert page.get_by_text("Please tidy up").count() == 1
        shot(page, tmp_path, "after-reload.png")
        card.get_by_role("button", name="Approve delete_file").click()
        page.get_by_text("Done: deleted notes.txt").wait_for()
        ready(page, url)  # once answered, a reload shows the thread and no card
        page.get_by_text("Done: deleted notes.txt").wait_for()
        assert page.get_by_role("group", name="Approve delete_file?").count() == 0
        assert page.get_by_label("Message", exact=True).is_enabled()
    assert tools.count("delete_file") == 1
    assert len(app.resumes()) == 1


def test_two_pending_calls_are_sent_together_once_both_are_decided(tmp_path: Path) -> None:
    tools = SideEffects()
    model = RecordingModel(
        {"both": [("delete_file", {"path": "a.txt"}), ("delete_file", {"path": "b.txt"})]}
    )
    app = _app(model, tools)
    with serve(app) as url, open_page(tmp_path) as page:
        ready(page, url)
        say(page, "delete both")
        cards = page.locator("section.card.approval")
        cards.nth(1).wait_for()
        assert cards.count() == 2
        cards.nth(0).get_by_role("button", name="Approve delete_file").click()
        page.get_by_text("Decided 1 of 2; waiting for 1 more.").wait_for()
        shot(page, tmp_path, "one-of-two.png")
        assert app.resumes() == []  # the send waits for the second card
        assert tools.count("delete_file") == 0
        cards.nth(1).get_by_label("Reason for rejecting (optional)").fill("not b")
        cards.nth(1).get_by_role("button", name="Reject delete_file").click()
        page.get_by_text("Done: ").wait_for()
    assert tools.runs["delete_file"] == [{"path": "a.txt"}]
    (resume,) = app.resumes()
    assert [e["payload"] for e in resume] == [
        {"approved": True},
        {"approved": False, "reason": "not b"},
    ]


def test_an_expired_approval_can_only_be_rejected(tmp_path: Path) -> None:
    tools, model = SideEffects(), _tidy()
    app = _app(model, tools, ttl=timedelta(seconds=2))
    with serve(app) as url, open_page(tmp_path) as page:
        ready(page, url)
        say(page, "Please tidy up")
        card = _card(page)
        card.get_by_text(EXPIRED).wait_for()
        approve = card.get_by_role("button", name="Approve delete_file")
        assert approve.is_disabled()
        assert card.get_by_role("button", name="Edit arguments").is_disabled()
        shot(page, tmp_path, "expired.png")
        card.get_by_role("button", name="Reject delete_file").click()
        page.get_by_text("Done: ").wait_for()
        status = page.locator(".tool .tool-status").inner_text()
        assert status == "Expired before it was approved — it did not run."
    assert tools.count("delete_file") == 0
    assert app.resumes()[0][0]["status"] == "cancelled"


def test_the_call_waiting_in_the_conversation_names_its_tool(tmp_path: Path) -> None:
    tools, model = SideEffects(), _tidy()
    with serve(_app(model, tools)) as url, open_page(tmp_path) as page:
        ready(page, url)
        say(page, "Please tidy up")
        _card(page)
        waiting = page.locator(".tool[data-state=waiting]")
        waiting.locator(".tool-name", has_text="delete_file").wait_for()
        assert waiting.locator(".tool-name").inner_text() == "Tool call: delete_file"
        assert waiting.locator(".tool-status").inner_text() == "Waiting for your approval"
        assert tools.count("delete_file") == 0
