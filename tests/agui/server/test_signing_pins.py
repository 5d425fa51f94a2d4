"""Interrupt tokens beyond tests/agui/server/test_token_pins.py: how non-ASCII claims are
spelled, what decodes strictly (empty and short segments), audiences (subkeys, ephemeral
signers, an audience the claims name), the pause digest, and the errors a caller reads.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from typing import Any, cast

import pytest

from agui_chat import ConfigurationError
from agui_chat.agui.server._signing import (
    InterruptClaims,
    InterruptSigner,
    TokenError,
    audience_id,
    canonical_json,
    pause_digest,
)

KEY = "unit-test-key-0123456789abcdef"


def _claims(**changes: Any) -> InterruptClaims:
    values: dict[str, Any] = {
        "kind": "approval",
        "thread_id": "t1",
        "call_id": "c1",
        "tool_name": "rename",
        "arguments": {"to": "café"},
    }
    values.update(changes)
    return InterruptClaims(**values)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _payload_text(token: str) -> str:
    part = token.split(".")[1]
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)).decode("utf-8")


def _signed(wire: dict[str, Any], key: bytes | str = KEY) -> str:
    """A token over ``wire`` with a MAC under ``key`` (an audience-less signer's key), as
    the documented format spells it: ``v1.<base64url(JSON)>.<base64url(HMAC-SHA256)>``."""
    raw = key.encode() if isinstance(key, str) else key
    payload = _b64(json.dumps(wire, sort_keys=True, separators=(",", ":")).encode())
    mac = hmac.new(raw, f"v1.{payload}".encode(), hashlib.sha256).digest()
    return f"v1.{payload}.{_b64(mac)}"


def _refusal(signer: InterruptSigner, token: object) -> TokenError:
    with pytest.raises(TokenError) as refused:
        signer.verify(cast(str, token))
    return refused.value


# -- spelling -------------------------------------------------------------------------------


def test_canonical_json_keeps_non_ascii_text_as_itself() -> None:
    """Non-ASCII text is written as UTF-8, not ``\\u`` escapes (compact tokens)."""
    assert canonical_json({"to": "café", "a": "日本"}) == '{"a":"日本","to":"café"}'


def test_a_non_ascii_argument_travels_as_utf_8_in_the_token_and_comes_back() -> None:
    """The token's claims hold a non-ASCII argument as its UTF-8 text."""
    signer = InterruptSigner(KEY)
    token = signer.sign(_claims())
    assert '"a":{"to":"café"}' in _payload_text(token)
    assert signer.verify(token).arguments == {"to": "café"}


def test_pauses_of_the_same_size_with_other_slots_have_other_digests() -> None:
    """The pause digest depends on which slots the pause holds, not only on how many."""
    one = pause_digest([("c1", None), ("c2", None)])
    assert one != pause_digest([("c1", None), ("c3", None)])
    assert one != pause_digest([("c1", None), ("c2", "key")])


# -- strict decoding ------------------------------------------------------------------------


def test_a_token_with_an_empty_mac_is_unknown_and_has_no_store_key() -> None:
    """``v1.<payload>.`` (the MAC emptied) is not a token of ours: unknown, not forged."""
    signer = InterruptSigner(KEY)
    head = signer.sign(_claims()).rsplit(".", 1)[0]
    assert _refusal(signer, head + ".").reason == "unknown"
    with pytest.raises(TokenError) as refused:
        InterruptSigner.fingerprint(head + ".")
    assert refused.value.reason == "unknown"


@pytest.mark.parametrize("size", [3, 6, 16])
def test_a_mac_swapped_for_other_canonical_base64url_is_forged(size: int) -> None:
    """Any well-formed MAC segment (4, 8 or 22 characters) that does not match is forged,
    and the token still has a store key."""
    signer = InterruptSigner(KEY)
    head = signer.sign(_claims()).rsplit(".", 1)[0]
    token = f"{head}.{_b64(b'x' * size)}"
    refused = _refusal(signer, token)
    assert (refused.reason, refused.kind) == ("forged", "approval")
    assert len(InterruptSigner.fingerprint(token)) == 32


@pytest.mark.parametrize("token", [None, 5, b"v1.a.b", ["v1", "a", "b"]])
def test_a_token_that_is_not_text_is_unknown(token: object) -> None:
    """A non-string id (from a malformed resume) is refused as unknown, not a crash."""
    assert _refusal(InterruptSigner(KEY), token).reason == "unknown"
    with pytest.raises(TokenError):
        InterruptSigner.fingerprint(cast(str, token))


def test_an_authentic_token_whose_claims_do_not_read_is_unknown() -> None:
    """Signed with our key but with claims of the wrong type (``pn`` not a number):
    ``TokenError("unknown")``, message "unknown interrupt token"."""
    refused = _refusal(InterruptSigner(KEY), _signed({"k": "a", "t": "t1", "pn": "two"}))
    assert (refused.reason, str(refused)) == ("unknown", "unknown interrupt token")


# -- keys and audiences ---------------------------------------------------------------------


def test_a_too_short_key_is_refused_naming_the_minimum() -> None:
    """The error a misconfigured server shows names the rule exactly."""
    with pytest.raises(ConfigurationError) as refused:
        InterruptSigner("short")
    assert str(refused.value) == (
        "the signing key must be at least 16 bytes, not 5; make one with "
        "python -c 'import secrets; print(secrets.token_hex(32))'"
    )
    assert isinstance(refused.value, ValueError)  # existing ``except ValueError`` still works


def test_an_ephemeral_signer_issues_for_its_audience() -> None:
    """``ephemeral(audience=...)`` keeps the audience: its tokens name it."""
    signer = InterruptSigner.ephemeral(audience="agent-a")
    assert (signer.audience, signer.audience_id) == ("agent-a", audience_id("agent-a"))
    token = signer.sign(_claims())
    assert f'"au":"{audience_id("agent-a")}"' in _payload_text(token)
    assert signer.verify(token).audience == audience_id("agent-a")


def test_an_audience_token_is_signed_under_the_documented_subkey() -> None:
    """Tokens outlive a deployment (one issued before an upgrade is answered after it), so
    the MAC stays ``HMAC(HMAC(key, context || audience id), "v1." + payload)``, each
    audience under its own subkey: recomputed here, it is the token's MAC."""
    for audience in ("agent-a", "agent-b"):
        token = InterruptSigner(KEY, audience=audience).sign(_claims())
        _, payload, mac = token.split(".")
        context = b"agui_chat audience key v1\x00" + audience_id(audience).encode()
        subkey = hmac.new(KEY.encode(), context, hashlib.sha256).digest()
        expected = hmac.new(subkey, f"v1.{payload}".encode(), hashlib.sha256).digest()
        assert mac == _b64(expected), audience


def test_a_token_re_labelled_for_another_audience_is_forged() -> None:
    """An agent-a token whose ``au`` is rewritten to agent-b's id fails agent-b's MAC
    check (it is not accepted as agent-b's)."""
    token = InterruptSigner(KEY, audience="agent-a").sign(_claims())
    mac = token.rsplit(".", 1)[1]
    text = _payload_text(token).replace(audience_id("agent-a"), audience_id("agent-b"))
    relabelled = f"v1.{_b64(text.encode())}.{mac}"
    for verifier in (InterruptSigner(KEY, audience="agent-b"), InterruptSigner(KEY)):
        refused = _refusal(verifier, relabelled)
        assert (refused.reason, refused.kind) == ("forged", "approval")


def test_claims_naming_an_audience_are_not_stripped_by_an_audience_less_signer() -> None:
    """An audience-less signer signing claims that name an audience keeps ``au`` in the
    token; not holding that audience's subkey, the token does not verify anywhere."""
    named = audience_id("agent-a")
    token = InterruptSigner(KEY).sign(_claims(audience=named))
    assert f'"au":"{named}"' in _payload_text(token)
    for verifier in (InterruptSigner(KEY), InterruptSigner(KEY, audience="agent-a")):
        assert _refusal(verifier, token).reason == "forged"


def test_an_audience_id_is_the_documented_digest_whatever_its_last_character() -> None:
    """``au`` is 72 bits of SHA-256 over the context and the audience, in unpadded base64url:
    a token issued before an upgrade names the same audience after it (this one ends in X)."""
    digest = hashlib.sha256(b"agui_chat audience id v1\x00agent-2").digest()[:9]
    assert audience_id("agent-2") == _b64(digest) == "QhiWNX8cJMkX"
