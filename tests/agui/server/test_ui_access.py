"""The page for every person, in a real Chromium: operable with the keyboard alone, every
control named for screen readers, readable 360 px wide and in dark mode (issue 20)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from browser_support import open_page, ready, say, serve, shot

from agui_chat.agui import AGUIServer
from agui_chat.cli._demo_agent import demo_model, demo_tools
from agui_server import agui_server

UNNAMED_CONTROLS = """() => {
  const name = (el) => {
    const label = el.getAttribute("aria-label");
    if (label) return label;
    const by = el.getAttribute("aria-labelledby");
    const text = (id) => document.getElementById(id)?.textContent || "";
    if (by) return by.split(" ").map(text).join(" ");
    if (el.labels && el.labels.length) return [...el.labels].map((l) => l.textContent).join(" ");
    return ["BUTTON", "SUMMARY", "A"].includes(el.tagName) ? el.textContent : "";
  };
  const visible = (el) => el.offsetParent !== null || el.getClientRects().length > 0;
  const controls = document.querySelectorAll(
    "button, input, select, textarea, summary, a[href], " +
      "[role=group], [role=log], [role=region], section"
  );
  const unnamed = [...controls].filter(visible).filter((el) => !name(el).trim());
  return unnamed.map((el) => el.outerHTML.slice(0, 120));
}"""


def _app() -> AGUIServer:
    return agui_server(demo_model(), tools=demo_tools(), ui=True).app


def _tab_to(page: Any, name: str) -> None:
    """Press Tab until the focused element's accessible name is ``name`` (bounded)."""
    for _ in range(30):
        page.keyboard.press("Tab")
        focused = page.evaluate(
            "() => { const e = document.activeElement;"
            " return e.getAttribute('aria-label') || (e.labels && e.labels[0]"
            " && e.labels[0].textContent) || e.textContent; }"
        )
        if focused and focused.strip() == name:
            return
    raise AssertionError(f"Tab never reached {name!r}")


def test_the_whole_round_trip_works_from_the_keyboard(tmp_path: Path) -> None:
    with serve(_app()) as url, open_page(tmp_path) as page:
        ready(page, url)
        _tab_to(page, "Message")
        page.keyboard.type("Please clean up the draft report.")
        page.keyboard.press("Enter")
        page.get_by_role("group", name="Approve delete_file?").wait_for()
        _tab_to(page, "Approve delete_file")
        shot(page, tmp_path, "keyboard-focus.png")
        page.keyboard.press("Enter")
        page.get_by_text("Done: deleted reports/q3-draft.txt.").wait_for()
        # The question: its first field takes the keyboard, Enter in a field submits.
        page.keyboard.type("Now deploy the web service.")
        page.keyboard.press("Enter")
        page.get_by_role("group", name="Which build of web should I deploy?").wait_for()
        _tab_to(page, "build (required)")
        page.keyboard.press("Control+A")
        page.keyboard.type("43")
        _tab_to(page, "Send answer")
        page.keyboard.press("Enter")
        page.get_by_text("Done: deployed web build 43.").wait_for()


def test_every_control_has_a_name_for_screen_readers(tmp_path: Path) -> None:
    with serve(_app()) as url, open_page(tmp_path) as page:
        ready(page, url)
        assert page.evaluate(UNNAMED_CONTROLS) == []
        say(page, "Please clean up the draft report.")
        card = page.get_by_role("group", name="Approve delete_file?")
        card.get_by_role("button", name="Edit arguments").click()
        assert (
            card.get_by_role("button", name="Edit arguments").get_attribute("aria-expanded")
            == "true"
        )
        assert page.evaluate(UNNAMED_CONTROLS) == []
        card.get_by_role("button", name="Review the edited call").click()
        card.get_by_role("button", name="Approve the edited call").wait_for()
        assert page.evaluate(UNNAMED_CONTROLS) == []
        card.get_by_role("button", name="Approve the edited call").click()
        page.get_by_text("Done: deleted").wait_for()
        say(page, "Now deploy the web service.")
        page.get_by_role("group", name="Which build of web should I deploy?").wait_for()
        assert page.evaluate(UNNAMED_CONTROLS) == []
        assert page.get_by_role("log").count() == 1
        shot(page, tmp_path, "named.png")


def test_readable_at_360_px_wide(tmp_path: Path) -> None:
    with serve(_app()) as url, open_page(tmp_path, width=360, height=780) as page:
        ready(page, url)
        say(page, "Please clean up the draft report.")
        card = page.get_by_role("group", name="Approve delete_file?")
        card.get_by_role("button", name="Edit arguments").click()
        assert page.evaluate("document.documentElement.scrollWidth") <= 360
        for button in card.get_by_role("button").all():
            box = button.bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 360
        shot(page, tmp_path, "narrow-approval.png")
        card.get_by_role("button", name="Review the edited call").click()
        card.get_by_role("button", name="Approve the edited call").click()
        page.get_by_text("Done: deleted").wait_for()
        say(page, "Now deploy the web service.")
        page.get_by_role("group", name="Which build of web should I deploy?").wait_for()
        assert page.evaluate("document.documentElement.scrollWidth") <= 360
        shot(page, tmp_path, "narrow-question.png")


def _luminance(css_color: str) -> float:
    parts = css_color[css_color.index("(") + 1 : css_color.index(")")].split(",")
    r, g, b = (float(p) / 255 for p in parts[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def test_readable_in_dark_mode(tmp_path: Path) -> None:
    with serve(_app()) as url, open_page(tmp_path) as page:
        page.emulate_media(color_scheme="dark")
        ready(page, url)
        say(page, "Please clean up the draft report.")
        card = page.get_by_role("group", name="Approve delete_file?")
        card.wait_for()
        colors = page.evaluate(
            "() => [document.body, document.querySelector('section.card'),"
            " document.querySelector('section.card h2')].map((e) => {"
            " const s = getComputedStyle(e); return [s.backgroundColor, s.color]; })"
        )
        (body_bg, body_fg), (card_bg, _), (_, heading_fg) = colors
        assert _luminance(body_bg) < 0.15 and _luminance(card_bg) < 0.2
        assert _luminance(body_fg) > 0.8 and _luminance(heading_fg) > 0.8
        shot(page, tmp_path, "dark.png")
