"""Properties of the whole incoming path (SSE reader → event pipeline → verifier, and the
real ``AGUIChatClient`` over ``httpx.MockTransport``): a valid stream in any framing and
chunking yields exactly its events; a mutated one yields its events or one of our typed
errors (``ProtocolError``, ``TruncatedStreamError``), never another exception, never a hang,
and never a success for a stream cut short."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx
from hypothesis import given
from hypothesis import strategies as st
from robustness_streams import (
    IGNORED_LINE,
    PROPERTY,
    THREAD_ID,
    TYPED_FIELDS,
    WRONG_VALUES,
    Event,
    aiter_chunks,
    chunked,
    payload,
    reorder_mutation,
    sse_body,
    valid_run,
    valid_stream,
)

from agui_chat import ChatOptions, ProtocolError, TruncatedStreamError
from agui_chat.agui import AGUIChatClient
from agui_chat.agui.client._pipeline import AGUIEventPipeline
from agui_chat.agui.client._sse import SSEDecoder

#: No stream here needs more than a fraction of a second; hitting this is a hang.
HANG = 10.0
TERMINAL = ("RUN_FINISHED", "RUN_ERROR")


async def _read(chunks: Sequence[bytes]) -> list[Event]:
    pipeline = AGUIEventPipeline(thread_id=THREAD_ID)
    events: list[Event] = []
    decoder = SSEDecoder()
    async for chunk in aiter_chunks(chunks):
        for data in decoder.feed(chunk):
            events += pipeline.feed(data)
    pipeline.finish()
    return events


def read(chunks: Sequence[bytes]) -> list[Event] | ProtocolError:
    """The events the pipeline delivers for ``chunks``, or the typed error it raised.

    Any other exception escapes and fails the test; so does taking longer than ``HANG``.
    """
    try:
        return asyncio.run(asyncio.wait_for(_read(chunks), HANG))
    except ProtocolError as exc:  # TruncatedStreamError is a ProtocolError
        return exc


def body_of(events: Sequence[Event]) -> bytes:
    """The plain encoding: one ``data:`` line of compact JSON per event, LF framing."""
    return "".join(f"data: {payload(e)}\n\n" for e in events).encode()


# -- valid streams ----------------------------------------------------------------------------


@PROPERTY
@given(st.data())
def test_a_valid_stream_in_any_framing_and_chunking_yields_exactly_its_events(
    data: st.DataObject,
) -> None:
    events = data.draw(valid_stream())
    expected = json.loads(json.dumps(events))
    chunks = data.draw(chunked(data.draw(sse_body(events))))
    assert read(chunks) == expected
    assert read([body_of(events)]) == expected  # the unchunked, plainly framed run


# -- mutations --------------------------------------------------------------------------------


@PROPERTY
@given(st.data())
def test_a_dropped_duplicated_or_swapped_event_gives_its_events_or_a_protocol_error(
    data: st.DataObject,
) -> None:
    events = data.draw(valid_stream())
    mutated = data.draw(reorder_mutation(events)).apply(events)
    expected = json.loads(json.dumps(mutated))
    result = read(data.draw(chunked(data.draw(sse_body(mutated)))))
    if mutated and mutated[-1]["type"] not in TERMINAL:
        assert isinstance(result, ProtocolError), "a stream ending inside a run succeeded"
    else:
        assert isinstance(result, ProtocolError) or result == expected


@PROPERTY
@given(st.data())
def test_a_stream_cut_at_any_byte_is_truncated_never_a_success(data: st.DataObject) -> None:
    events = data.draw(valid_run())
    body = data.draw(sse_body(events))
    cut = data.draw(st.integers(0, len(body) - 1))
    result = read(data.draw(chunked(body[:cut])))
    if isinstance(result, list):
        # Only a cut in the framing after the last event (its trailing blank lines or
        # comments) leaves the whole run.
        assert result == json.loads(json.dumps(events))
    else:
        assert type(result) is TruncatedStreamError


@PROPERTY
@given(st.data())
def test_a_field_of_the_wrong_type_is_a_protocol_error_naming_it(data: st.DataObject) -> None:
    events = data.draw(valid_stream())
    candidates = [i for i, e in enumerate(events) if e["type"] in TYPED_FIELDS]
    index = data.draw(st.sampled_from(candidates))
    field = data.draw(st.sampled_from(TYPED_FIELDS[events[index]["type"]]))
    corrupted = [dict(e) for e in events]
    corrupted[index][field] = data.draw(WRONG_VALUES)
    result = read(data.draw(chunked(data.draw(sse_body(corrupted)))))
    assert type(result) is ProtocolError
    assert f"/{field}" in str(result)


#: Whole lines of rubbish: ignorable fields, comments holding invalid UTF-8, data lines of
#: random text, blank lines.
_GARBAGE_LINE = st.one_of(
    IGNORED_LINE.map(str.encode),
    st.binary(max_size=12).map(lambda b: b":" + b.replace(b"\r", b"").replace(b"\n", b"")),
    st.text(max_size=12).map(lambda t: ("data: " + t).encode("utf-8", "replace")),
    st.just(b""),
)


@PROPERTY
@given(st.data())
def test_garbage_lines_give_the_events_or_a_protocol_error(data: st.DataObject) -> None:
    events = data.draw(valid_stream())
    frames = [body_of([e]) for e in events]
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(frames)))
        line = data.draw(_GARBAGE_LINE).replace(b"\r", b"").replace(b"\n", b"")
        frames.insert(at, line + data.draw(st.sampled_from([b"\n", b"\n\n", b"\r\n\r\n"])))
    result = read(data.draw(chunked(b"".join(frames))))
    assert isinstance(result, ProtocolError) or result == json.loads(json.dumps(events))


# -- through AGUIChatClient -------------------------------------------------------------------


class _Chunks(httpx.AsyncByteStream):
    def __init__(self, chunks: Sequence[bytes]) -> None:
        self.chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk


def _client(chunks: Sequence[bytes]) -> AGUIChatClient:
    def respond(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, headers={"content-type": "text/event-stream"}, stream=_Chunks(chunks)
        )

    http = httpx.AsyncClient(transport=httpx.MockTransport(respond))
    return AGUIChatClient(
        "http://agent.test/", http_client=http, max_retries=0, raise_on_run_error=False
    )


async def _through_client(chunks: Sequence[bytes]) -> list[Any]:
    client = _client(chunks)
    try:
        options = ChatOptions(conversation_id=THREAD_ID)
        stream = client.get_streaming_response("hi", options)
        return [update.raw_representation async for update in stream]
    finally:
        await client.http_client.aclose()


def through_client(chunks: Sequence[bytes]) -> list[Any] | ProtocolError:
    try:
        return asyncio.run(asyncio.wait_for(_through_client(chunks), HANG))
    except ProtocolError as exc:
        return exc


@PROPERTY
@given(st.data())
def test_the_client_yields_one_update_per_event_in_any_framing_and_chunking(
    data: st.DataObject,
) -> None:
    events = data.draw(valid_stream())
    chunks = data.draw(chunked(data.draw(sse_body(events))))
    assert through_client(chunks) == json.loads(json.dumps(events))


@PROPERTY
@given(st.data())
def test_the_client_never_reports_success_for_a_body_cut_short(data: st.DataObject) -> None:
    events = data.draw(valid_run())
    body = data.draw(sse_body(events))
    cut = data.draw(st.integers(0, len(body) - 1))
    result = through_client(data.draw(chunked(body[:cut])))
    if isinstance(result, list):
        assert result == json.loads(json.dumps(events))
    else:
        assert type(result) is TruncatedStreamError
