"""The README's production setup builds a working server as printed: the key, the store URL
and the audience from its five lines, and an approval through it runs once."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from agui_chat import FunctionCallContent, ai_function, approval_required
from agui_chat.testing import ScriptedChatClient

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_production_block_builds_a_server_with_a_shared_store_and_an_audience(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    section = README.read_text().split("## In production", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, re.S)
    assert block is not None
    monkeypatch.setenv("AGUI_CHAT_SIGNING_KEY", "a-production-key-0123456789abcdef")
    monkeypatch.setenv("AGUI_CHAT_APPROVAL_STORE", f"sqlite:///{tmp_path}/approvals.db")

    @approval_required
    @ai_function
    def delete_file(path: str) -> str:
        """Delete a file."""
        return f"deleted {path}"

    model = ScriptedChatClient(lambda m, o: [FunctionCallContent("c1", "delete_file", {})])
    from agui_chat.agui import AGUIServer

    scope: dict[str, Any] = {"model": model, "delete_file": delete_file, "AGUIServer": AGUIServer}
    exec("import os\n" + block.group(1), scope)
    app = scope["app"]
    from agui_chat.stores import SQLiteApprovalStore

    assert isinstance(app.approval_store, SQLiteApprovalStore)
    assert app.audience == "files-agent"
    imports, call = block.group(1).strip().split("\n\n", 1)
    assert imports == "from agui_chat.agui import AGUIServer"  # its one home, named
    assert len(call.splitlines()) == 6  # the call and its five lines
