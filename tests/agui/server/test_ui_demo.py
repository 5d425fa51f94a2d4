"""The demo agent (``agui-chat demo --browser``) in a real Chromium: the approval of
``delete_file`` and the question of ``deploy`` answered through the page. The screenshot of
the approval card taken here is the one in docs/ and the README."""

from __future__ import annotations

from pathlib import Path

from browser_support import open_page, ready, say, serve

from agui_chat.cli._demo_agent import demo_model, demo_tools
from agui_server import agui_server


def test_the_demo_round_trip_in_the_browser(tmp_path: Path) -> None:
    app = agui_server(demo_model(), tools=demo_tools(), ui=True).app
    with serve(app) as url, open_page(tmp_path, width=760, height=720) as page:
        ready(page, url)
        say(page, "Please clean up the draft report.")
        card = page.get_by_role("group", name="Approve delete_file?")
        card.wait_for()
        card.scroll_into_view_if_needed()
        page.screenshot(path=str(tmp_path / "approval-page.png"))
        # docs/approval-card.png: the card alone, without the composer fixed over it.
        page.evaluate("document.querySelector('footer').hidden = true")
        page.evaluate("document.activeElement.blur()")
        card.screenshot(path=str(tmp_path / "approval-card.png"))
        page.evaluate("document.querySelector('footer').hidden = false")
        card.get_by_role("button", name="Approve delete_file").click()
        page.get_by_text("Done: deleted reports/q3-draft.txt.").wait_for()

        say(page, "Now deploy the web service.")
        question = page.get_by_role("group", name="Which build of web should I deploy?")
        question.wait_for()
        assert question.get_by_label("build (required)").input_value() == "42"
        question.get_by_label("note").fill("from the browser")
        page.screenshot(path=str(tmp_path / "question-card.png"))
        question.get_by_role("button", name="Send answer").click()
        page.get_by_text("Done: deployed web build 42 (from the browser).").wait_for()
