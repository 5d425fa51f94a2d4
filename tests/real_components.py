"""Real components the tests start (Redis, Chromium, peer servers, npm packages): a test that
needs one calls :func:`require`, which skips with a reason saying how to install it, or fails
when ``CI`` is set, because CI must not skip a test for want of a component ``make test``
installs."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

#: Where ``make test`` caches peer virtualenvs and npm packages (see the Makefile's CACHE).
CACHE = Path(os.environ.get("AGUI_CHAT_CACHE", Path.home() / ".cache" / "agui-chat"))


def missing(what: str, how: str) -> None:
    """Skip (or, under CI, fail) because ``what`` is missing; ``how`` says how to install it."""
    reason = f"{what} is not installed: {how}"
    if os.environ.get("CI"):
        pytest.fail(f"CI must run this test, but {reason}", pytrace=False)
    pytest.skip(reason)


def require(executable: str, how: str) -> str:
    """The path of ``executable`` on PATH, or skip/fail (see :func:`missing`)."""
    found = shutil.which(executable)
    if found is None:
        missing(executable, how)
    assert found is not None
    return found


def require_path(path: Path, what: str, how: str) -> Path:
    """``path`` if it exists, or skip/fail (see :func:`missing`)."""
    if not path.exists():
        missing(what, how)
    return path
