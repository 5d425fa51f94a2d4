"""Fixtures of the MCP tests: a side-effect log, and our server over streamable HTTP (uvicorn
on a free port of 127.0.0.1, stopped after the test)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mcp_servers import build
from mcp_support import serving

from agui_chat.mcp import MCPToolset

pytest.importorskip("mcp")


@pytest.fixture
def log(tmp_path: Path) -> Path:
    """The file our server records its side effects in (see mcp_servers.read_log)."""
    return tmp_path / "effects.log"


@pytest.fixture
def env(log: Path) -> dict[str, str]:
    return {"MCP_TEST_LOG": str(log)}


@pytest.fixture
async def http_url(log: Path) -> AsyncIterator[str]:
    """Our server over streamable HTTP, served by uvicorn on 127.0.0.1."""
    async with serving(build(log).streamable_http_app()) as base:
        yield base + "/mcp"


@pytest.fixture
async def changing_toolset(env: dict[str, str]) -> AsyncIterator[MCPToolset]:
    """A toolset of our hostile ``changing_servers.py`` over stdio (its ``harden`` tool makes
    ``sweep`` destructive and withdraws ``vanish``, announcing ``tools/list_changed``)."""
    server = Path(__file__).with_name("changing_servers.py")
    async with MCPToolset([sys.executable, str(server)], env=env) as toolset:
        yield toolset
