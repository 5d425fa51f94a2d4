"""Signed interrupt ids: how a stateless AG-UI server knows a resume answers what it asked.

A token, ``v1.<base64url(JSON claims)>.<base64url(HMAC-SHA256)>`` (no padding), carries
what the server needs to check the answer and rebuild the call (DESIGN §4). Decoding is
strict (one spelling per token, so a store keyed on it cannot take one approval twice);
every token carries a random nonce (ids are unique). Tokens are signed under a
per-audience subkey and name their audience id (``au``), so another server sharing the
key refuses them; a token commits to its pause by one digest, so its size does not grow
with the pause.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, Literal

from ..._exceptions import ConfigurationError

_VERSION = "v1"
_B64_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
#: Domain separation for the consumed-approvals store key (see ``InterruptSigner.fingerprint``).
_FINGERPRINT_CONTEXT = b"agui_chat consumed interrupt v1\x00"
#: Domain separation for the per-audience subkeys and the audience ids.
_AUDIENCE_KEY_CONTEXT = b"agui_chat audience key v1\x00"
_AUDIENCE_ID_CONTEXT = b"agui_chat audience id v1\x00"
_PAUSE_CONTEXT = b"agui_chat pause v1\x00"
_KEY_ID_CONTEXT = b"agui_chat signing key id v1\x00"
_RESULT_CONTEXT = b"agui_chat tool result v1\x00"
_ISSUED_CONTEXT = b"agui_chat issued tool result v1\x00"
_ECHO_CONTEXT = b"agui_chat answer echo v1\x00"
#: How the ``messageId`` of a ``TOOL_CALL_RESULT`` this server wrote begins (a seal over the
#: thread, the call id and the content, under the audience's key).
RESULT_ID_PREFIX = "r1."
InterruptKind = Literal["approval", "question"]
#: How to make a signing key (32 random bytes as 64 hex characters), as every message that
#: asks for one says it.
MAKE_A_KEY = "python -c 'import secrets; print(secrets.token_hex(32))'"


def canonical_json(value: Any) -> str:
    """Sorted-key compact JSON: the one spelling of a value that is signed and compared."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


TokenProblem = Literal["unknown", "forged", "audience", "other_key"]


class TokenError(Exception):
    """A token is not one this server issued: ``reason`` is ``"unknown"`` (not shaped like
    ours), ``"forged"`` (the MAC does not match), ``"other_key"`` (nor does it, and the token
    names another signing key) or ``"audience"`` (authentic, for another audience)."""

    def __init__(self, reason: TokenProblem, kind: str | None = None) -> None:
        super().__init__(f"{reason} interrupt token")
        self.reason = reason
        self.kind = kind


@dataclass(frozen=True)
class InterruptClaims:
    """What an interrupt id vouches for.

    ``pause`` is the digest of the slots of a pause of several interrupts
    (:func:`pause_digest`) and ``pause_size`` their number. A question's ``question`` holds
    its ``key``, ``message``, ``reason`` and ``schema``; ``answers`` the answers the same call
    got to earlier questions (``[key, status, payload, message, schema]``). ``traceparent``
    and ``requested_at`` are set only when tracing is on. ``store_epoch`` is the approval
    store's epoch when the interrupt was issued (``None``: it keeps none, or could not be
    reached); ``issued_at`` (whole epoch seconds) is set instead when it was not known, so a
    claim can tell whether the store's records go back to the interrupt (``Claims``).
    ``requester`` is who made the request that made the call (``Principal.to_dict()``; four
    eyes compares the answerer with it). Each claim travels in a token under its short
    ``wire`` name (the kind under ``k``).
    """

    kind: InterruptKind
    thread_id: str = field(metadata={"wire": "t"})
    call_id: str | None = field(metadata={"wire": "c"})
    tool_name: str | None = field(metadata={"wire": "n"})
    arguments: dict[str, Any] | None = field(metadata={"wire": "a"})
    expires_at: int | None = field(default=None, metadata={"wire": "e"})  # epoch seconds
    allow_edits: bool = field(default=False, metadata={"wire": "ed"})
    question: dict[str, Any] | None = field(default=None, metadata={"wire": "q"})
    answers: list[list[Any]] = field(default_factory=list, metadata={"wire": "qa"})
    pause: str | None = field(default=None, metadata={"wire": "p"})
    pause_size: int = field(default=1, metadata={"wire": "pn"})
    nonce: str | None = field(default=None, metadata={"wire": "u"})
    traceparent: str | None = field(default=None, metadata={"wire": "tp"})
    requested_at: float | None = field(default=None, metadata={"wire": "at"})
    audience: str | None = field(default=None, metadata={"wire": "au"})
    store_epoch: str | None = field(default=None, metadata={"wire": "se"})
    issued_at: int | None = field(default=None, metadata={"wire": "ia"})  # epoch seconds
    requester: dict[str, Any] | None = field(default=None, metadata={"wire": "rq"})

    @property
    def slot(self) -> tuple[str, str | None]:
        """Which interrupt of its pause this is: the call id and the question key."""
        key = (self.question or {}).get("key") if self.kind == "question" else None
        return (self.call_id or "", key)

    def _to_wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"k": self.kind[0]}
        for f in fields(self)[1:]:
            value = getattr(self, f.name)
            default = f.default_factory() if f.default_factory is not MISSING else f.default
            if value is not None and value != default:
                out[f.metadata["wire"]] = 1 if value is True else value
        return out

    @classmethod
    def _from_wire(cls, data: Mapping[str, Any]) -> InterruptClaims:
        wire = {f.metadata["wire"]: f.name for f in fields(cls)[1:]}
        values = {name: data[key] for key, name in wire.items() if key in data}
        kind: InterruptKind = "approval" if data["k"] == "a" else "question"
        values.update(allow_edits=bool(data.get("ed")), pause_size=int(data.get("pn", 1)))
        return cls(kind, **{"call_id": None, "tool_name": None, "arguments": None, **values})


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
    bytes, so two different texts never decode to the same bytes."""
    if not text or not _B64_ALPHABET.issuperset(text) or len(text) % 4 == 1:
        raise ValueError("not canonical unpadded base64url")
    data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if _b64encode(data) != text:
        raise ValueError("not canonical unpadded base64url")
    return data


def _split(token: object) -> tuple[str, bytes, bytes]:
    """The payload text, claims bytes and MAC bytes of a token (``TokenError("unknown")``)."""
    parts = token.split(".") if isinstance(token, str) else []
    if len(parts) != 3 or parts[0] != _VERSION:
        raise TokenError("unknown")
    _, payload, mac = parts
    try:
        return payload, _b64decode(payload), _b64decode(mac)
    except ValueError:
        raise TokenError("unknown") from None


class InterruptSigner:
    """Issues and checks interrupt tokens under one secret key (at least 16 bytes, else
    ``ConfigurationError``). With an ``audience``, tokens are issued for it and those of any other
    audience refused; without one, tokens of any audience verify (inspection, tests)."""

    def __init__(self, key: bytes | str, *, audience: str | None = None) -> None:
        raw = key.encode("utf-8") if isinstance(key, str) else bytes(key)
        if len(raw) < 16:
            raise ConfigurationError(
                f"the signing key must be at least 16 bytes, not {len(raw)}; make one with "
                f"{MAKE_A_KEY}"
            )
        self._key = raw
        self.audience = audience
        self.audience_id = audience_id(audience) if audience is not None else None
        self._own_key = self._subkey(self.audience_id)
        #: A public digest of the key, carried by tokens (``i``, not a claim) to tell one
        #: signed under another key apart from an altered one.
        self.key_id = _b64encode(hashlib.sha256(_KEY_ID_CONTEXT + raw).digest()[:6])

    @classmethod
    def ephemeral(cls, *, audience: str | None = None) -> InterruptSigner:
        """A signer with a random key (tokens die with the process)."""
        return cls(secrets.token_bytes(32), audience=audience)

    def with_audience(self, audience: str) -> InterruptSigner:
        """A signer under the same key for another audience."""
        return InterruptSigner(self._key, audience=audience)

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
        wire = {**claims._to_wire(), "i": self.key_id}
        if self.audience_id is not None:
            wire["au"] = self.audience_id
        payload = _b64encode(canonical_json(wire).encode("utf-8"))
        return f"{_VERSION}.{payload}.{_b64encode(self._mac(payload, self._own_key))}"

    def verify(self, token: str) -> InterruptClaims:
        """The claims of a token this signer issued; ``TokenError`` for anything else."""
        return self.open(token)[0]

    def open(self, token: str) -> tuple[InterruptClaims, str]:
        """The claims of a token this signer issued and its :meth:`fingerprint`, from one
        decoding; ``TokenError`` for anything else."""
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
            return InterruptClaims._from_wire(claims_json), _fingerprint(given)
        except (LookupError, TypeError, ValueError):  # pragma: no cover - we signed it
            raise TokenError("unknown") from None

    def result_id(self, thread_id: str, call_id: str, content: str) -> str:
        """The ``messageId`` of a tool result this server emits: it seals the result to its
        thread and call, so a result a client wrote instead is told apart (docs/interop.md)."""
        digest = hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest()
        message = _RESULT_CONTEXT + canonical_json([thread_id, call_id, digest]).encode("utf-8")
        mac = hmac.new(self._own_key, message, hashlib.sha256).digest()[:18]
        return RESULT_ID_PREFIX + _b64encode(mac)

    def is_result_id(
        self, message_id: str | None, thread_id: str, call_id: str, content: str
    ) -> bool:
        """Whether ``message_id`` is the seal :meth:`result_id` gives this result."""
        if not isinstance(message_id, str) or not message_id.startswith(RESULT_ID_PREFIX):
            return False
        return hmac.compare_digest(message_id, self.result_id(thread_id, call_id, content))

    def issued_result_key(self, thread_id: str, call_id: str, content: str) -> str:
        """The key an approval store remembers a result this server issued under (compatibility
        rule ``agent-framework-unsealed-results``): a digest of its seal, so only this
        server's key and audience, in this thread, for this call and content, find it."""
        seal = self.result_id(thread_id, call_id, content)
        return hashlib.sha256(_ISSUED_CONTEXT + seal.encode("ascii")).hexdigest()[:32]

    def echo_key(self, thread_id: str, call_id: str, echo: str) -> str:
        """The key an approval store keeps a call's result under for the text a client wrote
        for that call beside its verified answer (compatibility rule
        ``copilotkit-resume-echo``): a digest of the text's seal, so only this server's key
        and audience, in this thread, for this call and exactly this text, find it."""
        seal = self.result_id(thread_id, call_id, echo)
        return hashlib.sha256(_ECHO_CONTEXT + seal.encode("ascii")).hexdigest()[:32]

    @staticmethod
    def fingerprint(token: str) -> str:
        """The key a consumed-approvals store records a token under: a digest of its MAC
        (``TokenError`` if the token does not decode)."""
        return _fingerprint(_split(token)[2])


def _fingerprint(mac: bytes) -> str:
    return hashlib.sha256(_FINGERPRINT_CONTEXT + mac).hexdigest()[:32]
