"""Hypothesis strategies for AG-UI streams: well-formed runs, their SSE encodings in random
framing, random chunkings of the bytes, and the mutations the properties throw at them.

A generated run is a list of wire-shaped event dicts that the AG-UI 1.0 rules accept as they
are (no null fields, no unknown members), so a pipeline that reads it correctly must deliver
exactly those dicts. Text deltas and ids carry non-ASCII text, so a byte-level cut often
lands inside a multi-byte UTF-8 character.
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

Event = dict[str, Any]

THREAD_ID = "thread-ü"

#: Settings for every property here: few enough examples to keep the folder fast on two
#: cores, no per-example deadline (a loaded CI machine is not a failure).
PROPERTY = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

#: Text with 2-, 3- and 4-byte UTF-8 characters, line breaks and JSON-hostile characters.
_TRICKY = st.sampled_from(
    [
        "héllo",
        "日本語のテキスト",
        "🙂👍🏽",
        "Ω≈ç√∫",
        "naïve café",
        "a\r\nb\rc\nd",
        '"quoted" \\ back',
        "\u2028\u2029",
        "𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
        "data: {}\n\n",
        ": not a comment",
        "\ufeffbom",
    ]
)
_NO_SURROGATES = st.characters(exclude_categories=["Cs"])
TEXT = st.one_of(_TRICKY, st.text(alphabet=_NO_SURROGATES, max_size=10))
NON_EMPTY_TEXT = TEXT.filter(bool)
_JSON_LEAF = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1),
    TEXT,
)
JSON_VALUE = st.recursive(
    _JSON_LEAF,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=6,
)
_POINTER = st.lists(
    st.text(alphabet="ab~/é", max_size=3).map(lambda s: s.replace("~", "~0").replace("/", "~1")),
    max_size=3,
).map(lambda parts: "".join("/" + p for p in parts))


def _split(draw: st.DrawFn, text: str) -> list[str]:
    """``text`` cut into 1..4 pieces at random character offsets."""
    cuts = sorted(set(draw(st.lists(st.integers(0, len(text)), max_size=3))))
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds) if a < b] or [text]


def _base(draw: st.DrawFn, event: Event) -> Event:
    """Sometimes add the base fields every event may carry."""
    extras = draw(st.integers(0, 11))
    if extras < 2:
        event["timestamp"] = draw(st.integers(0, 2**41))
    if extras in (1, 2):
        event["metadata"] = draw(st.dictionaries(TEXT, JSON_VALUE, max_size=2))
    return event


@st.composite
def _text_message(draw: st.DrawFn, n: int) -> list[Event]:
    message_id = f"msg-{n}-{draw(st.sampled_from(['', 'é', '日']))}"
    start: Event = {"type": "TEXT_MESSAGE_START", "messageId": message_id}
    role = draw(st.sampled_from([None, "assistant", "user", "system", "developer"]))
    if role is not None:
        start["role"] = role
    deltas = draw(st.lists(NON_EMPTY_TEXT, min_size=1, max_size=4))
    return [
        _base(draw, start),
        *(
            _base(draw, {"type": "TEXT_MESSAGE_CONTENT", "messageId": message_id, "delta": d})
            for d in deltas
        ),
        _base(draw, {"type": "TEXT_MESSAGE_END", "messageId": message_id}),
    ]


@st.composite
def _tool_call(draw: st.DrawFn, n: int) -> list[Event]:
    call_id = f"call-{n}"
    start: Event = {
        "type": "TOOL_CALL_START",
        "toolCallId": call_id,
        "toolCallName": draw(st.sampled_from(["lookup", "delete_file", "wétter"])),
    }
    if draw(st.booleans()):
        start["parentMessageId"] = f"parent-{n}"
    arguments = json.dumps(draw(st.dictionaries(TEXT, JSON_VALUE, max_size=3)), ensure_ascii=False)
    events = [
        _base(draw, start),
        *(
            _base(draw, {"type": "TOOL_CALL_ARGS", "toolCallId": call_id, "delta": piece})
            for piece in _split(draw, arguments)
        ),
        _base(draw, {"type": "TOOL_CALL_END", "toolCallId": call_id}),
    ]
    if draw(st.booleans()):
        result: Event = {
            "type": "TOOL_CALL_RESULT",
            "messageId": f"result-{n}",
            "toolCallId": call_id,
            "content": draw(TEXT),
        }
        if draw(st.booleans()):
            result["role"] = "tool"
        events.append(_base(draw, result))
    return events


@st.composite
def _reasoning(draw: st.DrawFn, n: int) -> list[Event]:
    span, message = f"span-{n}", f"thought-{n}"
    deltas = draw(st.lists(NON_EMPTY_TEXT, min_size=1, max_size=3))
    return [
        _base(draw, {"type": "REASONING_START", "messageId": span}),
        _base(draw, {"type": "REASONING_MESSAGE_START", "messageId": message, "role": "reasoning"}),
        *(
            _base(draw, {"type": "REASONING_MESSAGE_CONTENT", "messageId": message, "delta": d})
            for d in deltas
        ),
        _base(draw, {"type": "REASONING_MESSAGE_END", "messageId": message}),
        _base(draw, {"type": "REASONING_END", "messageId": span}),
    ]


@st.composite
def _step(draw: st.DrawFn, n: int) -> list[Event]:
    name = f"step-{n}-{draw(st.sampled_from(['plan', 'ausführen', '検索']))}"
    return [
        _base(draw, {"type": "STEP_STARTED", "stepName": name}),
        _base(draw, {"type": "STEP_FINISHED", "stepName": name}),
    ]


@st.composite
def _state(draw: st.DrawFn, n: int) -> list[Event]:
    if draw(st.booleans()):
        return [_base(draw, {"type": "STATE_SNAPSHOT", "snapshot": draw(JSON_VALUE)})]
    operation = draw(st.sampled_from(["add", "replace", "remove", "test", "move", "copy"]))
    patch: dict[str, Any] = {"op": operation, "path": draw(_POINTER)}
    if operation in ("add", "replace", "test"):
        patch["value"] = draw(JSON_VALUE)
    if operation in ("move", "copy"):
        patch["from"] = draw(_POINTER)
    return [_base(draw, {"type": "STATE_DELTA", "delta": [patch]})]


@st.composite
def _custom(draw: st.DrawFn, n: int) -> list[Event]:
    return [_base(draw, {"type": "CUSTOM", "name": draw(TEXT), "value": draw(JSON_VALUE)})]


_ITEMS = (_text_message, _tool_call, _reasoning, _step, _state, _custom)


def _interleave(draw: st.DrawFn, items: list[list[Event]]) -> list[Event]:
    """Merge the items' events in a random order that keeps each item's own order (the
    protocol lets messages, calls, spans and steps interleave freely)."""
    queues = [list(item) for item in items if item]
    out: list[Event] = []
    while queues:
        index = draw(st.integers(0, len(queues) - 1))
        out.append(queues[index].pop(0))
        if not queues[index]:
            queues.pop(index)
    return out


@st.composite
def _ending(draw: st.DrawFn, run_id: str, calls: list[str]) -> Event:
    kind = draw(st.sampled_from(["absent", "success", "pending", "interrupt", "error"]))
    if kind == "error":
        error: Event = {"type": "RUN_ERROR", "message": draw(TEXT)}
        if draw(st.booleans()):
            error["code"] = draw(st.sampled_from(["MODEL_ERROR", "ÉCHEC"]))
        return error
    finished: Event = {"type": "RUN_FINISHED", "threadId": THREAD_ID, "runId": run_id}
    if kind == "success":
        finished["outcome"] = {"type": "success"}
    elif kind == "pending" and calls:
        finished["outcome"] = {"type": "success", "pendingToolCallIds": calls[:1]}
    elif kind == "interrupt":
        interrupts = []
        for i in range(draw(st.integers(1, 2))):
            interrupt: Event = {"id": f"int-{run_id}-{i}", "reason": "input_required"}
            if calls and i == 0:
                interrupt.update(reason="tool_call", toolCallId=calls[0])
            if draw(st.booleans()):
                interrupt["message"] = draw(TEXT)
            interrupts.append(interrupt)
        finished["outcome"] = {"type": "interrupt", "interrupts": interrupts}
    return _base(draw, finished)


@st.composite
def valid_run(draw: st.DrawFn, run_id: str = "run-1", first_item: int = 0) -> list[Event]:
    """One well-formed run: RUN_STARTED, interleaved items, and a terminal event."""
    started: Event = {"type": "RUN_STARTED", "threadId": THREAD_ID, "runId": run_id}
    if draw(st.booleans()):
        started["protocolVersion"] = "1.0"
    kinds = draw(st.lists(st.sampled_from(_ITEMS), max_size=5))
    items = [draw(kind(first_item + i)) for i, kind in enumerate(kinds)]
    body = _interleave(draw, items)
    calls = [e["toolCallId"] for e in body if e["type"] == "TOOL_CALL_START"]
    return [_base(draw, started), *body, draw(_ending(run_id, calls))]


@st.composite
def valid_stream(draw: st.DrawFn, max_runs: int = 2) -> list[Event]:
    """One or more well-formed runs on one thread, back to back."""
    events: list[Event] = []
    for index in range(draw(st.integers(1, max_runs))):
        events += draw(valid_run(f"run-{index + 1}", first_item=index * 10))
    return events


# -- SSE encoding ---------------------------------------------------------------------------------

_FIELD_VALUE = st.text(
    alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\r\n"), max_size=8
)
#: Lines a producer or a proxy may add that carry no data: comments, id/event/retry, unknowns.
IGNORED_LINE = st.one_of(
    _FIELD_VALUE.map(lambda v: ":" + v),
    _FIELD_VALUE.map(lambda v: "id: " + v),
    _FIELD_VALUE.map(lambda v: "event: " + v),
    st.integers(0, 10_000).map(lambda n: f"retry: {n}"),
    _FIELD_VALUE.map(lambda v: "x-unknown-field: " + v),
    st.just("event"),
)


def payload(event: Event) -> str:
    """The compact JSON a producer puts in ``data`` (raw UTF-8, not ``\\u`` escapes)."""
    return json.dumps(event, ensure_ascii=False, separators=(",", ":"))


#: Values for the ignorable lines the framing adds (a comment holding ``data:`` included).
_LINE_VALUES = ("", "x", " lead", "é", "日本", "🙂", "data: {}", ":", "\x00", "\ufeff", "7")


def _ignored_line(rnd: random.Random) -> str:
    value = rnd.choice(_LINE_VALUES)
    return rnd.choice([":", "id: ", "event: ", "x-unknown-field: ", "retry: 1", "event"]) + (
        "" if rnd.random() < 0.3 else value
    )


def _frame(rnd: random.Random, event: Event) -> str:
    eol = rnd.choice(["\n", "\r\n", "\r"])
    prefix = rnd.choice(["data: ", "data:"])
    if rnd.random() < 0.25:
        # Several data lines, joined with LF by the reader: break only between JSON tokens.
        data_lines = json.dumps(event, ensure_ascii=False, indent=1).split("\n")
    else:
        data_lines = [payload(event)]
    lines = [prefix + line for line in data_lines]
    for _ in range(rnd.choice([0, 0, 1, 2])):
        lines.insert(rnd.randint(0, len(lines)), _ignored_line(rnd))
    text = "".join(line + eol for line in lines) + eol
    # Blocks without data between events (comments, a lone id) and extra blank lines.
    if rnd.random() < 0.2:
        text += _ignored_line(rnd) + eol + eol
    return text + eol * rnd.choice([0, 0, 1])


@st.composite
def sse_body(draw: st.DrawFn, events: Sequence[Event]) -> bytes:
    """``events`` as an SSE body in random framing (line endings, ``data:`` with or without
    the space, single or multi-line data, comments and id/event/retry lines), sometimes
    after a byte-order mark. The framing choices come from one drawn seed, which keeps
    generation cheap; the events themselves shrink as usual."""
    rnd = draw(st.randoms())
    bom = "\ufeff" if rnd.random() < 0.2 else ""
    return (bom + "".join(_frame(rnd, e) for e in events)).encode("utf-8")


@st.composite
def chunked(draw: st.DrawFn, body: bytes) -> list[bytes]:
    """``body`` split at arbitrary byte offsets (inside characters and line endings too)."""
    mode = draw(st.sampled_from(["cuts", "cuts", "fixed", "whole"]))
    if mode == "whole" or len(body) < 2:
        return [body]
    if mode == "fixed":
        size = draw(st.integers(1, 7))
        return [body[i : i + size] for i in range(0, len(body), size)]
    rnd = draw(st.randoms())
    points = sorted({rnd.randint(1, len(body) - 1) for _ in range(rnd.randint(1, 12))})
    return [body[a:b] for a, b in itertools.pairwise([0, *points, len(body)])]


async def aiter_chunks(chunks: Sequence[bytes]) -> AsyncIterator[bytes]:
    """Deliver ``chunks`` one at a time, yielding to the event loop between them."""
    for chunk in chunks:
        yield chunk


# -- mutations ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mutation:
    """Drop, duplicate or swap events of a valid event list (``apply`` returns a copy)."""

    kind: str
    index: int
    other: int = 0

    def apply(self, events: Sequence[Event]) -> list[Event]:
        out = [json.loads(json.dumps(e)) for e in events]  # deep copies
        if self.kind == "drop":
            del out[self.index]
        elif self.kind == "duplicate":
            out.insert(self.index, json.loads(json.dumps(out[self.index])))
        elif self.kind == "swap":
            out[self.index], out[self.other] = out[self.other], out[self.index]
        return out


@st.composite
def reorder_mutation(draw: st.DrawFn, events: Sequence[Event]) -> Mutation:
    """Drop, duplicate or swap events of ``events``."""
    kind = draw(st.sampled_from(["drop", "duplicate", "swap"]))
    index = draw(st.integers(0, len(events) - 1))
    other = draw(st.integers(0, len(events) - 1))
    return Mutation(kind, index, other)


#: Required fields whose value has a fixed JSON type, by event type.
TYPED_FIELDS: dict[str, tuple[str, ...]] = {
    "RUN_STARTED": ("threadId", "runId"),
    "RUN_FINISHED": ("threadId", "runId"),
    "RUN_ERROR": ("message",),
    "TEXT_MESSAGE_START": ("messageId",),
    "TEXT_MESSAGE_CONTENT": ("messageId", "delta"),
    "TEXT_MESSAGE_END": ("messageId",),
    "TOOL_CALL_START": ("toolCallId", "toolCallName"),
    "TOOL_CALL_ARGS": ("toolCallId", "delta"),
    "TOOL_CALL_END": ("toolCallId",),
    "TOOL_CALL_RESULT": ("messageId", "toolCallId"),
    "REASONING_START": ("messageId",),
    "REASONING_MESSAGE_START": ("messageId", "role"),
    "REASONING_MESSAGE_CONTENT": ("messageId", "delta"),
    "REASONING_MESSAGE_END": ("messageId",),
    "REASONING_END": ("messageId",),
    "STEP_STARTED": ("stepName",),
    "STEP_FINISHED": ("stepName",),
    "STATE_DELTA": ("delta",),
    "CUSTOM": ("name",),
}
#: Values of a JSON type other than the field's (strings for the array field, and so on).
WRONG_VALUES: st.SearchStrategy[Any] = st.one_of(
    st.integers(), st.booleans(), st.none(), st.just([1]), st.just({})
)
