"""Interrupt tokens (keyed MAC) and the consumed-approvals store."""

from __future__ import annotations

import time

import pytest

from agui_chat.agui._signing import InterruptClaims, InterruptSigner, TokenError, canonical_json
from agui_chat.agui._store import InMemoryApprovalStore

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
    original = claims(siblings=[["c2", None]])
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


def test_a_token_from_another_key_is_forged() -> None:
    token = InterruptSigner("other-key-0123456789abcdefgh").sign(claims())
    with pytest.raises(TokenError) as caught:
        InterruptSigner(KEY).verify(token)
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
    assert claims(expires_at=int(time.time()) - 1).is_expired()
    assert not claims(expires_at=int(time.time()) + 60).is_expired()
    assert not claims(expires_at=None).is_expired()


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
