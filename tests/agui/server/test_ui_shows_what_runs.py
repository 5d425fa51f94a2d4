"""The page in a real Chromium shows what runs (issue 25, DESIGN §3 rule 8), against a
hostile model and a hostile page: a large integer shown and run exactly (also through an
edit), right-to-left overrides and escape sequences shown escaped, long values cut with a
way to see the whole, Reject as reachable as Approve at 360 px and at 1200×900, and a
DNS-rebinding page (``evil.example`` resolved to 127.0.0.1) refused before anything runs.
Every test counts the tool's side effects."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from browser_support import Recorder, RecordingModel, open_page, ready, say, serve, shot

from agui_chat import ai_function, approval_required
from agui_chat.cli._demo_agent import demo_model
from agui_server import agui_server
from agui_streams import SideEffects

BIG = 9007199254740993  # 2**53 + 1: JSON.parse reads it as ...992
HOSTILE_NAME = "report\u202efdp.exe"
ESCAPES = "ok\x1b[8m\x1b]0;title\x07\x9b2J"
LONG = "A" * 2500 + "THE-END"


def _tools(effects: SideEffects) -> list[Any]:
    @approval_required
    @ai_function
    def delete_record(record_id: int, title: str, note: str = "") -> str:
        """Delete a record."""
        effects.record("delete_record", record_id=record_id, title=title, note=note)
        return f"deleted {record_id}"

    return [delete_record]


def _app(effects: SideEffects, arguments: dict[str, Any], **options: Any) -> Recorder:
    model = RecordingModel({"delete": [("delete_record", arguments)]})
    server = agui_server(model.client, tools=_tools(effects), ui=True, **options).app
    return Recorder(server)


def _card(page: Any) -> Any:
    card = page.get_by_role("group", name="Approve delete_record?")
    card.wait_for()
    return card


def test_a_hostile_model_s_arguments_are_shown_escaped_exact_and_whole(tmp_path: Path) -> None:
    effects = SideEffects()
    arguments = {"record_id": BIG, "title": HOSTILE_NAME, "note": ESCAPES + LONG}
    with serve(_app(effects, arguments)) as url, open_page(tmp_path) as page:
        ready(page, url)
        say(page, "delete it")
        card = _card(page)
        call = card.locator("pre.call").inner_text()
        assert call.startswith(f"delete_record(record_id={BIG}, ")
        assert str(BIG - 1) not in page.locator("body").inner_text()
        assert '"report\\u202efdp.exe"' in call  # the override is shown, not obeyed
        assert '"ok\\u001b[8m\\u001b]0;title\\u0007\\x9b2J' in call
        text = page.locator("body").inner_text()
        for hidden in ("\u202e", "\x1b", "\x07", "\x9b"):
            assert hidden not in text
        # Long: cut with a marker, and the whole one click away.
        assert "THE-END" not in call and "more characters]" in call
        card.get_by_role("button", name="Show all").click()
        assert card.locator("pre.call").inner_text().endswith('THE-END")')
        shot(page, tmp_path, "hostile-arguments.png")
        assert effects.count("delete_record") == 0
        card.get_by_role("button", name="Approve delete_record").click()
        page.get_by_text(f"Done: deleted {BIG}").wait_for()
        page.locator(".tool .args").wait_for()
        assert page.locator(".tool .args").inner_text().startswith(f"delete_record(record_id={BIG}")
    assert effects.runs["delete_record"] == [
        {"record_id": BIG, "title": HOSTILE_NAME, "note": ESCAPES + LONG}
    ]


def test_an_edit_keeps_a_large_integer_exact_and_is_confirmed_as_the_new_call(
    tmp_path: Path,
) -> None:
    effects = SideEffects()
    app = _app(effects, {"record_id": BIG, "title": "old"})
    with serve(app) as url, open_page(tmp_path) as page:
        ready(page, url)
        say(page, "delete it")
        card = _card(page)
        card.get_by_role("button", name="Edit arguments").click()
        record = card.get_by_label("record_id (required)")
        assert record.input_value() == str(BIG)
        card.get_by_label("title (required)").fill("new")
        card.get_by_role("button", name="Review the edited call").click()
        review = card.get_by_role("region", name="The edited call")
        review.get_by_text(f'delete_record(record_id={BIG}, title="new")').wait_for()
        # Only what changed is listed: the number the page kept exactly did not change.
        assert review.locator(".changes li").all_inner_texts() == ['title="old" → title="new"']
        assert app.resumes() == [] and effects.count("delete_record") == 0
        shot(page, tmp_path, "edit-review-big-int.png")
        card.get_by_role("button", name="Approve the edited call").click()
        page.get_by_text(f"Done: deleted {BIG}").wait_for()
    assert effects.runs["delete_record"] == [{"record_id": BIG, "title": "new", "note": ""}]
    assert app.resumes()[0][0]["payload"] == {
        "approved": True,
        "editedArgs": {"record_id": BIG, "title": "new"},
    }


_CENTRE_HITS = """(el) => {
  const r = el.getBoundingClientRect();
  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return r.width > 0 && r.bottom <= innerHeight && r.top >= 0 && (hit === el || el.contains(hit));
}"""


def _reachable(page: Any, card: Any, name: str) -> bool:
    button = card.get_by_role("button", name=name)
    return bool(page.evaluate(_CENTRE_HITS, button.element_handle()))


def test_reject_is_as_reachable_as_approve_at_360_px_and_at_1200_by_900(tmp_path: Path) -> None:
    """The demo's first request (the card lands below the fold: Reject used to sit under
    the composer at 1200×900), and a request after a conversation long enough to scroll."""
    for width, height in ((360, 740), (1200, 900)):
        for history in (0, 4):
            effects = SideEffects()
            folder = tmp_path / f"{width}x{height}-{history}"
            folder.mkdir()
            app = agui_server(demo_model(), tools=[effects.delete_file()], ui=True).app
            with serve(app) as url, open_page(folder, width=width, height=height) as page:
                ready(page, url)
                for n in range(history):
                    say(page, f"hello {n} " + "words " * 60)
                    page.locator("article.msg.assistant").nth(n).wait_for()
                say(page, "Please clean up the draft report.")
                card = page.get_by_role("group", name="Approve delete_file?")
                card.wait_for()
                where = (width, height, history)
                assert _reachable(page, card, "Approve delete_file"), where
                assert _reachable(page, card, "Reject delete_file"), where
                page.screenshot(path=str(folder / "viewport.png"))
                card.get_by_role("button", name="Reject delete_file").click()
                page.locator(".tool[data-state=rejected]").wait_for()
            assert effects.count("delete_file") == 0


def test_a_dns_rebinding_page_is_refused_and_cannot_approve_its_own_call(tmp_path: Path) -> None:
    """Chromium resolves evil.example to 127.0.0.1, as a rebinding attack makes it: the page
    under that name is a 403, and a script there posting a run and its own approval is
    refused; nothing runs."""
    effects = SideEffects()
    app = _app(effects, {"record_id": 7, "title": "r"})
    rules = ("--host-resolver-rules=MAP evil.example 127.0.0.1",)
    with serve(app) as url, open_page(tmp_path, args=rules) as page:
        port = url.rsplit(":", 1)[1].strip("/")
        evil = f"http://evil.example:{port}/"
        response = page.goto(evil)
        assert response is not None and response.status == 403
        assert "Nothing was run" in page.locator("body").inner_text()
        statuses = page.evaluate(
            """async () => {
              const post = (body) => fetch(location.href, {method: "POST",
                headers: {"content-type": "application/json"}, body: JSON.stringify(body)});
              const run = {threadId: "t", runId: "r1", tools: [], context: [], state: {},
                forwardedProps: {}, messages: [{id: "u", role: "user", content: "delete it"}]};
              const first = await post(run);
              const resume = {...run, runId: "r2", resume: [{interruptId: "x",
                status: "resolved", payload: {approved: true}}]};
              const second = await post(resume);
              return [first.status, second.status];
            }"""
        )
        assert statuses == [403, 403]
        # The same server under its own name still works for the person.
        ready(page, url)
        say(page, "delete it")
        _card(page).get_by_role("button", name="Approve delete_record").click()
        page.get_by_text("Done: deleted 7").wait_for()
    assert effects.count("delete_record") == 1  # only the person's own approval ran


def test_a_call_that_failed_says_so(tmp_path: Path) -> None:
    @ai_function
    def lookup(city: str) -> str:
        """Weather."""
        raise RuntimeError("the weather service is down")

    model = RecordingModel({"weather": [("lookup", {"city": "Lyon"})]})
    with (
        serve(agui_server(model.client, tools=[lookup], ui=True).app) as url,
        open_page(tmp_path) as page,
    ):
        ready(page, url)
        say(page, "weather?")
        card = page.locator(".tool[data-state=failed]")
        card.wait_for()
        assert card.locator(".tool-status").inner_text().startswith("Failed: ")
        card.locator(".result").wait_for()
        assert card.locator(".result").inner_text().startswith("Error: ")


def test_an_edit_form_says_which_value_holds_hidden_characters(tmp_path: Path) -> None:
    """The field holds the value as it runs (an escape would change it), so the override
    would reorder it there: the field's hint shows it escaped."""
    effects = SideEffects()
    app = _app(effects, {"record_id": 7, "title": HOSTILE_NAME})
    with serve(app) as url, open_page(tmp_path) as page:
        ready(page, url)
        say(page, "delete it")
        card = _card(page)
        card.get_by_role("button", name="Edit arguments").click()
        title = card.get_by_label("title (required)")
        assert title.input_value() == HOSTILE_NAME
        hint = card.locator(f"#{title.get_attribute('aria-describedby').split()[0]}")
        assert hint.inner_text() == (
            "This value holds hidden characters, shown escaped: report\\u202efdp.exe"
        )
        assert "\u202e" not in hint.inner_text()
        shot(page, tmp_path, "edit-hidden-characters.png")
    assert effects.count("delete_record") == 0
