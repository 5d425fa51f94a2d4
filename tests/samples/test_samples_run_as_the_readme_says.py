"""The samples run as the README says (issue 25: ``python samples/tour.py`` failed outside
``.venv``, and the README did not say what a sample needs). The README names the samples the
``.venv`` of ``make demo`` runs — the base install and the ``server`` extra — and each of them
is run here with every other installed package hidden (an import of one fails as it would in
that venv), so a sample that needs more than ``make demo`` installs fails this test."""

from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
SAMPLES_SECTION = README.split("## Samples", 1)[1].split("\n## ", 1)[0]
#: What each sample is run with (no person at the terminal).
ARGS = {"approval_loop.py": ["--yes"], "interrupt_form.py": ["--yes"]}

# Every installed distribution that the demo's install does not bring is hidden.
_HIDE = """
import importlib.abc, sys
HIDDEN = set(sys.argv[2].split(","))
class Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if top in HIDDEN:
            raise ModuleNotFoundError(f"No module named {top!r} (not in make demo's venv)")
        return None
sys.meta_path.insert(0, Hide())
import runpy
sys.argv = [sys.argv[1], *sys.argv[3:]]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def demo_samples() -> list[str]:
    """The samples the README says the ``make demo`` venv runs."""
    sentence = SAMPLES_SECTION.split("The `.venv` of `make demo`", 1)[1].split(";", 1)[0]
    return ["tour.py", *re.findall(r"`(\w+\.py)`", sentence)]


def _closure(requirement: str) -> set[str]:
    project_text = (ROOT / "pyproject.toml").read_text()
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    project = tomllib.loads(project_text)["project"]
    seen: set[str] = set()
    todo = [Requirement(requirement)]
    while todo:
        req = todo.pop()
        name = re.sub(r"[-_.]+", "-", req.name).lower()
        key = f"{name}[{','.join(sorted(req.extras))}]"
        if key in seen:
            continue
        seen.add(key)
        needs = (
            [
                *project["dependencies"],
                *(d for e in req.extras for d in project["optional-dependencies"][e]),
            ]
            if name == "agui-chat"
            else importlib.metadata.distribution(name).requires or []
        )
        for text in needs:
            sub = Requirement(text)
            if sub.marker is None or any(
                sub.marker.evaluate({"extra": e}) for e in ("", *req.extras)
            ):
                todo.append(sub)
    return {key.partition("[")[0] for key in seen}


def _hidden_modules() -> str:
    """The top-level modules of the installed distributions ``make demo`` does not install."""
    demo = _closure("agui-chat[server]")
    hidden = {
        top
        for top, dists in importlib.metadata.packages_distributions().items()
        if not any(re.sub(r"[-_.]+", "-", d).lower() in demo for d in dists)
    }
    assert {"playwright", "openai", "fastapi", "mcp", "pytest"} <= hidden
    return ",".join(sorted(hidden - {"agui_chat", "_agui_chat"}))


def test_the_readme_names_the_samples_make_demo_runs_and_how() -> None:
    assert "`.venv/bin/python samples/NAME.py`" in SAMPLES_SECTION
    assert "`.venv/bin/python samples/tour.py`" in README
    assert set(demo_samples()) >= {"tour.py", "approval_loop.py", "structured_output.py"}
    for name in demo_samples():
        assert (ROOT / "samples" / name).is_file(), name


@pytest.mark.parametrize("name", demo_samples())
def test_a_sample_runs_with_only_what_make_demo_installs(name: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    script = ROOT / "samples" / name
    out = subprocess.run(
        [sys.executable, "-c", _HIDE, str(script), _hidden_modules(), *ARGS.get(name, [])],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Traceback" not in out.stderr


def test_hiding_works_a_sample_that_needs_more_fails() -> None:
    """The check can fail: the FastAPI sample needs FastAPI, which make demo leaves out."""
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            _HIDE,
            str(ROOT / "samples" / "fastapi_server.py"),
            _hidden_modules(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert out.returncode != 0
    assert "No module named 'fastapi' (not in make demo's venv)" in out.stderr
