"""The README's import paths work for a newcomer (issue 25): every import it shows runs; each
adapter name it uses is imported, somewhere in it, from that adapter's one home (DESIGN §2:
``AGUIServer`` from ``agui_chat.agui``); ``from agui_chat import AGUIServer`` fails with an
``ImportError`` that names the right import, without becoming a second import path; and the
README's stand-in model gives every call an id of its own (a reused id is the call-id trap,
``tests/agui/server/test_call_id_reused_across_turns.py``)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import agui_chat
from agui_chat import ChatMessage, FunctionCallContent, FunctionResultContent

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()
BLOCKS = re.findall(r"```python\n(.*?)```", README, re.S)
#: Every ``from agui_chat... import ...`` statement of the README's code, parenthesised or not.
IMPORTS = sorted(
    {
        " ".join(found.split())
        for block in BLOCKS
        for found in re.findall(r"^\s*(from agui_chat[\w.]* import (?:\([^)]*\)|.*))$", block, re.M)
    }
)
#: Adapter names and their one home.
HOMES = {
    "AGUIServer": "agui_chat.agui",
    "AGUIChatClient": "agui_chat.agui",
    "ScriptedChatClient": "agui_chat.testing",
}


def _imported_from(module: str, name: str) -> bool:
    pattern = rf"from {re.escape(module)} import [^\n]*\b{name}\b"
    return any(re.search(pattern, block) for block in BLOCKS)


def test_every_import_the_readme_shows_runs() -> None:
    assert any("agui_chat.agui" in line for line in IMPORTS)
    out = subprocess.run(
        [sys.executable, "-c", "\n".join(IMPORTS)], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize("name", sorted(HOMES))
def test_an_adapter_name_the_readme_uses_in_code_is_imported_from_its_home(name: str) -> None:
    assert any(re.search(rf"\b{name}\(", block) for block in BLOCKS)  # used in code
    assert _imported_from(HOMES[name], name), f"no `from {HOMES[name]} import {name}` shown"
    assert not _imported_from("agui_chat", name)


def test_the_readme_names_where_agui_server_lives_in_prose_too() -> None:
    assert "from agui_chat.agui import AGUIChatClient, AGUIServer" in README
    assert "`agui_chat.agui.AGUIServer`" in README  # the install table's server extra


@pytest.mark.parametrize("name", ["AGUIServer", "AGUIChatClient"])
def test_importing_an_adapter_name_from_agui_chat_says_where_it_lives(name: str) -> None:
    with pytest.raises(ImportError) as failed:
        exec(f"from agui_chat import {name}", {})
    assert str(failed.value) == (f"{name} is not in agui_chat: from agui_chat.agui import {name}")
    assert name not in vars(agui_chat)  # no alias: agui_chat never holds it
    assert name not in agui_chat.__all__


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    with pytest.raises(AttributeError):
        agui_chat.NoSuchName  # type: ignore[attr-defined]  # noqa: B018
    assert not hasattr(agui_chat, "NoSuchName")


def test_the_readme_stand_in_model_gives_each_call_its_own_id() -> None:
    loop = next(b for b in BLOCKS if "asyncio.run(chat(" in b)
    scope: dict[str, Any] = {}
    exec(loop.replace('asyncio.run(chat(["What time is it?"]))', ""), scope)
    model = scope["model"]
    first = [ChatMessage("user", "What time is it?")]
    [call] = model(first, None)
    assert isinstance(call, FunctionCallContent)
    second = [
        *first,
        ChatMessage("assistant", [call]),
        ChatMessage("tool", [FunctionResultContent(call.call_id, "12:34")]),
        ChatMessage("assistant", "It is 12:34."),
        ChatMessage("user", "And now?"),
    ]
    [again] = model(second, None)
    assert again.call_id != call.call_id


#: Packages that are not a home of public names of their own: the command line, and parts of
#: the core whose names ``agui_chat`` re-exports.
NOT_HOMES = {"cli", "consent", "middleware"}


def test_the_readme_names_the_home_of_every_adapter() -> None:
    package = Path(agui_chat.__file__).parent
    homes = {p.parent.name for p in package.glob("*/__init__.py")} - NOT_HOMES
    paragraph = README.split("Where each name is imported from", 1)[1].split("\n\n", 1)[0]
    named = set(re.findall(r"`agui_chat\.(\w+)`", paragraph))
    assert homes >= {"agui", "openai", "anthropic", "gemini", "testing"}
    assert named == homes, f"the README's list misses {sorted(homes - named)}"
