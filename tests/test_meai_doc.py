"""docs/meai.md: every row is "same" or "different on purpose", and every test it names
exists (so the table cannot point at a test that was renamed or removed)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PREFIXES = {"mp_": "test_meai_parity_", "fi_": "test_function_invocation_"}


def _rows() -> list[list[str]]:
    text = (ROOT / "docs" / "meai.md").read_text(encoding="utf-8")
    rows = [line.split(" | ") for line in text.splitlines() if line.startswith("| ")]
    return [r for r in rows if len(r) == 4 and not r[0].startswith("| MEAI") and "---" not in r[0]]


def test_every_row_is_same_or_different_on_purpose_and_names_a_test() -> None:
    rows = _rows()
    assert len(rows) > 30
    for row in rows:
        status = row[2]
        assert status.startswith("same") or status.startswith("different on purpose"), row
        assert "test_" in row[3], row


def test_every_test_the_table_names_exists() -> None:
    named = 0
    for row in _rows():
        current = None
        for ref in re.findall(r"`([^`]+)`", row[3]):
            path, _, name = ref.partition("::")
            if path.startswith("::"):
                path, name = "", path[2:]
            if path:
                for short, long in PREFIXES.items():
                    if path.startswith(short):
                        path = long + path[len(short) :]
                current = path if "/" in path else f"tests/middleware/{path}"
            if not name:
                assert (ROOT / current).exists(), ref
                continue
            name = name.split("[")[0]
            source = (ROOT / current).read_text(encoding="utf-8")
            assert re.search(rf"def {re.escape(name)}\(", source), f"{current}::{name}"
            named += 1
    assert named > 40
