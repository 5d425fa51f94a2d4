"""Signed interrupt ids: how a stateless AG-UI server knows a resume answers what it asked.

Every interrupt the server emits carries, as its ``id``, a compact token that holds what the
server needs to check the answer and, when the client did not re-send the call, to rebuild it:
the thread, the tool call id, the tool name, the canonical arguments, the expiry, the kind
(an approval or a question), whether edits are allowed and, for a question, the question
and the answers given so far. An HMAC-SHA256 over all of it, under the server's key, makes
a forged or altered token fail (DESIGN §4).

Format: ``v1.<base64url(JSON claims)>.<base64url(MAC)>``, no padding. Decoding is strict:
only the URL-safe alphabet, no padding, and the text must be the one spelling the bytes
re-encode to (a lenient decoder lets unused low bits of the last character, or characters
outside the alphabet, spell the same bytes several ways, and a store keyed on the text would
then take one approval for several). Every issued token carries a random nonce, so no two
interrupts share an id, even when everything else about them is equal.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal

__all__ = [
    "InterruptClaims",
    "InterruptSigner",
    "TokenError",
    "canonical_json",
    "new_nonce",
]

_VERSION = "v1"
_B64_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
#: Domain separation for the consumed-approvals store key (see ``InterruptSigner.fingerprint``).
_FINGERPRINT_CONTEXT = b"agui_chat consumed interrupt v1\x00"
InterruptKind = Literal["approval", "question"]


def canonical_json(value: Any) -> str:
    """Sorted-key compact JSON: the one spelling of a value that is signed and compared."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class TokenError(Exception):
    """A token is not one this server issued: ``reason`` is ``"unknown"`` (not a token of
    ours at all) or ``"forged"`` (shaped like one, but the MAC does not match)."""

    def __init__(self, reason: Literal["unknown", "forged"], kind: str | None = None) -> None:
        super().__init__(f"{reason} interrupt token")
        self.reason = reason
        self.kind = kind


@dataclass(frozen=True)
class InterruptClaims:
    """What an interrupt id vouches for.

    ``arguments`` are the arguments the call runs with; ``siblings`` are the other
    interrupts of the same pause (as ``[call_id, question key or None]``), so a resume
    that leaves one unanswered is refused. For a question, ``question`` holds its ``key``,
    ``message``, ``reason`` and ``response_schema``, and ``answers`` the answers the same
    call got to earlier questions (``[key, status, payload]``).
    """

    kind: InterruptKind
    thread_id: str
    call_id: str | None
    tool_name: str | None
    arguments: dict[str, Any] | None
    expires_at: int | None = None  # epoch seconds
    allow_edits: bool = False
    question: dict[str, Any] | None = None
    answers: list[list[Any]] = field(default_factory=list)
    siblings: list[list[str | None]] = field(default_factory=list)
    nonce: str | None = None  # random per issued interrupt: ids are unique (agui-wire §3.2)
    #: Tracing only (absent when off): the paused run's span (W3C traceparent), and when the
    #: request was made (epoch seconds), so the resumed run links to it and times the answer.
    traceparent: str | None = None
    requested_at: float | None = None

    @property
    def slot(self) -> tuple[str, str | None]:
        """Which interrupt of a pause this is: the call id, and the question key if any."""
        key = (self.question or {}).get("key") if self.kind == "question" else None
        return (self.call_id or "", key)

    def is_expired(self, now: datetime | None = None) -> bool:
        """Whether the token is past its expiry (it can then only be cancelled)."""
        if self.expires_at is None:
            return False
        moment = now or datetime.now(timezone.utc)
        return self.expires_at <= moment.timestamp()

    def _to_wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"k": "a" if self.kind == "approval" else "q", "t": self.thread_id}
        if self.call_id is not None:
            out["c"] = self.call_id
        if self.tool_name is not None:
            out["n"] = self.tool_name
        if self.arguments is not None:
            out["a"] = self.arguments
        if self.expires_at is not None:
            out["e"] = self.expires_at
        if self.allow_edits:
            out["ed"] = 1
        if self.question is not None:
            out["q"] = self.question
        if self.answers:
            out["qa"] = self.answers
        if self.siblings:
            out["s"] = self.siblings
        if self.nonce is not None:
            out["u"] = self.nonce
        if self.traceparent is not None:
            out["tp"] = self.traceparent
        if self.requested_at is not None:
            out["at"] = self.requested_at
        return out

    @classmethod
    def _from_wire(cls, data: Mapping[str, Any]) -> InterruptClaims:
        kind: InterruptKind = "approval" if data["k"] == "a" else "question"
        return cls(
            kind=kind,
            thread_id=str(data["t"]),
            call_id=data.get("c"),
            tool_name=data.get("n"),
            arguments=data.get("a"),
            expires_at=data.get("e"),
            allow_edits=bool(data.get("ed")),
            question=data.get("q"),
            answers=list(data.get("qa", [])),
            siblings=list(data.get("s", [])),
            nonce=data.get("u"),
            traceparent=data.get("tp"),
            requested_at=data.get("at"),
        )


def new_nonce() -> str:
    """A fresh random nonce for one issued interrupt (96 bits)."""
    return secrets.token_urlsafe(12)


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64decode(text: str) -> bytes:
    """Strict unpadded base64url: ``ValueError`` unless ``text`` is the one spelling of its
    bytes (only the URL-safe alphabet, no padding, unused low bits of the last character
    zero), so two different texts never decode to the same bytes."""
    if not text or not _B64_ALPHABET.issuperset(text) or len(text) % 4 == 1:
        raise ValueError("not canonical unpadded base64url")
    data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if _b64encode(data) != text:
        raise ValueError("not canonical unpadded base64url")
    return data


def _split(token: object) -> tuple[str, bytes, bytes]:
    """The payload text, the claims bytes and the MAC bytes of a token; ``TokenError``
    ("unknown") if it is not shaped like one of ours."""
    parts = token.split(".") if isinstance(token, str) else []
    if len(parts) != 3 or parts[0] != _VERSION:
        raise TokenError("unknown")
    _, payload, mac = parts
    try:
        return payload, _b64decode(payload), _b64decode(mac)
    except ValueError:
        raise TokenError("unknown") from None


class InterruptSigner:
    """Issues and checks interrupt tokens under one secret key (keep it out of the code:
    pass it from configuration or the ``AGUI_CHAT_SIGNING_KEY`` environment variable)."""

    def __init__(self, key: bytes | str) -> None:
        raw = key.encode("utf-8") if isinstance(key, str) else bytes(key)
        if len(raw) < 16:
            raise ValueError("the signing key must be at least 16 bytes long")
        self._key = raw

    @classmethod
    def ephemeral(cls) -> InterruptSigner:
        """A signer with a random key (tokens die with the process)."""
        return cls(secrets.token_bytes(32))

    def _mac(self, payload: str) -> bytes:
        message = f"{_VERSION}.{payload}".encode("ascii")
        return hmac.new(self._key, message, hashlib.sha256).digest()

    def sign(self, claims: InterruptClaims) -> str:
        """The token for ``claims``."""
        payload = _b64encode(canonical_json(claims._to_wire()).encode("utf-8"))
        return f"{_VERSION}.{payload}.{_b64encode(self._mac(payload))}"

    def verify(self, token: str) -> InterruptClaims:
        """The claims of a token this signer issued; ``TokenError`` for anything else
        (including text that does not decode, or decodes to JSON nested too deeply to read)."""
        payload, claims_bytes, given = _split(token)
        authentic = hmac.compare_digest(given, self._mac(payload))
        try:
            claims_json = json.loads(claims_bytes)
        except (ValueError, RecursionError):
            raise TokenError("unknown") from None
        kind = claims_json.get("k") if isinstance(claims_json, dict) else None
        if kind not in ("a", "q") or not isinstance(claims_json.get("t"), str):
            raise TokenError("unknown")
        if not authentic:
            raise TokenError("forged", "approval" if kind == "a" else "question")
        try:
            return InterruptClaims._from_wire(claims_json)
        except (LookupError, TypeError, ValueError):  # pragma: no cover - we signed it
            raise TokenError("unknown") from None

    @staticmethod
    def fingerprint(token: str) -> str:
        """The key a consumed-approvals store records a token under: a digest of its decoded
        MAC, which the signed claims determine. The text is decoded strictly, so no other
        spelling of the same token exists to give another key (``TokenError`` if it does
        not decode)."""
        _, _, mac = _split(token)
        return hashlib.sha256(_FINGERPRINT_CONTEXT + mac).hexdigest()[:32]
