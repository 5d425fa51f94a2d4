"""Question cards in a real Chromium: a form generated from the question's response_schema
(integer, enum, boolean, string; required, defaults, descriptions), anything richer as a
JSON editor, validated in the page before anything is sent; Cancel takes the tool's other
branch (issue 20)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from browser_support import Recorder, RecordingModel, open_page, ready, say, serve, shot

from agui_chat import ai_function, request_input
from agui_server import agui_server

DEPLOY_SCHEMA = {
    "type": "object",
    "properties": {
        "build": {"type": "integer", "minimum": 1, "description": "The build to ship"},
        "region": {"enum": ["eu", "us"], "default": "eu", "description": "Where"},
        "dry_run": {"type": "boolean", "default": False, "description": "Only pretend"},
        "note": {"type": "string", "maxLength": 40, "description": "For the release log"},
    },
    "required": ["build"],
}
TARGETS_SCHEMA = {
    "type": "object",
    "properties": {"targets": {"type": "array", "items": {"type": "string"}, "minItems": 1}},
    "required": ["targets"],
}


def _app(schema: dict[str, Any] | None, answers: list[Any]) -> Recorder:
    @ai_function
    def deploy(service: str) -> str:
        """Deploy a service."""
        answer = request_input(f"How should {service} be deployed?", response_schema=schema)
        if answer.cancelled:
            return f"deployment of {service} cancelled"
        answers.append(answer.payload)
        return f"deployed {service} with {answer.payload!r}"

    model = RecordingModel({"deploy": [("deploy", {"service": "web"})]})
    server = agui_server(model.client, tools=[deploy], ui=True).app
    return Recorder(server)


def _card(page: Any) -> Any:
    card = page.get_by_role("group", name="How should web be deployed?")
    card.wait_for()
    return card


def test_the_form_answer_reaches_the_final_text_and_an_invalid_value_is_refused(
    tmp_path: Path,
) -> None:
    answers: list[Any] = []
    app = _app(DEPLOY_SCHEMA, answers)
    with serve(app) as url, open_page(tmp_path) as page:
        ready(page, url)
        say(page, "deploy please")
        card = _card(page)
        assert card.get_by_text("The build to ship").is_visible()
        assert card.get_by_label("region").input_value() != ""  # the default is chosen
        assert not card.get_by_label("dry_run").is_checked()
        card.get_by_label("build (required)").fill("0")
        card.get_by_role("button", name="Send answer").click()
        card.get_by_text("Must be at least 1.", exact=True).wait_for()
        shot(page, tmp_path, "invalid-answer.png")
        card.get_by_label("build (required)").fill("")
        card.get_by_role("button", name="Send answer").click()
        card.get_by_text("This field is required.").wait_for()
        assert app.resumes() == []  # refused in the page: nothing was sent
        card.get_by_label("build (required)").fill("7")
        card.get_by_label("region").select_option(label="us")
        card.get_by_label("dry_run").check()
        card.get_by_label("note").fill("hotfix")
        shot(page, tmp_path, "question-card.png")
        card.get_by_role("button", name="Send answer").click()
        page.get_by_text("Done: deployed web with").wait_for()
        final = page.locator("article.msg.assistant").last.inner_text()
    expected = {"build": 7, "region": "us", "dry_run": True, "note": "hotfix"}
    assert answers == [expected]
    assert str(expected) in final.replace("\n", " ")
    assert app.resumes()[0][0]["payload"] == expected


def test_cancel_takes_the_tools_other_branch(tmp_path: Path) -> None:
    answers: list[Any] = []
    app = _app(DEPLOY_SCHEMA, answers)
    with serve(app) as url, open_page(tmp_path) as page:
        ready(page, url)
        say(page, "deploy please")
        _card(page).get_by_role("button", name="Cancel: do not answer").click()
        page.get_by_text("Done: deployment of web cancelled").wait_for()
        shot(page, tmp_path, "cancelled.png")
    assert answers == []
    assert app.resumes()[0][0]["status"] == "cancelled"


def test_a_richer_schema_gets_a_json_editor_validated_before_sending(tmp_path: Path) -> None:
    answers: list[Any] = []
    app = _app(TARGETS_SCHEMA, answers)
    with serve(app) as url, open_page(tmp_path) as page:
        ready(page, url)
        say(page, "deploy please")
        card = _card(page)
        editor = card.get_by_label("Your answer (JSON)")
        editor.fill("{not json")
        card.get_by_role("button", name="Send answer").click()
        card.get_by_text("Not valid JSON").wait_for()
        editor.fill('{"targets": []}')
        card.get_by_role("button", name="Send answer").click()
        card.get_by_text("targets:").wait_for()
        shot(page, tmp_path, "json-editor-error.png")
        assert app.resumes() == []
        editor.fill('{"targets": ["eu-1", "us-2"]}')
        card.get_by_role("button", name="Send answer").click()
        page.get_by_text("Done: deployed web with").wait_for()
    assert answers == [{"targets": ["eu-1", "us-2"]}]


def test_a_question_without_a_schema_takes_text(tmp_path: Path) -> None:
    answers: list[Any] = []
    app = _app(None, answers)
    with serve(app) as url, open_page(tmp_path) as page:
        ready(page, url)
        say(page, "deploy please")
        card = _card(page)
        card.get_by_label("Your answer").fill("the blue one")
        card.get_by_role("button", name="Send answer").click()
        page.get_by_text("Done: deployed web with 'the blue one'").wait_for()
        shot(page, tmp_path, "answered.png")
    assert answers == ["the blue one"]
