"""Signed interrupt ids: how a stateless AG-UI server knows a resume answers what it asked.

Every interrupt the server emits carries, as its ``id``, a compact token that holds what the
server needs to check the answer and, when the client did not re-send the call, to rebuild it:
the thread, the tool call id, the tool name, the canonical arguments, the expiry, the kind
(an approval or a question), whether edits are allowed and, for a question, the question
and the answers given so far. An HMAC-SHA256 over all of it makes a forged or altered token
fail (DESIGN §4).

Format: ``v1.<base64url(JSON claims)>.<base64url(MAC)>``, no padding. Decoding is strict:
only the URL-safe alphabet, no padding, and the text must be the one spelling the bytes
re-encode to (a lenient decoder lets unused low bits of the last character, or characters
outside the alphabet, spell the same bytes several ways, and a store keyed on the text would
then take one approval for several). Every issued token carries a random nonce, so no two
interrupts share an id, even when everything else about them is equal.

**Audience.** A server signs under a per-audience subkey, ``HMAC(key, context || audience
id)``, and names the audience id (a 72-bit digest of its audience) in the claims (``au``):
a token another server issued under the same key verifies as authentic but is refused as
``TokenError("audience")``, and one whose ``au`` was altered no longer matches its MAC.

**Fixed size.** A token never lists the other interrupts of its pause: it carries a 128-bit
digest of the pause's slots (``p``) and their number (``pn``), so its size does not depend on
how many interrupts share the pause (see docs/reliability.md for the bound).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal

__all__ = [
    "InterruptClaims",
    "InterruptSigner",
    "TokenError",
    "audience_id",
    "canonical_json",
    "new_nonce",
    "pause_digest",
]

_VERSION = "v1"
_B64_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
#: Domain separation for the consumed-approvals store key (see ``InterruptSigner.fingerprint``).
_FINGERPRINT_CONTEXT = b"agui_chat consumed interrupt v1\x00"
#: Domain separation for the per-audience subkeys and the audience ids.
_AUDIENCE_KEY_CONTEXT = b"agui_chat audience key v1\x00"
_AUDIENCE_ID_CONTEXT = b"agui_chat audience id v1\x00"
_PAUSE_CONTEXT = b"agui_chat pause v1\x00"
_KEY_ID_CONTEXT = b"agui_chat signing key id v1\x00"
InterruptKind = Literal["approval", "question"]


def canonical_json(value: Any) -> str:
    """Sorted-key compact JSON: the one spelling of a value that is signed and compared."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


TokenProblem = Literal["unknown", "forged", "audience", "other_key"]


class TokenError(Exception):
    """A token is not one this server issued: ``reason`` is ``"unknown"`` (not a token of
    ours at all), ``"forged"`` (shaped like one, but the MAC does not match) or
    ``"audience"`` (authentic, but issued by another server sharing the key) or
    ``"other_key"`` (the MAC does not match, and the token names another signing key: it
    was issued before the server restarted with a new key, or its key changed)."""

    def __init__(self, reason: TokenProblem, kind: str | None = None) -> None:
        super().__init__(f"{reason} interrupt token")
        self.reason = reason
        self.kind = kind


@dataclass(frozen=True)
class InterruptClaims:
    """What an interrupt id vouches for.

    ``arguments`` are the arguments the call runs with. When the pause holds several
    interrupts, ``pause`` is the digest of all their slots (:func:`pause_digest`) and
    ``pause_size`` their number, so a resume that leaves one unanswered is refused. For a
    question, ``question`` holds its ``key``, ``message``, ``reason`` and
    ``response_schema``, and ``answers`` the answers the same call got to earlier questions
    (``[key, status, payload]``). ``audience`` is the id of the audience the token was
    issued for (set by the signer).
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
    pause: str | None = None
    pause_size: int = 1
    nonce: str | None = None  # random per issued interrupt: ids are unique (agui-wire §3.2)
    #: Tracing only (absent when off): the paused run's span (W3C traceparent), and when the
    #: request was made (epoch seconds), so the resumed run links to it and times the answer.
    traceparent: str | None = None
    requested_at: float | None = None
    audience: str | None = None

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
        if self.pause is not None:
            out["p"] = self.pause
            out["pn"] = self.pause_size
        if self.nonce is not None:
            out["u"] = self.nonce
        if self.traceparent is not None:
            out["tp"] = self.traceparent
        if self.requested_at is not None:
            out["at"] = self.requested_at
        if self.audience is not None:
            out["au"] = self.audience
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
            pause=data.get("p"),
            pause_size=int(data.get("pn", 1)),
            nonce=data.get("u"),
            traceparent=data.get("tp"),
            requested_at=data.get("at"),
            audience=data.get("au"),
        )


def pause_digest(slots: Iterable[tuple[str, str | None]]) -> str:
    """The digest of a pause's slots (in any order): 128 bits, unpadded base64url."""
    spelled = sorted(canonical_json(list(slot)) for slot in slots)
    digest = hashlib.sha256(_PAUSE_CONTEXT + canonical_json(spelled).encode("utf-8"))
    return _b64encode(digest.digest()[:16])


def audience_id(audience: str) -> str:
    """The short id a token names its audience by (72 bits, unpadded base64url)."""
    digest = hashlib.sha256(_AUDIENCE_ID_CONTEXT + audience.encode("utf-8")).digest()
    return _b64encode(digest[:9])


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
    pass it from configuration or the ``AGUI_CHAT_SIGNING_KEY`` environment variable).

    With an ``audience``, tokens are issued for it (under its subkey) and tokens of any other
    audience are refused (``TokenError("audience")``). Without one, the signer issues
    audience-less tokens and verifies tokens of any audience (for inspection and tests).
    """

    def __init__(self, key: bytes | str, *, audience: str | None = None) -> None:
        raw = key.encode("utf-8") if isinstance(key, str) else bytes(key)
        if len(raw) < 16:
            raise ValueError("the signing key must be at least 16 bytes long")
        self._key = raw
        self.audience = audience
        self.audience_id = audience_id(audience) if audience is not None else None
        self._own_key = self._subkey(self.audience_id)
        #: A short public name for the key (a digest, domain-separated; it reveals nothing
        #: a token's MAC does not already): tokens carry it, so that one signed under
        #: another key is told apart from one that was altered.
        self.key_id = _b64encode(hashlib.sha256(_KEY_ID_CONTEXT + raw).digest()[:6])

    @classmethod
    def ephemeral(cls, *, audience: str | None = None) -> InterruptSigner:
        """A signer with a random key (tokens die with the process)."""
        return cls(secrets.token_bytes(32), audience=audience)

    def _subkey(self, audience: str | None) -> bytes:
        if audience is None:
            return self._key
        message = _AUDIENCE_KEY_CONTEXT + audience.encode("utf-8")
        return hmac.new(self._key, message, hashlib.sha256).digest()

    def _mac(self, payload: str, key: bytes) -> bytes:
        message = f"{_VERSION}.{payload}".encode("ascii")
        return hmac.new(key, message, hashlib.sha256).digest()

    def sign(self, claims: InterruptClaims) -> str:
        """The token for ``claims``, issued for this signer's audience."""
        # "i" names the signing key (not a claim: it only tells a token issued under
        # another key apart from an altered one when the MAC fails).
        wire = {**claims._to_wire(), "i": self.key_id}
        if self.audience_id is not None:
            wire["au"] = self.audience_id
        payload = _b64encode(canonical_json(wire).encode("utf-8"))
        return f"{_VERSION}.{payload}.{_b64encode(self._mac(payload, self._own_key))}"

    def verify(self, token: str) -> InterruptClaims:
        """The claims of a token this signer issued; ``TokenError`` for anything else
        (including text that does not decode, or decodes to JSON nested too deeply to read,
        and an authentic token of another audience)."""
        payload, claims_bytes, given = _split(token)
        try:
            claims_json = json.loads(claims_bytes)
        except (ValueError, RecursionError):
            raise TokenError("unknown") from None
        kind = claims_json.get("k") if isinstance(claims_json, dict) else None
        if kind not in ("a", "q") or not isinstance(claims_json.get("t"), str):
            raise TokenError("unknown")
        named = claims_json.get("au")
        if named is not None and not isinstance(named, str):
            raise TokenError("unknown")
        key = self._own_key if named == self.audience_id else self._subkey(named)
        kind_name = "approval" if kind == "a" else "question"
        if not hmac.compare_digest(given, self._mac(payload, key)):
            signer = claims_json.get("i")
            other = isinstance(signer, str) and signer != self.key_id
            raise TokenError("other_key" if other else "forged", kind_name)
        if self.audience_id is not None and named != self.audience_id:
            raise TokenError("audience", kind_name)
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
