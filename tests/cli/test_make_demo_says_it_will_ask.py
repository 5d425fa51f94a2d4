"""``make demo`` (issue 25): the demo says it will ask before it asks, and ``make demo``
installs what the demo needs — the base install and the server extra — not the development
set ``make test`` installs (Playwright, ruff, mypy, pytest, ...). The demo runs on a real
pseudo-terminal; the Makefile is read with ``make -n`` on a copy, so nothing is installed."""

from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
import subprocess
from pathlib import Path

import pexpect
import pytest
from packaging.requirements import Requirement
from test_terminal_under_a_pty import finish, terminal

ROOT = Path(__file__).resolve().parents[2]
SAYS = (
    "It will ask you three things: to approve or reject a tool call (and why, if you reject it), "
    "then which build to deploy, then a note for the release log (optional). It waits for your "
    "answers; no answer rejects."
)


def test_the_demo_says_it_will_ask_before_the_first_question() -> None:
    with terminal("demo") as child:
        child.expect_exact(SAYS)
        child.expect_exact("? [y]es / [n]o / [e]dit: ")  # only then the first question
        before = child.logfile_read.getvalue()
    assert before.index(SAYS) < before.index("[y]es / [n]o / [e]dit")


def test_it_asks_the_three_things_it_said_and_nothing_more() -> None:
    with terminal("demo") as child:
        child.expect_exact(SAYS)
        child.expect_exact("? [y]es / [n]o / [e]dit: ")
        child.sendline("y")
        child.expect_exact("Build number to deploy (integer, required) [42]: ")
        child.sendline("7")
        child.expect_exact("A note for the release log (string, optional): ")
        child.sendline("hotfix")
        status, output = finish(child)
    assert status == 0
    assert "deployed web build 7 (hotfix)" in output
    asked = [line for line in output.splitlines() if re.search(r": \S*\s*$", line)]
    assert len(asked) == 3, asked  # the approval, the build, the note: as it said


def test_a_rejection_asks_why_as_it_said() -> None:
    with terminal("demo") as child:
        child.expect_exact(SAYS)
        child.expect_exact("? [y]es / [n]o / [e]dit: ")
        child.sendline("n")
        child.expect_exact("reason (optional): ")
        child.sendline("keep it")
        child.expect_exact("Build number to deploy (integer, required) [42]: ")
        child.sendline("")
        child.expect_exact("A note for the release log (string, optional): ")
        child.sendline("")
        status, _ = finish(child)
    assert status == 0


def test_with_yes_it_says_it_answers_for_you() -> None:
    with terminal("demo", "--yes") as child:
        child.expect_exact("It answers every prompt itself (--yes).")
        child.expect(pexpect.EOF)


def _make_n_demo(tmp_path: Path) -> list[str]:
    make = shutil.which("make")
    if make is None:
        pytest.skip("needs make: apt-get install make")
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "mk").mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    out = subprocess.run(
        [make, "-n", "demo"], cwd=tmp_path, capture_output=True, text=True, check=True, env=env
    )
    return out.stdout.splitlines()


def _closure(requirement: str) -> set[str]:
    """Every distribution ``pip install requirement`` brings, read from this project's
    pyproject.toml and the installed packages' metadata (offline)."""
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    seen: set[str] = set()
    todo = [Requirement(requirement)]
    while todo:
        req = todo.pop()
        name = re.sub(r"[-_.]+", "-", req.name).lower()
        key = f"{name}[{','.join(sorted(req.extras))}]"
        if key in seen:
            continue
        seen.add(key)
        if name == "agui-chat":
            needs = list(project["dependencies"])
            for extra in req.extras:
                needs += project["optional-dependencies"][extra]
        else:
            needs = importlib.metadata.distribution(name).requires or []
        for text in needs:
            sub = Requirement(text)
            extras = ("", *req.extras)
            if sub.marker is None or any(sub.marker.evaluate({"extra": e}) for e in extras):
                todo.append(sub)
    return {key.partition("[")[0] for key in seen}


def test_make_demo_installs_the_server_extra_not_the_development_set(tmp_path: Path) -> None:
    lines = _make_n_demo(tmp_path)
    installs = [line for line in lines if "pip install" in line and "-e" in line]
    assert installs == [".venv/bin/python -m pip install --quiet -e '.[server]'"]
    assert not [line for line in lines if "[dev]" in line]
    demo, dev = _closure("agui-chat[server]"), _closure("agui-chat[dev]")
    assert {"starlette", "uvicorn"} <= demo
    assert not demo & {"playwright", "pytest", "mypy", "ruff", "hypothesis", "openai", "redis"}
    assert len(demo) <= 30 < 60 <= len(dev)  # about 25 packages, where dev is about 77
