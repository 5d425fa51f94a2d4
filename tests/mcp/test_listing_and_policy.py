"""Listing edge cases and the approval policy table, on the SDK's own ``Tool`` objects."""

from __future__ import annotations

import logging

import mcp.types as types
import pytest

from agui_chat.mcp import MCPApprovalRequired, MCPToolset, auto_requires_approval


def _tool(name: str, schema: object, **hints: bool) -> types.Tool:
    annotations = types.ToolAnnotations(**hints) if hints else None
    return types.Tool(name=name, input_schema=schema, annotations=annotations)  # type: ignore[arg-type]


GOOD = {"type": "object", "properties": {"path": {"type": "string"}}}


def test_a_tool_with_an_invalid_input_schema_is_skipped_with_a_warning_naming_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    toolset = MCPToolset(["unused"], approval="never")
    listed = [
        _tool("fine", GOOD),
        _tool("broken", {"type": "object", "properties": {"x": {"type": "nope"}}}),
        _tool("not_an_object", {"type": "string"}),
        _tool("also.fine", GOOD),
    ]
    with caplog.at_level(logging.WARNING, "agui_chat.mcp"):
        tools = toolset._build(listed)
    assert [t.name for t in tools] == ["fine", "also_fine"]
    text = caplog.text
    assert "'broken'" in text and "'not_an_object'" in text


@pytest.mark.parametrize(
    ("hints", "gated"),
    [
        (None, True),
        ({"read_only_hint": True}, False),
        ({"read_only_hint": True, "destructive_hint": True}, False),
        ({"destructive_hint": True}, True),
        ({"destructive_hint": False}, False),
        ({"read_only_hint": False}, True),
        ({"idempotent_hint": True}, True),
    ],
)
def test_the_auto_table(hints: dict[str, bool] | None, gated: bool) -> None:
    annotations = types.ToolAnnotations(**hints) if hints is not None else None
    assert auto_requires_approval(annotations) is gated
    [tool] = MCPToolset(["unused"])._build(
        [types.Tool(name="t", input_schema=GOOD, annotations=annotations)]
    )
    assert isinstance(tool, MCPApprovalRequired) is gated


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({}, ValueError),
        ({"command": ["x"], "url": "http://127.0.0.1:1/mcp"}, ValueError),
        ({"command": "npx server"}, TypeError),
        ({"url": "ftp://x"}, ValueError),
        ({"command": ["x"], "headers": {"a": "b"}}, ValueError),
        ({"command": ["x"], "approval": "sometimes"}, ValueError),
        ({"command": ["x"], "approval": 3}, TypeError),
        ({"command": ["x"], "on_cancelled": "ignore"}, ValueError),
    ],
)
def test_bad_arguments_are_refused_at_construction(kwargs: dict[str, object], error: type) -> None:
    with pytest.raises(error):
        MCPToolset(**kwargs)  # type: ignore[arg-type]


async def test_an_unreachable_url_is_a_tool_error_naming_it() -> None:
    from agui_chat import ToolError

    with pytest.raises(ToolError, match=r"127\.0\.0\.1:9/mcp"):
        async with MCPToolset(url="http://127.0.0.1:9/mcp", connect_timeout=10):
            pass
