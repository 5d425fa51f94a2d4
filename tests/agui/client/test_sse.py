"""SSEDecoder: WHATWG event-stream framing, incremental, as AG-UI needs it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agui_chat.agui.client._sse import SSEDecoder


def decode(*chunks: bytes | str) -> list[str]:
    decoder = SSEDecoder()
    out: list[str] = []
    for chunk in chunks:
        out.extend(decoder.feed(chunk))
    return out


def test_data_with_space_is_dispatched_without_the_space() -> None:
    assert decode(b'data: {"a":1}\n\n') == ['{"a":1}']


def test_data_without_space_is_dispatched_whole() -> None:
    assert decode(b'data:{"a":1}\n\n') == ['{"a":1}']


def test_only_one_leading_space_is_removed() -> None:
    assert decode(b"data:  x\n\n") == [" x"]


def test_multi_line_data_joins_with_newline() -> None:
    assert decode(b"data: one\ndata: two\n\n") == ["one\ntwo"]


def test_several_events_in_one_chunk_come_out_in_order() -> None:
    assert decode(b"data: 1\n\ndata: 2\n\ndata: 3\n\n") == ["1", "2", "3"]


def test_crlf_line_endings_frame_events() -> None:
    assert decode(b"data: a\r\n\r\ndata: b\r\n\r\n") == ["a", "b"]


def test_cr_line_endings_frame_events() -> None:
    assert decode(b"data: a\r\rdata: b\r\r") == ["a", "b"]


def test_cr_at_chunk_end_and_lf_at_next_start_are_one_line_end() -> None:
    # If the split CRLF counted as two line ends, "data: b" would be glued to "a".
    assert decode(b"data: a\r", b"\ndata: b\r\n\r\n") == ["a\nb"]


def test_cr_at_chunk_end_followed_by_cr_lf_is_a_blank_line() -> None:
    assert decode(b"data: a\r", b"\r\n") == ["a"]


def test_comment_lines_are_ignored() -> None:
    assert decode(b": keep-alive\n\ndata: x\n: inside\n\n") == ["x"]


def test_event_id_and_retry_fields_are_ignored() -> None:
    assert decode(b"event: agui\nid: 7\nretry: 100\ndata: x\n\n") == ["x"]


def test_an_event_without_data_is_not_dispatched() -> None:
    assert decode(b"event: ping\nid: 3\n\n") == []


def test_a_bare_data_field_dispatches_an_empty_string() -> None:
    assert decode(b"data\n\n") == [""]


def test_unknown_fields_are_ignored() -> None:
    assert decode(b"foo: bar\ndata: x\n\n") == ["x"]


def test_a_bom_at_the_start_of_the_stream_is_stripped() -> None:
    assert decode(b"\xef\xbb\xbfdata: x\n\n") == ["x"]


def test_a_bom_split_across_chunks_is_stripped() -> None:
    assert decode(b"\xef", b"\xbb", b"\xbfdata: x\n\n") == ["x"]


def test_a_bom_later_in_the_stream_is_kept() -> None:
    assert decode(b"data: a\n\n", "\ufeffdata: b\n\n") == ["a"]


def test_multibyte_character_split_across_chunks_is_decoded() -> None:
    body = 'data: {"d":"héllo €"}\n\n'.encode()
    split = body.index("€".encode()) + 1
    assert decode(body[:split], body[split:]) == ['{"d":"héllo €"}']


def test_invalid_utf8_is_replaced_not_fatal() -> None:
    assert decode(b"data: \xff\n\n") == ["\ufffd"]


def test_str_chunks_are_accepted() -> None:
    assert decode("data: x\n", "\n") == ["x"]


def test_blank_line_split_across_chunks_completes_the_event() -> None:
    assert decode(b"data: x\n", b"\n") == ["x"]


def test_extra_blank_lines_between_events_dispatch_nothing() -> None:
    assert decode(b"data: a\n\n\n\n\ndata: b\n\n") == ["a", "b"]


def test_a_large_event_in_many_small_chunks_is_reassembled() -> None:
    payload = "x" * 10_000
    body = f"data: {payload}\n\n".encode()
    chunks = [body[i : i + 7] for i in range(0, len(body), 7)]
    assert decode(*chunks) == [payload]


def test_finish_reports_an_event_left_without_its_blank_line() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\n\ndata: b\n") == ["a"]
    assert decoder.finish() is True


def test_finish_reports_a_partial_line() -> None:
    decoder = SSEDecoder()
    decoder.feed(b'data: {"type":"RUN_FIN')
    assert decoder.finish() is True


def test_finish_reports_an_incomplete_utf8_sequence() -> None:
    decoder = SSEDecoder()
    decoder.feed(b"data: a\n\n\xe2\x82")
    assert decoder.finish() is True


def test_finish_is_clean_after_complete_events() -> None:
    decoder = SSEDecoder()
    decoder.feed(b"data: a\n\n\n")
    assert decoder.finish() is False


def test_finish_ignores_a_trailing_comment_line() -> None:
    decoder = SSEDecoder()
    decoder.feed(b"data: a\n\n: bye\n")
    assert decoder.finish() is False


@given(
    payloads=st.lists(
        st.text(alphabet=st.characters(blacklist_characters="\r\n", blacklist_categories=("Cs",))),
        max_size=5,
    ),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=8),
    ending=st.sampled_from(["\n", "\r\n", "\r"]),
)
def test_any_chunking_yields_the_same_payloads(
    payloads: list[str], cuts: list[int], ending: str
) -> None:
    body = "".join(f"data:{p}{ending}{ending}" for p in payloads).encode()
    points = sorted({min(c, len(body)) for c in cuts})
    chunks = [body[a:b] for a, b in zip([0, *points], [*points, len(body)], strict=True)]
    expected = [p[1:] if p.startswith(" ") else p for p in payloads]
    assert decode(*chunks) == expected
