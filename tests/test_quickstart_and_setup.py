"""Issue 2 item 1 and issue 6 item 4: the README's Quickstart is exactly ``make demo`` and
``make test``; on a fresh checkout those two do all the set-up (create ``.venv``, install,
then run the demo / ruff, ruff format --check, mypy --strict and pytest); CI runs ``make test``
and nothing else. Checked with ``make -n`` on a copy of the Makefile, so nothing is run."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def _section(title: str) -> str:
    return README.split(f"## {title}", 1)[1].split("\n## ", 1)[0]


def test_the_quickstart_shows_exactly_the_two_commands() -> None:
    blocks = re.findall(r"```bash\n(.*?)```", _section("Quickstart"), re.S)
    assert len(blocks) == 1
    commands = [line.split("#")[0].strip() for line in blocks[0].splitlines() if line.strip()]
    assert commands == ["make demo", "make test"]


def test_the_readme_has_a_tour_samples_and_a_feature_table() -> None:
    tour = re.findall(
        r"```python\n(.*?)```",
        _section("The tour: approval and a question, in-process and over AG-UI"),
        re.S,
    )
    shown = "".join(tour)
    assert len(tour) == 5 and len(shown.splitlines()) <= 80  # 5: the imports, named (issue 25)
    for name in ("approval_required", "request_input", "AGUIServer", "AGUIChatClient"):
        assert name in shown
    features = _section("Features")
    assert features.count("\n|") >= 8


def test_ci_runs_make_test_and_nothing_else() -> None:
    script = (ROOT / ".ci" / "run").read_text().splitlines()
    commands = [
        line.strip()
        for line in script
        if line.strip() and not line.startswith("#") and not line.startswith(("set ", "cd "))
    ]
    assert commands == ["make test"]


def _dry_run(target: str, tmp_path: Path) -> list[str]:
    """What ``make TARGET`` would run on a fresh checkout (no ``.venv``)."""
    make = shutil.which("make")
    if make is None:
        pytest.skip("make is not installed")
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    # Run as a top-level make even under `make test` (no "Entering directory" lines).
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    out = subprocess.run(
        [make, "-n", target],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
        env=env,
    )
    return [line for line in out.stdout.splitlines() if not line.startswith("make")]


def _index(lines: list[str], pattern: str) -> int:
    for i, line in enumerate(lines):
        if re.search(pattern, line):
            return i
    raise AssertionError(f"{pattern!r} not in:\n" + "\n".join(lines))


def test_make_test_creates_the_venv_installs_dev_and_runs_every_check(tmp_path: Path) -> None:
    lines = _dry_run("test", tmp_path)
    order = [
        _index(lines, r"-m venv \.venv"),
        _index(lines, r"pip install .*-e '?\.\[dev\]"),
        _index(lines, r"ruff check"),
        _index(lines, r"ruff format --check"),
        _index(lines, r"mypy --strict src"),
        _index(lines, r"(-m pytest|/pytest)(\s|$)"),
    ]
    assert order == sorted(order)


def test_make_demo_creates_the_venv_installs_and_runs_the_demo(tmp_path: Path) -> None:
    lines = _dry_run("demo", tmp_path)
    order = [
        _index(lines, r"-m venv \.venv"),
        _index(lines, r"pip install"),
        _index(lines, r"agui-chat demo"),
    ]
    assert order == sorted(order)


def test_pyproject_declares_the_package_its_extras_and_the_command() -> None:
    import agui_chat

    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["build-system"]["build-backend"] == "hatchling.build"
    assert project["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"] == ["src/agui_chat"]
    assert project["project"]["requires-python"] == ">=3.10"
    extras = project["project"]["optional-dependencies"]
    assert {"openai", "server", "otel", "dev"} <= set(extras)
    assert any(d.startswith("openai") for d in extras["openai"])
    assert {d.split(">")[0] for d in extras["server"]} >= {"starlette", "uvicorn"}
    base = " ".join(project["project"]["dependencies"])
    for forbidden in ("openai", "starlette", "uvicorn", "opentelemetry-sdk", "opentelemetry-exp"):
        assert forbidden not in base
    assert any(d.startswith("opentelemetry-api>=") for d in project["project"]["dependencies"])
    assert project["project"]["scripts"]["agui-chat"] == "agui_chat.cli:main"
    assert (Path(agui_chat.__file__).parent / "py.typed").is_file()
