"""Signed interrupt ids: how a stateless AG-UI server knows a resume answers what it asked.

Every interrupt the server emits carries, as its ``id``, a compact token that holds what the
server needs to check the answer and, when the client did not re-send the call, to rebuild it:
the thread, the tool call id, the tool name, the canonical arguments, the expiry, the kind
(an approval or a question), whether edits are allowed and, for a question, the question
and the answers given so far. An HMAC-SHA256 over all of it, under the server's key, makes
a forged or altered token fail (DESIGN §4).

Format: ``v1.<base64url(JSON claims)>.<base64url(MAC)>``, no padding.
"""

from __future__ import annotations

import base64
import binascii
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
]

_VERSION = "v1"
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
        )


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


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
        """The claims of a token this signer issued; ``TokenError`` for anything else."""
        parts = token.split(".") if isinstance(token, str) else []
        if len(parts) != 3 or parts[0] != _VERSION:
            raise TokenError("unknown")
        _, payload, mac = parts
        try:
            claims_json = json.loads(_b64decode(payload))
            given = _b64decode(mac)
        except (binascii.Error, ValueError):
            raise TokenError("unknown") from None
        kind = claims_json.get("k") if isinstance(claims_json, dict) else None
        if kind not in ("a", "q") or not isinstance(claims_json.get("t"), str):
            raise TokenError("unknown")
        claimed_kind = "approval" if kind == "a" else "question"
        if not hmac.compare_digest(given, self._mac(payload)):
            raise TokenError("forged", claimed_kind)
        return InterruptClaims._from_wire(claims_json)

    @staticmethod
    def fingerprint(token: str) -> str:
        """A short, stable digest of a token: the key a consumed-approvals store uses."""
        return hashlib.sha256(token.encode("utf-8")).hexdigest()[:32]
