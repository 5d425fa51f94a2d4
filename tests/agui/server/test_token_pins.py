"""Interrupt tokens: the shape, boundaries and constants a mutation run showed no test pinned
(shared/mutation-baseline.md items 7, 11, 12 and 14): each test names what it holds."""

from __future__ import annotations

import base64
import json

import pytest

from agui_chat.agui.server import _signing
from agui_chat.agui.server._signing import (
    InterruptClaims,
    InterruptSigner,
    TokenError,
    audience_id,
    canonical_json,
    new_nonce,
    pause_digest,
)
from agui_chat.consent._rules import is_past

KEY = "unit-test-key-0123456789abcdef"


def _claims(**changes: object) -> InterruptClaims:
    values: dict[str, object] = {
        "kind": "approval",
        "thread_id": "t1",
        "call_id": "c1",
        "tool_name": "delete_file",
        "arguments": {"path": "a.txt"},
    }
    values.update(changes)
    return InterruptClaims(**values)  # type: ignore[arg-type]


def _payload(token: str) -> dict[str, object]:
    text = token.split(".")[1]
    decoded = json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    assert isinstance(decoded, dict)
    return decoded


# -- item 11: token shape ------------------------------------------------------------------


def test_a_token_is_tagged_v1_and_has_exactly_three_segments() -> None:
    token = InterruptSigner(KEY).sign(_claims())
    assert _signing._VERSION == "v1"
    assert token.startswith("v1.")
    assert token.count(".") == 2


@pytest.mark.parametrize("tag", ["v2", "v0", "V1", ""])
def test_a_token_with_another_version_tag_is_unknown_not_verified(tag: str) -> None:
    signer = InterruptSigner(KEY)
    token = signer.sign(_claims())
    other = tag + token[2:]
    with pytest.raises(TokenError) as refused:
        signer.verify(other)
    assert refused.value.reason == "unknown"
    with pytest.raises(TokenError):
        InterruptSigner.fingerprint(other)


@pytest.mark.parametrize("extra", [".x", ".", ".AAAA"])
def test_a_token_with_an_extra_segment_is_unknown(extra: str) -> None:
    signer = InterruptSigner(KEY)
    with pytest.raises(TokenError) as refused:
        signer.verify(signer.sign(_claims()) + extra)
    assert refused.value.reason == "unknown"


def test_a_token_missing_its_mac_is_unknown() -> None:
    signer = InterruptSigner(KEY)
    head = signer.sign(_claims()).rsplit(".", 1)[0]
    with pytest.raises(TokenError) as refused:
        signer.verify(head)
    assert refused.value.reason == "unknown"


def test_a_token_of_another_key_names_that_and_its_kind() -> None:
    token = InterruptSigner("another-key-0123456789abcdef").sign(_claims(kind="question"))
    with pytest.raises(TokenError) as refused:
        InterruptSigner(KEY).verify(token)
    assert (refused.value.reason, refused.value.kind) == ("other_key", "question")
    assert str(refused.value) == "other_key interrupt token"


def test_an_altered_token_is_forged_and_names_its_kind() -> None:
    signer = InterruptSigner(KEY)
    token = signer.sign(_claims(kind="question"))
    head, mac = token.rsplit(".", 1)
    flipped = bytearray(base64.urlsafe_b64decode(mac + "="))
    flipped[0] ^= 1
    with pytest.raises(TokenError) as refused:
        signer.verify(f"{head}.{_signing._b64encode(bytes(flipped))}")
    assert (refused.value.reason, refused.value.kind) == ("forged", "question")
    assert str(refused.value) == "forged interrupt token"


def test_claims_without_a_kind_or_a_thread_are_unknown() -> None:
    signer = InterruptSigner(KEY)
    for wire in ({"t": "t1"}, {"k": "x", "t": "t1"}, {"k": "a"}, {"k": "a", "t": 3}, [1]):
        payload = base64.urlsafe_b64encode(canonical_json(wire).encode()).rstrip(b"=").decode()
        mac = signer._mac(payload, signer._own_key)
        token = f"v1.{payload}.{_signing._b64encode(mac)}"
        with pytest.raises(TokenError) as refused:
            signer.verify(token)
        assert refused.value.reason == "unknown", wire


# -- item 14: the key's minimum length --------------------------------------------------


def test_a_signing_key_of_exactly_16_bytes_is_accepted_and_15_refused() -> None:
    InterruptSigner("k" * 16).sign(_claims())
    InterruptSigner(b"k" * 16).sign(_claims())
    with pytest.raises(ValueError, match="at least 16 bytes"):
        InterruptSigner("k" * 15)


def test_an_ephemeral_signer_has_a_random_32_byte_key() -> None:
    one, two = InterruptSigner.ephemeral(), InterruptSigner.ephemeral()
    assert len(one._key) == 32
    assert one._key != two._key


# -- item 7: ids are unique ---------------------------------------------------------------


def test_nonces_are_fresh_96_bit_url_safe_text() -> None:
    nonces = {new_nonce() for _ in range(50)}
    assert len(nonces) == 50
    assert all(len(n) == 16 for n in nonces)


def test_equal_claims_with_distinct_nonces_get_distinct_ids_and_store_keys() -> None:
    signer = InterruptSigner(KEY)
    one = signer.sign(_claims(nonce=new_nonce()))
    two = signer.sign(_claims(nonce=new_nonce()))
    assert one != two
    assert InterruptSigner.fingerprint(one) != InterruptSigner.fingerprint(two)
    assert len(InterruptSigner.fingerprint(one)) == 32


# -- item 12: boundaries ------------------------------------------------------------------


def test_a_token_is_expired_exactly_at_its_expiry_instant_and_not_a_second_before() -> None:
    claims = _claims(expires_at=1_900_000_000)
    assert is_past(claims.expires_at, 1_900_000_000)
    assert not is_past(claims.expires_at, 1_899_999_999)
    assert not is_past(_claims(expires_at=None).expires_at, 1_900_000_000)


# -- the claims' wire form ----------------------------------------------------------------


def test_every_claim_travels_under_its_short_name_and_comes_back() -> None:
    full = _claims(
        kind="question",
        expires_at=1_900_000_000,
        allow_edits=True,
        question={"key": "build", "message": "Which?"},
        answers=[["env", "resolved", "prod"]],
        pause="P" * 22,
        pause_size=3,
        nonce="n" * 16,
        traceparent="00-" + "a" * 32 + "-" + "b" * 16 + "-01",
        requested_at=1.5,
    )
    signer = InterruptSigner(KEY, audience="agent-a")
    token = signer.sign(full)
    wire = _payload(token)
    assert wire == {
        "k": "q",
        "t": "t1",
        "c": "c1",
        "n": "delete_file",
        "a": {"path": "a.txt"},
        "e": 1_900_000_000,
        "ed": 1,
        "q": {"key": "build", "message": "Which?"},
        "qa": [["env", "resolved", "prod"]],
        "p": "P" * 22,
        "pn": 3,
        "u": "n" * 16,
        "tp": "00-" + "a" * 32 + "-" + "b" * 16 + "-01",
        "at": 1.5,
        "au": audience_id("agent-a"),
        "i": signer.key_id,
    }
    back = signer.verify(token)
    assert back == InterruptClaims(**{**full.__dict__, "audience": audience_id("agent-a")})


def test_a_minimal_approval_claims_only_kind_and_thread_and_defaults_come_back() -> None:
    signer = InterruptSigner(KEY)
    minimal = InterruptClaims("approval", "t1", None, None, None)
    token = signer.sign(minimal)
    assert _payload(token) == {"k": "a", "t": "t1", "i": signer.key_id}
    back = signer.verify(token)
    assert back == minimal
    assert (back.allow_edits, back.pause_size, back.answers) == (False, 1, [])


def test_a_slot_is_the_call_and_for_a_question_its_key() -> None:
    assert _claims().slot == ("c1", None)
    assert _claims(question={"key": "k"}).slot == ("c1", None)  # an approval has no key
    assert _claims(kind="question", question={"key": "k"}).slot == ("c1", "k")
    assert _claims(kind="question", call_id=None).slot == ("", None)


def test_the_pause_digest_ignores_order_and_is_128_bits() -> None:
    slots = [("c1", None), ("c2", "k")]
    digest = pause_digest(slots)
    assert digest == pause_digest(list(reversed(slots)))
    assert digest != pause_digest([("c1", None)])
    assert len(base64.urlsafe_b64decode(digest + "==")) == 16


def test_audience_ids_are_72_bits_and_differ_per_audience() -> None:
    assert audience_id("a") != audience_id("b")
    assert len(base64.urlsafe_b64decode(audience_id("a"))) == 9


# -- audience -----------------------------------------------------------------------------


def test_an_authentic_token_of_another_audience_is_refused_by_audience_not_as_forged() -> None:
    token = InterruptSigner(KEY, audience="agent-a").sign(_claims())
    with pytest.raises(TokenError) as refused:
        InterruptSigner(KEY, audience="agent-b").verify(token)
    assert (refused.value.reason, refused.value.kind) == ("audience", "approval")


def test_an_audience_less_signer_verifies_tokens_of_any_audience() -> None:
    token = InterruptSigner(KEY, audience="agent-a").sign(_claims())
    back = InterruptSigner(KEY).verify(token)
    assert back.audience == audience_id("agent-a")


def test_an_audience_bound_signer_refuses_an_audience_less_token() -> None:
    token = InterruptSigner(KEY).sign(_claims())
    with pytest.raises(TokenError) as refused:
        InterruptSigner(KEY, audience="agent-a").verify(token)
    assert refused.value.reason == "audience"


def test_a_non_text_audience_in_the_claims_is_unknown() -> None:
    signer = InterruptSigner(KEY)
    payload = _signing._b64encode(canonical_json({"k": "a", "t": "t1", "au": 5}).encode())
    token = f"v1.{payload}.{_signing._b64encode(signer._mac(payload, signer._key))}"
    with pytest.raises(TokenError) as refused:
        signer.verify(token)
    assert refused.value.reason == "unknown"
