"""The official AG-UI client conformance corpus, run against our event pipeline.

Each fixture's stream is encoded as real SSE bytes, decoded by our SSE decoder in several
chunkings, fed through ``AGUIEventPipeline`` and folded by ``AGUIThreadReducer``; the
fixture's ``expect`` block is then asserted as ``corpus/NOTES.md`` describes for
a third-party client. See ``README.md`` beside this file for what is not observed here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from agui_chat._exceptions import ProtocolError
from agui_chat.agui.client._pipeline import AGUIEventPipeline
from agui_chat.agui.client._reducer import AGUIThreadReducer
from agui_chat.agui.client._sse import SSEDecoder
from agui_chat.agui.wire._compat import downgrade_input_messages

#: The project's own copy of the corpus (``corpus/``, as published; see ``corpus/NOTES.md``).
CORPUS = Path(__file__).resolve().parent / "corpus"
STREAMS = CORPUS / "1.1" / "streams"
MANIFEST = STREAMS / "MANIFEST.txt"

FIXTURES = [
    line.strip()
    for line in MANIFEST.read_text(encoding="utf-8").splitlines()
    if line.strip() and not line.startswith("#")
]

# Keys about the RunAgentInput the client sends: observed once the lane runs through the
# real AGUIChatClient, not by the pipeline alone.

# For each fixture the client must reject: what our error message has to name. The
# corpus's errorContains quotes the TypeScript client's wording; ours names the same
# problem (the rule and the id or field) in our own words.
OUR_ERROR_NAMES: dict[str, tuple[str, ...]] = {
    "chunk-conflicting-role-fatal": ("chunk-role-m1", "does not match the open stream's role"),
    "chunk-conflicting-tool-name-fatal": (
        "chunk-tool-name-tc1",
        "does not match the open stream's toolCallName",
    ),
    "content-without-start-fatal": ("no open text message", "orphan-content-m1"),
    "custom-closes-chunk-stream-fatal": ("First TEXT_MESSAGE_CHUNK must carry messageId",),
    "event-after-run-finished-fatal": ("TEXT_MESSAGE_START after RUN_FINISHED",),
    "first-chunk-missing-id-fatal": ("First TEXT_MESSAGE_CHUNK must carry messageId",),
    "first-event-not-run-started-fatal": ("First event must be RUN_STARTED",),
    "first-tool-chunk-missing-name-fatal": (
        "First TOOL_CALL_CHUNK must carry toolCallName",
        "first-tool-chunk-tc1",
    ),
    "malformed-known-field-fatal": ("TEXT_MESSAGE_CONTENT", "/delta", "must be a string"),
    "nested-run-started-fatal": ("RUN_STARTED", "still active", "nested-run-started-r-1"),
    "open-message-at-run-finished-fatal": (
        "RUN_FINISHED while text messages are still open",
        "open-message-at-run-finished-m-1",
    ),
    "reasoning-discipline-verified": ("no open reasoning message", "m-reasoning-discipline-1"),
    "reasoning-message-wrong-role-fatal": ("REASONING_MESSAGE_START", "/role", '"reasoning"'),
    "run-finished-with-active-subagent-fatal": (
        "RUN_FINISHED while subagents are still open",
        "s-run-finished-active-subagent-1",
    ),
    "step-finished-without-start-fatal": (
        "step-finished-without-start-never-opened",
        "that was not started",
    ),
    "subagent-attribution-mismatch-fatal": (
        "s-subagent-attribution-mismatch-2",
        "does not match",
        "tc-subagent-attribution-mismatch-1",
    ),
    "subagent-finished-unstarted-fatal": ("s-subagent-finished-unstarted-1", "not active"),
    "subagent-started-missing-name-fatal": ("SUBAGENT_STARTED", "/name", "missing"),
    "unknown-outcome-array-fatal": ("RUN_FINISHED", "/outcome", "must be an object, got array"),
}


def load(name: str) -> dict[str, Any]:
    fixture: dict[str, Any] = json.loads((STREAMS / name).read_text(encoding="utf-8"))
    return fixture


def is_admitted_gap(fixture: dict[str, Any]) -> bool:
    """A fixture pinning a reference client's deviation from the spec (NOTES.md)."""
    return str(fixture.get("description", "")).startswith("ADMITTED GAP")


# ------------------------------------------------------------------- SSE encodings


def _lf_frames(stream: list[Any]) -> list[bytes]:
    return [
        b"data: " + json.dumps(event, ensure_ascii=False).encode() + b"\n\n" for event in stream
    ]


def _whole(stream: list[Any]) -> list[bytes]:
    return [b"".join(_lf_frames(stream))]


def _per_event(stream: list[Any]) -> list[bytes]:
    return _lf_frames(stream)


def _crlf_three_bytes(stream: list[Any]) -> list[bytes]:
    # CRLF line ends, no space after "data:", comments and ignored fields, and 3-byte
    # chunks that split CR from LF and multi-byte UTF-8 characters.
    body = b"".join(
        b": keep-alive\r\nevent: agui\r\nid: "
        + str(index).encode()
        + b"\r\ndata:"
        + json.dumps(event, ensure_ascii=False).encode()
        + b"\r\n\r\n"
        for index, event in enumerate(stream)
    )
    return [body[i : i + 3] for i in range(0, len(body), 3)]


CHUNKINGS: dict[str, Callable[[list[Any]], list[bytes]]] = {
    "lf-whole": _whole,
    "lf-per-event": _per_event,
    "crlf-3-bytes": _crlf_three_bytes,
}


# ------------------------------------------------------------------- running a fixture


@dataclass
class Outcome:
    delivered: list[dict[str, Any]] = field(default_factory=list)
    error: Exception | None = None
    warnings: list[str] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)
    state: Any = None


def run_fixture(fixture: dict[str, Any], chunking: str) -> Outcome:
    stream: list[Any] = fixture["stream"]
    thread_id = next(
        (
            e.get("threadId")
            for e in stream
            if isinstance(e, dict) and e.get("type") == "RUN_STARTED"
        ),
        None,
    )
    run_input: dict[str, Any] = fixture.get("input", {})
    out = Outcome()
    peer = fixture.get("client", {}).get("maxProtocolVersion")
    pipeline = AGUIEventPipeline(
        thread_id=thread_id, peer_max_version=peer, on_warning=out.warnings.append
    )
    reducer = AGUIThreadReducer(
        run_input.get("messages", []), run_input.get("state"), on_warning=out.warnings.append
    )
    # The outgoing shims speak through the same warning channel (era-0-0-39).
    downgrade_input_messages(run_input.get("messages", []), peer, pipeline.warn)
    decoder = SSEDecoder()
    try:
        for chunk in CHUNKINGS[chunking](stream):
            for data in decoder.feed(chunk):
                events = pipeline.feed(data)
                out.delivered.extend(events)
                reducer.apply_all(events)
        assert not decoder.finish(), "the SSE encoding left an event undispatched"
        pipeline.finish()
    except ProtocolError as exc:
        out.error = exc
    out.messages = reducer.messages
    out.state = reducer.state
    return out


# ------------------------------------------------------------------- matching helpers

_MISSING = object()


def lookup(events: list[dict[str, Any]], path: str) -> Any:
    """Resolve ``"<index>.<dotted path>"`` inside the delivered events (or ``_MISSING``)."""
    index, _, rest = path.partition(".")
    node: Any = events[int(index)] if int(index) < len(events) else _MISSING
    for part in rest.split(".") if rest else ():
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return _MISSING
    return node


def is_subset(expected: Any, actual: Any) -> bool:
    """The corpus's subset match: objects on the named keys, arrays same length."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            key in actual and is_subset(value, actual[key]) for key, value in expected.items()
        )
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(expected) == len(actual)
            and all(is_subset(e, a) for e, a in zip(expected, actual, strict=True))
        )
    return type(expected) is type(actual) and bool(expected == actual)


def names(text: str, needle: str) -> bool:
    return needle.lower() in text.lower()


# ------------------------------------------------------------------- the tests


def _cases() -> Iterator[Any]:
    for name in FIXTURES:
        for chunking in CHUNKINGS:
            yield pytest.param(name, chunking, id=f"{name.removesuffix('.json')}[{chunking}]")


@pytest.mark.parametrize(("name", "chunking"), list(_cases()))
def test_fixture(name: str, chunking: str) -> None:
    fixture = load(name)
    expect: dict[str, Any] = fixture["expect"]
    got = run_fixture(fixture, chunking)

    if is_admitted_gap(fixture):
        # We follow the spec: the opposite of the reference client's pinned outcome, and the
        # unrecognised value it rejects is stripped with a warning naming it instead.
        assert expect["outcome"] == "failed"
        assert got.error is None, f"expected the stream to be accepted, got {got.error!r}"
        if expect.get("errorContains"):
            assert any(names(w, expect["errorContains"]) for w in got.warnings), got.warnings
        return

    if expect["outcome"] == "completed":
        assert got.error is None, f"expected completion, got {got.error!r}"
    else:
        assert isinstance(got.error, ProtocolError), "expected the stream to be rejected"
        for needle in OUR_ERROR_NAMES[fixture["name"]]:
            assert names(str(got.error), needle), f"{needle!r} not in {str(got.error)!r}"

    delivered_types = [event["type"] for event in got.delivered]
    if "eventTypes" in expect:
        assert delivered_types == expect["eventTypes"]
    for absent in expect.get("eventTypesAbsent", []):
        assert absent not in delivered_types
    for path, value in expect.get("eventPaths", {}).items():
        found = lookup(got.delivered, path)
        assert found is not _MISSING, f"{path} missing from delivered events"
        assert found == value and type(found) is type(value), f"{path}: {found!r} != {value!r}"
    for path in expect.get("eventAbsentPaths", []):
        assert lookup(got.delivered, path) is _MISSING, f"{path} should have been removed"

    if "runError" in expect:
        errored = [event for event in got.delivered if event["type"] == "RUN_ERROR"]
        assert errored, "expected a run to report RUN_ERROR"
        if isinstance(expect["runError"], str):
            assert any(expect["runError"] in event["message"] for event in errored)

    for warning in expect.get("warnings", []):
        assert any(names(w, warning) for w in got.warnings), f"{warning!r} in {got.warnings}"
    if expect.get("noWarnings"):
        assert got.warnings == []

    if "messageCount" in expect:
        assert len(got.messages) == expect["messageCount"], got.messages
    if "messages" in expect:
        assert is_subset(expect["messages"], got.messages), got.messages
    if "state" in expect:
        assert is_subset(expect["state"], got.state), got.state


@pytest.mark.parametrize("name", FIXTURES, ids=[n.removesuffix(".json") for n in FIXTURES])
def test_chunkings_deliver_the_same_events(name: str) -> None:
    fixture = load(name)
    runs = [run_fixture(fixture, chunking) for chunking in CHUNKINGS]
    first = runs[0]
    for other in runs[1:]:
        assert json.dumps(other.delivered, sort_keys=True, default=str) == json.dumps(
            first.delivered, sort_keys=True, default=str
        ) or _differs_only_in_synthesized_ids(first, other)
        assert repr(other.error) == repr(first.error)


def _differs_only_in_synthesized_ids(first: Outcome, other: Outcome) -> bool:
    # Retired THINKING_* events get fresh ids on every run; compare their shape only.
    def shape(events: list[dict[str, Any]]) -> list[tuple[str, tuple[str, ...]]]:
        return [(e["type"], tuple(sorted(e))) for e in events]

    return shape(first.delivered) == shape(other.delivered)


def test_every_rejecting_fixture_says_what_our_error_must_name() -> None:
    rejecting = {
        load(n)["name"]
        for n in FIXTURES
        if load(n)["expect"]["outcome"] == "failed" and not is_admitted_gap(load(n))
    }
    assert rejecting == set(OUR_ERROR_NAMES)


def test_manifest_matches_the_directory() -> None:
    assert sorted(FIXTURES) == sorted(p.name for p in STREAMS.glob("*.json"))
