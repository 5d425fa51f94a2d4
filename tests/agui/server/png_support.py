"""Reading and comparing the PNG screenshots Chromium takes (8-bit RGB or RGBA, not
interlaced), with the standard library alone: the size, a text chunk a test wrote into it,
and the pixels, so a picture in docs/ can be checked against the page it shows."""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field

__all__ = ["Png", "with_text"]

_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@dataclass(frozen=True)
class Png:
    """A PNG's size, its ``iTXt`` texts by keyword, and its pixels as RGB bytes, row by row."""

    width: int
    height: int
    texts: dict[str, str]
    rgb: bytes = field(repr=False)

    @classmethod
    def read(cls, data: bytes) -> Png:
        chunks = _chunks(data)
        width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", chunks[0][1])
        if depth != 8 or color not in (2, 6) or interlace:
            raise ValueError(f"not an 8-bit RGB(A) PNG without interlace: {depth=} {color=}")
        texts = {}
        for kind, body in chunks:
            if kind == b"iTXt":
                keyword, _, rest = body.partition(b"\0")
                text = rest[2:].split(b"\0", 2)[2]  # no compression, language, translation
                texts[keyword.decode("latin-1")] = text.decode("utf-8")
        raw = zlib.decompress(b"".join(body for kind, body in chunks if kind == b"IDAT"))
        channels = 3 if color == 2 else 4
        pixels = _unfilter(raw, width * channels, height, channels)
        if channels == 4:
            pixels = bytes(b for i, b in enumerate(pixels) if i % 4 != 3)
        return cls(width, height, texts, pixels)

    def differing(self, other: Png, *, tolerance: int) -> float:
        """The share of pixels (0 to 1) where a channel differs by more than ``tolerance``
        (the same size expected)."""
        a, b = self.rgb, other.rgb
        off = sum(
            1
            for i in range(0, len(a), 3)
            if max(abs(a[i] - b[i]), abs(a[i + 1] - b[i + 1]), abs(a[i + 2] - b[i + 2])) > tolerance
        )
        return off / (self.width * self.height)


def with_text(data: bytes, keyword: str, text: str) -> bytes:
    """``data`` (a PNG) with an uncompressed ``iTXt`` chunk ``keyword`` = ``text`` before its
    end (any earlier one of that keyword left out)."""
    chunks = [
        (kind, body)
        for kind, body in _chunks(data)
        if not (kind == b"iTXt" and body.startswith(keyword.encode("latin-1") + b"\0"))
    ]
    itxt = keyword.encode("latin-1") + b"\0\0\0\0\0" + text.encode("utf-8")
    chunks.insert(len(chunks) - 1, (b"iTXt", itxt))
    out = [_SIGNATURE]
    for kind, body in chunks:
        crc = zlib.crc32(kind + body)
        out.append(struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc))
    return b"".join(out)


def _chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    if not data.startswith(_SIGNATURE):
        raise ValueError("not a PNG")
    chunks, at = [], len(_SIGNATURE)
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        chunks.append((data[at + 4 : at + 8], data[at + 8 : at + 8 + length]))
        at += 12 + length
    return chunks


def _unfilter(raw: bytes, stride: int, height: int, bpp: int) -> bytes:
    """The scanlines of ``raw`` with their PNG filters undone (each row: a filter byte, then
    ``stride`` bytes)."""
    out = bytearray()
    prior = bytearray(stride)
    for row in range(height):
        start = row * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        if kind == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 0xFF
        elif kind == 2:
            line = bytearray((x + y) & 0xFF for x, y in zip(line, prior, strict=True))
        elif kind == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prior[i]) >> 1)) & 0xFF
        elif kind == 4:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                up, corner = prior[i], prior[i - bpp] if i >= bpp else 0
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                best = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[i] = (line[i] + best) & 0xFF
        out += line
        prior = line
    return bytes(out)
