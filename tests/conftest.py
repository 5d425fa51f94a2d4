"""Suite-wide check (issue 5: every stream the server emits in the tests passes
ag-ui-validate): every complete stream an in-process ``AGUIServer`` writes during any test
is checked when the test ends (see ``agui_streams.validated_server_streams``).

Not covered, and why: streams the client cut off (not the server's to finish), and streams
written by a server in a child process (the load and kill tests, the samples, the CLI demo),
which this process cannot see; they go through the same encoder that is checked here (and
``tests/cli/test_cli_serve_answers_a_run_over_http.py`` validates a ``serve`` stream itself).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agui_streams import validated_server_streams
from postgres_server import postgres_server, postgres_server_process  # noqa: F401 - fixtures
from redis_server import redis_server, redis_server_process  # noqa: F401 - fixtures


@pytest.fixture(autouse=True)
def every_server_stream_passes_ag_ui_validate(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    with validated_server_streams(monkeypatch):
        yield
