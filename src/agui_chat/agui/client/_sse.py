"""Server-sent events framing: bytes in, each event's ``data`` string out.

An incremental decoder for the WHATWG event-stream format, written here rather than taken
from ``httpx-sse`` because AG-UI needs exact control over two things that library leaves
loose (a CR at the end of one chunk followed by an LF at the start of the next is one line
end; a chunk may split a multi-byte UTF-8 character) and because it sits on the hot path:
a chunk holding whole ``data: ...\\n\\n`` frames is handled without splitting it into lines.

Only ``data`` matters to AG-UI: ``event``, ``id``, ``retry`` and comment lines are read and
ignored, as the transport binding requires. An event that is not closed by a blank line
before the stream ends is not dispatched (per the SSE specification); :meth:`SSEDecoder.finish`
reports it, because for AG-UI it means the stream was cut short.
"""

from __future__ import annotations

import codecs
from collections.abc import AsyncIterable, AsyncIterator

__all__ = ["SSEDecoder", "aiter_sse_data"]

_BOM = "\ufeff"


class SSEDecoder:
    """Incremental WHATWG SSE decoder that yields the ``data`` of each complete event.

    Feed it chunks as they arrive (``bytes`` or already-decoded ``str``, split anywhere);
    each call returns the data payloads of the events completed by that chunk, in order.
    Invalid UTF-8 is replaced with U+FFFD, as the SSE specification prescribes.
    """

    __slots__ = ("_at_start", "_parts", "_skip_lf", "_utf8", "pending_at_eof")

    def __init__(self) -> None:
        self._utf8 = codecs.getincrementaldecoder("utf-8")("replace")
        # Text after the last event boundary, LF-normalised, kept as pieces so that a large
        # event arriving in many small chunks is joined once rather than once per chunk.
        self._parts: list[str] = []
        self._skip_lf = False
        self._at_start = True
        #: Set by :meth:`finish`: whether an undispatched event or partial line was left.
        self.pending_at_eof = False

    def feed(self, chunk: bytes | str) -> list[str]:
        """Decode one chunk and return the ``data`` of every event it completes."""
        text = chunk if isinstance(chunk, str) else self._utf8.decode(chunk)
        if not text:
            return []
        if self._skip_lf:
            # The previous chunk ended in CR; an LF here belongs to that same line end.
            self._skip_lf = False
            if text[0] == "\n":
                text = text[1:]
                if not text:
                    return []
        if self._at_start:
            self._at_start = False
            if text[0] == _BOM:
                text = text[1:]
                if not text:
                    return []
        if "\r" in text:
            self._skip_lf = text[-1] == "\r"
            text = text.replace("\r\n", "\n").replace("\r", "\n")

        parts = self._parts
        if parts:
            straddles = text[0] == "\n" and parts[-1][-1] == "\n"
            parts.append(text)
            if not straddles and "\n\n" not in text:
                return []
            text = "".join(parts)
            parts.clear()
        elif "\n\n" not in text:
            parts.append(text)
            return []

        blocks = text.split("\n\n")
        tail = blocks.pop()
        if tail:
            parts.append(tail)
        out: list[str] = []
        for block in blocks:
            if block.startswith("data: ") and "\n" not in block:
                out.append(block[6:])
            elif block:
                data = _block_data(block)
                if data is not None:
                    out.append(data)
        return out

    def finish(self) -> bool:
        """Mark the end of the stream; return whether anything was left undispatched.

        ``True`` means the stream ended inside an event (data lines with no closing blank
        line) or inside a line. Such an event is discarded, as the SSE specification says;
        for AG-UI it is evidence of truncation. The result is also kept in
        :attr:`pending_at_eof`.
        """
        rest = self._utf8.decode(b"", final=True)
        text = "".join(self._parts) + rest
        self._parts.clear()
        self._skip_lf = False
        if not text:
            pending = False
        elif not text.endswith("\n"):
            pending = True
        else:
            pending = _block_data(text.strip("\n")) is not None
        self.pending_at_eof = pending
        return pending


def _block_data(block: str) -> str | None:
    """Interpret one event block (lines between blank lines); return its data, if any."""
    data: list[str] | None = None
    for line in block.split("\n"):
        if not line or line[0] == ":":
            continue
        colon = line.find(":")
        if colon < 0:
            name, value = line, ""
        else:
            name, value = line[:colon], line[colon + 1 :]
            if value[:1] == " ":
                value = value[1:]
        if name == "data":
            if data is None:
                data = [value]
            else:
                data.append(value)
    return None if data is None else "\n".join(data)


async def aiter_sse_data(
    byte_iter: AsyncIterable[bytes] | AsyncIterable[str],
    decoder: SSEDecoder | None = None,
) -> AsyncIterator[str]:
    """Yield the ``data`` of each SSE event read from an async iterable of chunks.

    Pass your own ``decoder`` to learn afterwards, from ``decoder.pending_at_eof``, whether
    the body ended inside an event.
    """
    dec = SSEDecoder() if decoder is None else decoder
    async for chunk in byte_iter:
        for data in dec.feed(chunk):
            yield data
    dec.finish()
