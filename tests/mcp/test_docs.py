"""docs/mcp.md's table of what approval="auto" does agrees with the code."""

from __future__ import annotations

from pathlib import Path

import mcp.types as types
import pytest

from agui_chat.mcp import auto_requires_approval

DOC = (Path(__file__).resolve().parents[2] / "docs" / "mcp.md").read_text()

ROWS = [
    ("| none |", None),
    ("| `readOnlyHint: true` |", {"read_only_hint": True, "destructive_hint": True}),
    ("| `destructiveHint: true` (not read-only) |", {"destructive_hint": True}),
    ("| `destructiveHint: false` (not read-only) |", {"destructive_hint": False}),
    ("| annotations with neither hint |", {"idempotent_hint": True}),
]


@pytest.mark.parametrize(("label", "hints"), ROWS, ids=[r[0] for r in ROWS])
def test_each_row_of_the_auto_table_is_what_auto_does(
    label: str, hints: dict[str, bool] | None
) -> None:
    [row] = [line for line in DOC.splitlines() if line.startswith(label)]
    annotations = types.ToolAnnotations(**hints) if hints is not None else None
    expected = "approval required" if auto_requires_approval(annotations) else "runs at once"
    assert expected in row, row


def test_every_policy_form_is_in_the_policy_table() -> None:
    for form in ('`"auto"`', '`"always"`', '`"never"`', "`lambda tool, args: ...`", '"*"'):
        assert form in DOC, form
