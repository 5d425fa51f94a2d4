"""Issue 6, samples: each is a short program whose docstring says what it shows, the README
links every one, and every one is run (or, for OpenAI, imported) by a test."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted((ROOT / "samples").glob("*.py"))
README = (ROOT / "README.md").read_text()


def test_there_are_the_six_samples_of_the_issue() -> None:
    assert {s.name for s in SAMPLES} >= {
        "approval_loop.py",
        "interrupt_form.py",
        "client_side_tool.py",
        "middleware.py",
        "fastapi_server.py",
        "openai_server.py",
    }


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_the_sample_has_a_docstring_saying_what_it_shows(sample: Path) -> None:
    doc = ast.get_docstring(ast.parse(sample.read_text()))
    assert doc is not None, f"{sample.name} has no docstring"
    summary = doc.splitlines()[0]
    assert len(summary.split()) >= 4, summary
    assert len(doc.split()) >= 25, f"{sample.name}'s docstring does not say enough"


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_the_readme_links_the_sample(sample: Path) -> None:
    assert f"](samples/{sample.name})" in README


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_a_test_runs_the_sample(sample: Path) -> None:
    tests = [
        p
        for p in (ROOT / "tests").rglob("test_*.py")
        if p.name != Path(__file__).name and sample.name in p.read_text()
    ]
    assert tests, f"no test mentions samples/{sample.name}"


def test_the_fastapi_sample_demo_mode_runs_offline() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    out = subprocess.run(
        [sys.executable, str(ROOT / "samples" / "fastapi_server.py"), "--demo"],
        capture_output=True,
        text=True,
        timeout=90,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "without a token: HTTP 401"
    assert lines[1].startswith("with the token: HTTP 200 text/event-stream")
    assert '"type":"RUN_FINISHED"' in out.stdout
    assert '"outcome":{"type":"interrupt"' in out.stdout
