"""The official TypeScript client, ``@ag-ui/client`` 1.0.0's ``HttpAgent`` (pinned with its
lock file in tests/interop/npm/, run by node), against our server: plain chat, and an
approval round trip through its 1.0 ``pendingInterrupts`` / ``resume``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from interop_support import our_app, run_peer, ts_client_modules

from agui_streams import SideEffects
from meai_texts import REJECTED
from real_components import require

SCRIPT = Path(__file__).parent / "clients" / "ts_client.cjs"
Serve = Callable[[Any], Awaitable[str]]


async def ts_client(url: str, scenario: str) -> dict[str, Any]:
    node = require("node", "install Node.js (apt-get install nodejs)")
    modules = ts_client_modules()
    return await run_peer([node, str(SCRIPT), url, scenario], env={"NODE_PATH": str(modules)})


async def test_http_agent_chats_with_our_server(our_server: Serve) -> None:
    out = await ts_client(await our_server(our_app(SideEffects())), "plain")
    assert out["errors"] == []
    assert out["texts"] == ["Hello from agui_chat."]
    assert out["runs"][0][0] == "RUN_STARTED" and out["runs"][0][-1] == "RUN_FINISHED"


async def test_http_agent_approves_and_our_server_runs_the_call_once(our_server: Serve) -> None:
    effects = SideEffects()
    out = await ts_client(await our_server(our_app(effects)), "approve")
    assert out["errors"] == []
    (interrupt,) = out["interrupts"]
    assert interrupt["toolCallId"] == "call_del_1" and interrupt["reason"] == "tool_call"
    assert out["runs"][1][:2] == ["RUN_STARTED", "TOOL_CALL_RESULT"]
    assert out["tools"] == ["deleted report.txt"]
    assert out["texts"][-1] == "Tool said: deleted report.txt"
    assert out["pendingAfter"] == 0
    assert effects.runs["delete_file"] == [{"path": "report.txt"}]


async def test_http_agent_rejects_and_our_server_runs_nothing(our_server: Serve) -> None:
    effects = SideEffects()
    out = await ts_client(await our_server(our_app(effects)), "reject")
    assert out["errors"] == []
    assert out["texts"][-1].startswith("Tool said: " + REJECTED)
    assert effects.count("delete_file") == 0
