"""Properties of the SSE reader: any framing and any chunking of a stream decode to the same
payloads, arbitrary bytes never make it raise, and a cut never dispatches half an event."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st
from robustness_streams import PROPERTY, chunked, payload, sse_body, valid_stream

from agui_chat.agui.client._sse import SSEDecoder

#: Byte fragments that stress the reader: line ends, field names, BOM and UTF-8 pieces.
_FRAGMENTS = st.sampled_from(
    [
        b"data:",
        b"data: ",
        b"data",
        b":",
        b" ",
        b"\r",
        b"\n",
        b"\r\n",
        b"id: 7",
        b"retry: 10",
        b"event: x",
        b"{}",
        b'{"type":"RUN_STARTED"}',
        "é".encode(),
        "🙂".encode(),
        "🙂".encode()[:2],
        b"\xe2\x82",
        b"\xac",
        b"\xff",
        b"\xef\xbb\xbf",
        b"\x00",
    ]
)
GARBAGE_BYTES = st.lists(st.one_of(_FRAGMENTS, st.binary(max_size=4)), max_size=30).map(b"".join)


def decode(chunks: list[bytes]) -> tuple[list[str], bool]:
    """The payloads of ``chunks`` fed one by one, and what ``finish`` reports."""
    decoder = SSEDecoder()
    payloads: list[str] = []
    for chunk in chunks:
        payloads += decoder.feed(chunk)
    return payloads, decoder.finish()


@PROPERTY
@given(st.data())
def test_any_framing_and_chunking_yields_the_payloads_of_the_stream(data: st.DataObject) -> None:
    events = data.draw(valid_stream())
    chunks = data.draw(chunked(data.draw(sse_body(events))))
    payloads, pending = decode(chunks)
    assert [json.loads(p) for p in payloads] == events
    assert pending is False


@PROPERTY
@given(st.data())
def test_arbitrary_bytes_decode_the_same_in_any_chunking_and_never_raise(
    data: st.DataObject,
) -> None:
    body = data.draw(GARBAGE_BYTES)
    assert decode(data.draw(chunked(body))) == decode([body])


@PROPERTY
@given(st.data())
def test_a_cut_anywhere_dispatches_only_whole_events(data: st.DataObject) -> None:
    events = data.draw(valid_stream(max_runs=1))
    body = data.draw(sse_body(events))
    cut = data.draw(st.integers(0, len(body)))
    payloads, _ = decode(data.draw(chunked(body[:cut])))
    assert [json.loads(p) for p in payloads] == events[: len(payloads)]


@PROPERTY
@given(st.data(), st.sampled_from(["\n", "\r\n", "\r"]))
def test_a_cut_inside_the_last_events_data_is_reported_as_pending_at_finish(
    data: st.DataObject, eol: str
) -> None:
    events = data.draw(valid_stream(max_runs=1))
    head = data.draw(sse_body(events[:-1]))
    line = ("data: " + payload(events[-1])).encode()
    # Anywhere after the field name: inside the data, or after its line end but before
    # the blank line that would dispatch the event.
    cut = data.draw(st.integers(len(head) + len(b"data:"), len(head) + len(line) + len(eol)))
    body = head + line + (eol + eol).encode()
    payloads, pending = decode(data.draw(chunked(body[:cut])))
    assert [json.loads(p) for p in payloads] == events[:-1]
    assert pending is True
