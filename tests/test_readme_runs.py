"""The README runs as written: every fenced block is executed by a test, or is a literal
excerpt of a sample that a test runs (a ``text`` block is a diagram, not code). The tour,
``samples/tour.py``, answers its approval and its question correctly, in-process and over
AG-UI on 127.0.0.1, and appends each request's messages to the history once. The Install
table lists exactly the extras ``pyproject.toml`` defines."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
SAMPLES = {p.name: p.read_text() for p in sorted((ROOT / "samples").glob("*.py"))}

#: Blocks run by a test of their own: a string that marks the block -> the test that runs it.
EXECUTED = {
    "asyncio.run(chat(": "tests/test_readme.py",
    "with SyncChatClient(client) as chat:": "tests/test_readme_sync_use.py",
    "make demo": "tests/test_quickstart_and_setup.py",  # make -n, on a copy of the Makefile
    'audience="files-agent"': "tests/test_readme_production_setup.py",
    "edited_arguments=edited": "tests/test_readme_edit_arguments.py",
    'app.mount("/agent"': "tests/test_readme_fastapi_mount.py",
}

BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def blocks() -> list[tuple[str, str]]:
    return [(lang, body) for lang, body in BLOCK.findall(README)]


def test_the_readme_has_blocks_to_check() -> None:
    assert len(blocks()) >= 6


@pytest.mark.parametrize(
    ("lang", "body"),
    blocks(),
    ids=[f"{lang}:{body.splitlines()[0][:40]}" for lang, body in blocks()],
)
def test_every_block_is_run_by_a_test_or_an_excerpt_of_a_sample(lang: str, body: str) -> None:
    if lang == "text":
        return
    runners = [test for marker, test in EXECUTED.items() if marker in body]
    if runners:
        for test in runners:
            assert "README" in (ROOT / test).read_text(), f"{test} does not read the README"
        return
    excerpt_of = [name for name, text in SAMPLES.items() if body in text]
    assert excerpt_of, (
        "this README block is neither run by a test nor a literal excerpt of a sample; copy it "
        "from a sample that a test runs (tests/samples), or run it in a test and add its marker "
        f"to EXECUTED in {Path(__file__).name}:\n{body}"
    )


def test_the_tour_answers_both_pauses_and_keeps_one_history() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AGUI_"))}
    out = subprocess.run(
        [sys.executable, str(ROOT / "samples" / "tour.py")],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # interleaved, as on a terminal: no warning among its lines
        text=True,
        timeout=90,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 0, out.stdout
    lines = out.stdout.splitlines()
    assert len(lines) == 6, lines  # its own lines and nothing else
    assert lines[:5] == [
        "in-process: Done: deleted draft.txt.",
        "in-process: Done: deployed web #7.",
        "over AG-UI: Done: deleted draft.txt.",
        "over AG-UI: Done: deployed web #7.",
        "delete_file ran 2 time(s)",  # once per approval: once in-process, once over HTTP
    ]
    turn = [
        "user['TextContent']",
        "assistant['FunctionCallContent', '{request}']",
        "user['{response}']",
        "tool['FunctionResultContent']",
        "assistant['TextContent']",
    ]
    approval = [
        t.format(request="ToolApprovalRequestContent", response="ToolApprovalResponseContent")
        for t in turn
    ]
    question = [
        t.format(request="InterruptRequestContent", response="InterruptResponseContent")
        for t in turn
    ]
    assert lines[5] == "the AG-UI history: " + " ".join(approval + question)


def test_the_install_table_lists_every_extra_and_only_those() -> None:
    section = README.split("## Install", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(
        r"^\| `(\w+)` \| `pip install 'agui-chat\[(\w+)\]'` \| (.+) \|$", section, re.M
    )
    assert all(name == extra and len(brings.split()) >= 3 for name, extra, brings in rows), rows
    pyproject = (ROOT / "pyproject.toml").read_text()  # (tomllib is 3.11+; we support 3.10)
    table = pyproject.split("[project.optional-dependencies]\n", 1)[1].split("\n[", 1)[0]
    extras = set(re.findall(r"^(\w+) = ", table, re.M)) - {"dev"}
    assert {name for name, _, _ in rows} == extras
    assert "`pip install agui-chat`" in section and 'name = "agui-chat"' in pyproject
