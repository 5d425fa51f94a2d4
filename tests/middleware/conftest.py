"""Fixtures for the middleware tests: run each loop test streaming and non-streaming."""

from __future__ import annotations

import pytest
from loop_support import Ask, make_ask


@pytest.fixture(params=[False, True], ids=["non-streaming", "streaming"])
def streaming(request: pytest.FixtureRequest) -> bool:
    """Whether the test drives the client through ``get_streaming_response``."""
    return bool(request.param)


@pytest.fixture
def ask(streaming: bool) -> Ask:
    """Call a client the way the test is parametrized and return the whole response."""
    return make_ask(streaming)
