"""Interrupt tokens (keyed MAC) and the consumed-approvals store."""

from __future__ import annotations

import base64
import hashlib
import time

import pytest

from agui_chat.agui.server._signing import (
    InterruptClaims,
    InterruptSigner,
    TokenError,
    canonical_json,
    new_nonce,
)
from agui_chat.consent._rules import is_past
from agui_chat.stores import InMemoryApprovalStore
from fake_clock import FakeClock

KEY = "unit-test-key-0123456789abcdef"


def claims(**changes: object) -> InterruptClaims:
    values: dict[str, object] = {
        "kind": "approval",
        "thread_id": "t1",
        "call_id": "c1",
        "tool_name": "delete_file",
        "arguments": {"path": "a.txt", "force": True},
        "expires_at": 4102444800,
        "allow_edits": True,
    }
    values.update(changes)
    return InterruptClaims(**values)  # type: ignore[arg-type]


def test_a_token_verifies_back_to_its_claims() -> None:
    signer = InterruptSigner(KEY)
    original = claims(pause="AAAAAAAAAAAAAAAAAAAAAA", pause_size=2)
    assert signer.verify(signer.sign(original)) == original


def test_a_question_token_keeps_the_question_and_earlier_answers() -> None:
    signer = InterruptSigner(KEY)
    question = claims(
        kind="question",
        question={"key": "confirm", "message": "Sure?", "schema": {"type": "boolean"}},
        answers=[["account", "resolved", "savings"]],
        allow_edits=False,
    )
    assert signer.verify(signer.sign(question)) == question
    assert question.slot == ("c1", "confirm")


def test_tokens_are_compact_url_safe_text() -> None:
    token = InterruptSigner(KEY).sign(claims())
    assert token.startswith("v1.")
    assert set(token) <= set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
    assert "=" not in token


def test_the_same_claims_in_another_key_order_give_the_same_token() -> None:
    signer = InterruptSigner(KEY)
    one = claims(arguments={"a": 1, "b": [1, 2]})
    two = claims(arguments={"b": [1, 2], "a": 1})
    assert signer.sign(one) == signer.sign(two)
    assert canonical_json({"b": 1, "a": {"d": 2, "c": 3}}) == '{"a":{"c":3,"d":2},"b":1}'


def test_a_token_from_another_key_is_told_apart_from_an_altered_one() -> None:
    token = InterruptSigner("other-key-0123456789abcdefgh").sign(claims())
    with pytest.raises(TokenError) as caught:
        InterruptSigner(KEY).verify(token)
    assert (caught.value.reason, caught.value.kind) == ("other_key", "approval")


def test_a_token_naming_our_key_whose_mac_fails_is_forged() -> None:
    """Claims re-signed under another key but naming ours: altered, whatever it says."""
    ours = InterruptSigner(KEY)
    theirs = InterruptSigner("other-key-0123456789abcdefgh")
    theirs.key_id = ours.key_id
    with pytest.raises(TokenError) as caught:
        ours.verify(theirs.sign(claims()))
    assert (caught.value.reason, caught.value.kind) == ("forged", "approval")


def test_a_token_with_a_flipped_mac_byte_is_forged() -> None:
    token = InterruptSigner(KEY).sign(claims())
    flipped = token[:-2] + ("A" if token[-2] != "A" else "B") + token[-1]
    with pytest.raises(TokenError) as caught:
        InterruptSigner(KEY).verify(flipped)
    assert caught.value.reason == "forged"


@pytest.mark.parametrize(
    "token", ["", "approval_c1", "v1.x.y", "v2.abc.def", "v1..", "v1.!!!.???", "a.b.c.d"]
)
def test_text_that_is_not_a_token_is_unknown(token: str) -> None:
    with pytest.raises(TokenError) as caught:
        InterruptSigner(KEY).verify(token)
    assert caught.value.reason == "unknown"


def test_expiry_is_checked_against_the_clock() -> None:
    assert is_past(claims(expires_at=int(time.time()) - 1).expires_at, time.time())
    assert not is_past(claims(expires_at=int(time.time()) + 60).expires_at, time.time())
    assert not is_past(claims(expires_at=None).expires_at, time.time())


def test_an_ephemeral_signer_refuses_the_tokens_of_another() -> None:
    token = InterruptSigner.ephemeral().sign(claims())
    with pytest.raises(TokenError):
        InterruptSigner.ephemeral().verify(token)


def test_the_fingerprint_tells_tokens_apart() -> None:
    signer = InterruptSigner(KEY)
    one, two = signer.sign(claims()), signer.sign(claims(call_id="c2"))
    assert InterruptSigner.fingerprint(one) == InterruptSigner.fingerprint(one)
    assert InterruptSigner.fingerprint(one) != InterruptSigner.fingerprint(two)


async def test_a_key_is_claimed_only_once() -> None:
    store = InMemoryApprovalStore()
    assert await store.claim("k", expires_at=None) is True
    assert await store.claim("k", expires_at=None) is False


async def test_a_released_claim_can_be_claimed_again() -> None:
    store = InMemoryApprovalStore()
    await store.claim("k", expires_at=None)
    await store.release("k")
    assert await store.claim("k", expires_at=None) is True


async def test_the_result_of_a_claim_is_kept() -> None:
    store = InMemoryApprovalStore()
    await store.claim("k", expires_at=None)
    assert await store.get_result("k") is None
    await store.record_result("k", "deleted a.txt")
    assert await store.get_result("k") == "deleted a.txt"
    assert await store.get_result("unknown") is None


async def test_expired_records_are_swept() -> None:
    store = InMemoryApprovalStore()
    await store.claim("old", expires_at=time.time() - 10)
    await store.claim("forever", expires_at=None)
    store._last_sweep = 0.0
    await store.claim("new", expires_at=time.time() + 60)
    assert len(store) == 2
    assert await store.claim("old", expires_at=None) is True


# -- strict decoding, canonical store keys, malformed claims, nonces ----------------------------

_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def _other_spellings(token: str) -> list[str]:
    """Texts a lenient base64 decoder reads as the same token."""
    version, payload, mac = token.split(".")
    index = _ALPHABET.index(mac[-1])
    low_bits = {_ALPHABET[(index & ~3) | bits] for bits in range(4)} - {mac[-1]}
    return [
        *(f"{version}.{payload}.{mac[:-1]}{c}" for c in sorted(low_bits)),
        *(f"{version}.{payload}.{mac}{junk}" for junk in ("$$", "~~~~", "!", "=", " ")),
        f"{version}.{payload}=.{mac}",
        f"{version}.{payload}.{mac.replace('-', '+').replace('_', '/')}",
    ]


def test_only_the_one_spelling_of_a_token_verifies() -> None:
    signer = InterruptSigner(KEY)
    token = signer.sign(claims())
    assert signer.verify(token) == claims()
    spellings = [s for s in _other_spellings(token) if s != token]
    assert len(spellings) >= 8
    for spelling in spellings:
        with pytest.raises(TokenError) as caught:
            signer.verify(spelling)
        assert caught.value.reason == "unknown", spelling
        with pytest.raises(TokenError):
            InterruptSigner.fingerprint(spelling)


def test_the_store_key_is_a_digest_of_the_decoded_signature() -> None:
    token = InterruptSigner(KEY).sign(claims())
    mac = base64.urlsafe_b64decode(token.split(".")[2] + "=")
    key = InterruptSigner.fingerprint(token)
    assert len(key) == 32
    assert key not in (hashlib.sha256(token.encode()).hexdigest()[:32], mac.hex()[:32])
    # The key follows the signature bytes, whatever the rest of the text says.
    assert InterruptSigner.fingerprint("v1.e30." + token.split(".")[2]) == key


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@pytest.mark.parametrize(
    "claims_bytes",
    [
        b"[" * 100_000 + b"]" * 100_000,
        b'{"k":"a","t":"t1","a":' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        b'{"k":"a","t":"t1","a":' + b'{"x":' * 50_000 + b"1" + b"}" * 50_001,
        bytes([0xFF, 0xFE]),
        b"",
        b"[1]",
        b'"text"',
        b'{"k":"z","t":"t1"}',
        b'{"k":"a","t":5}',
    ],
    ids=[
        "deep array",
        "deep arguments",
        "deep objects",
        "not utf-8",
        "empty",
        "a list",
        "a string",
        "unknown kind",
        "thread not text",
    ],
)
def test_claims_that_cannot_be_read_make_an_unknown_token(claims_bytes: bytes) -> None:
    token = f"v1.{_b64(claims_bytes)}.{_b64(bytes(32))}"
    with pytest.raises(TokenError) as caught:
        InterruptSigner(KEY).verify(token)
    assert caught.value.reason == "unknown"


def test_a_nonce_is_signed_and_kept() -> None:
    signer = InterruptSigner(KEY)
    one, two = claims(nonce=new_nonce()), claims(nonce=new_nonce())
    assert one.nonce != two.nonce
    assert signer.sign(one) != signer.sign(two)
    assert signer.verify(signer.sign(one)) == one
    assert signer.verify(signer.sign(claims())).nonce is None  # tokens issued before nonces


async def test_the_store_keeps_a_record_until_its_expiry_on_its_clock() -> None:
    clock = FakeClock(1_900_000_000.0)
    store = InMemoryApprovalStore(clock=clock)
    await store.claim("k", expires_at=clock.now + 100)
    clock.now += 99
    assert await store.claim("sweeps", expires_at=None) is True
    assert await store.claim("k", expires_at=None) is False
    clock.now += 120
    assert await store.claim("sweeps-again", expires_at=None) is True
    assert await store.claim("k", expires_at=None) is True
