"""Suite-wide check: every complete stream an in-process ``AGUIServer`` writes during a
robustness test passes ``ag-ui-validate`` (issue 5: every stream the server emits in the
tests). ``tests/agui_server/conftest.py`` does the same for the server's own tests; this one
covers ``tests/robustness``, whose servers run in this process behind uvicorn.

Not covered, and why: streams the client cut off (not the server's to finish), and streams
written by a server in a child process (the load and kill tests, the samples, the CLI demo),
which this process cannot see; they go through the same encoder that is checked here (and
``tests/cli/test_cli_serve_answers_a_run_over_http.py`` validates a ``serve`` stream itself).
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from pathlib import Path
from typing import Any

import pytest

ROBUSTNESS = Path(__file__).parent / "robustness"


def _events(body: bytes) -> list[dict[str, Any]]:
    """The events of a body our server framed: LF only, one ``data:`` line per event."""
    import json

    text = body.decode("utf-8")
    assert "\r" not in text, "the server must frame with LF only"
    events = []
    for block in text.split("\n\n"):
        lines = [line for line in block.split("\n") if line]
        if not lines or all(line.startswith(":") for line in lines):
            continue
        assert len(lines) == 1 and lines[0].startswith("data: "), f"bad SSE block: {block!r}"
        events.append(json.loads(lines[0][len("data: ") :]))
    return events


def _problems(events: list[dict[str, Any]], *, resumed: bool) -> list[str]:
    from ag_ui_validate import ValidatorOptions, create_validator

    overrides: dict[str, str] = {}
    if resumed:
        # AGUI207: a resumed run emits TOOL_CALL_RESULT for a call started in the previous
        # run, as AG-UI 1.0 resumes must (agui-wire.md §5.4); ag-ui-validate 0.4 tracks
        # calls per run and flags it (§8.3, §8.4). The same override as tests/agui_server.
        overrides["AGUI207"] = "off"
    validator = create_validator(ValidatorOptions(severity_overrides=overrides))
    for event in events:
        validator.feed(event)
    validator.finalize()
    return [
        f"{d.rule} {d.severity} at event {d.event_index}: {d.message}"
        for d in validator.report().diagnostics
        if d.severity in ("error", "warning")
    ]


@pytest.fixture(autouse=True)
def every_robustness_stream_passes_ag_ui_validate(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[list[tuple[bytes, bool]]]:
    """Record every complete SSE body an ``AGUIServer`` writes during a robustness test and
    check each one with ag-ui-validate when the test ends."""
    streams: list[tuple[bytes, bool]] = []
    if ROBUSTNESS not in Path(str(request.node.path)).parents:
        yield streams
        return
    from agui_chat.agui.server import AGUIServer

    original = AGUIServer._stream

    async def recording(self: AGUIServer, run: Any, receive: Any, send: Any) -> None:
        body = bytearray()
        complete = False

        async def spy(message: MutableMapping[str, Any]) -> None:
            nonlocal complete
            if message["type"] == "http.response.body":
                body.extend(message.get("body", b""))
                complete = not message.get("more_body", False)
            await send(message)

        try:
            await original(self, run, receive, spy)
        finally:
            if complete:
                streams.append((bytes(body), bool(run.input.resume)))

    monkeypatch.setattr(AGUIServer, "_stream", recording)
    yield streams
    for body, resumed in streams:
        problems = _problems(_events(body), resumed=resumed)
        assert not problems, "ag-ui-validate: " + "; ".join(problems)
