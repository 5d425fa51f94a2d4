"""Server-sent events framing: bytes in, each event's ``data`` out (``event``, ``id``,
``retry`` and comments ignored). Ours, not ``httpx-sse``: AG-UI needs a CR and LF split over
two chunks read as one line end, UTF-8 split anywhere, and a hot path for whole frames."""

from __future__ import annotations

import codecs

_BOM = "\ufeff"


class SSEDecoder:
    """Incremental WHATWG SSE decoder: each :meth:`feed` of a chunk (``bytes`` or ``str``,
    split anywhere) returns the ``data`` of the events it completes. Invalid UTF-8 becomes
    U+FFFD, as the SSE specification prescribes."""

    __slots__ = ("_at_start", "_parts", "_skip_lf", "_utf8")

    def __init__(self) -> None:
        self._utf8 = codecs.getincrementaldecoder("utf-8")("replace")
        # Text after the last event boundary, LF-normalised, kept as pieces so that a large
        # event arriving in many small chunks is joined once rather than once per chunk.
        self._parts: list[str] = []
        self._skip_lf = False
        self._at_start = True

    def feed(self, chunk: bytes | str) -> list[str]:
        text = chunk if isinstance(chunk, str) else self._utf8.decode(chunk)
        if not text:
            return []
        if self._skip_lf or self._at_start:  # never both: the first text clears _at_start
            # A BOM may open the stream; after a chunk that ended in CR, an LF here belongs to
            # that same line end.
            skipped = "\n" if self._skip_lf else _BOM
            self._skip_lf = self._at_start = False
            if text[0] == skipped:
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
        """End of stream: whether it ended inside an event or a line. Such an event is
        discarded, as the SSE specification says; for AG-UI it is evidence of truncation."""
        rest = self._utf8.decode(b"", final=True)
        text = "".join(self._parts) + rest
        self._parts.clear()
        self._skip_lf = False
        if not text.endswith("\n"):
            return bool(text)
        return _block_data(text.strip("\n")) is not None


def _block_data(block: str) -> str | None:
    """Interpret one event block (lines between blank lines); return its data, if any."""
    data: list[str] = []
    for line in block.split("\n"):  # a comment (":...") or blank line has the name ""
        name, _, value = line.partition(":")
        if name == "data":
            data.append(value[1:] if value[:1] == " " else value)
    return "\n".join(data) if data else None
