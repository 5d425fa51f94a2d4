"""The one approval payload model, ``{approved, reason?, editedArgs?, remember?}``: it reads an
untrusted JSON value in full or refuses it naming what is wrong (an unknown key never leaves an
edit unread), writes what it reads, and its schema is the ``responseSchema`` approvals carry."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agui_chat
from agui_chat import FunctionCallContent, InvalidResponseError, ToolApprovalRequestContent
from agui_chat._schema import schema_errors
from agui_chat.consent._rules import (
    EDITED_ARGS,
    ApprovalPayloadError,
    approval_response_schema,
    offers_edits,
    read_approval_payload,
    to_wire,
)

#: Where a peer (or a hand-written client) might put the edit instead of ``editedArgs``.
MISPLACED_EDITS = ["edited_args", "editedArguments", "edited_action", "arguments", "EditedArgs"]

EXPECTED = "expected {approved, reason?, editedArgs?, remember?}"


@pytest.mark.parametrize("key", MISPLACED_EDITS)
def test_an_edit_under_another_key_is_refused_naming_the_key(key: str) -> None:
    with pytest.raises(InvalidResponseError) as caught:
        read_approval_payload({"approved": True, key: {"path": "b.txt"}}, request_ids=["r1"])
    assert isinstance(caught.value, ApprovalPayloadError)
    assert caught.value.unknown_keys == (key,)
    assert caught.value.request_ids == ("r1",)
    assert str(caught.value) == (
        f"approval payload has unknown key {key!r}; {EXPECTED} "
        "(edited arguments go under 'editedArgs')"
    )


def test_every_unknown_key_is_named_and_a_long_list_is_cut() -> None:
    many = {"approved": True, **{f"k{i}": 1 for i in range(5)}}
    with pytest.raises(ApprovalPayloadError) as caught:
        read_approval_payload(many, where="resume[0].payload")
    assert caught.value.unknown_keys == ("k0", "k1", "k2", "k3", "k4")
    assert str(caught.value) == (
        f"resume[0].payload has unknown keys 'k0', 'k1', 'k2' (and 2 more); {EXPECTED}"
    )


def test_exactly_as_many_unknown_keys_as_are_shown_are_all_named_with_no_count() -> None:
    with pytest.raises(ApprovalPayloadError) as caught:
        read_approval_payload({"approved": True, "k0": 1, "k1": 2, "k2": 3})
    assert str(caught.value) == f"approval payload has unknown keys 'k0', 'k1', 'k2'; {EXPECTED}"


@pytest.mark.parametrize("key", ["args", "Args"])
def test_arguments_under_args_get_the_edited_args_hint(key: str) -> None:
    with pytest.raises(ApprovalPayloadError) as caught:
        read_approval_payload({"approved": True, key: {"path": "b.txt"}})
    assert str(caught.value).endswith("(edited arguments go under 'editedArgs')")


def test_an_unknown_key_is_refused_on_a_rejection_too() -> None:
    with pytest.raises(ApprovalPayloadError, match="unknown key 'comment'") as caught:
        read_approval_payload({"approved": False, "comment": "no"})
    assert caught.value.unknown_keys == ("comment",)


BOOLEAN = "approval payload.approved must be a boolean (true or false), got "
OBJECT = "approval payload must be a JSON object {approved, reason?, editedArgs?, remember?}, got "
LACKS = f"approval payload lacks 'approved'; {EXPECTED}"
EDITS = "approval payload.editedArgs must be an object, got "


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"approved": "true"}, BOOLEAN + "string"),
        ({"approved": 1}, BOOLEAN + "number"),
        ({"approved": None}, BOOLEAN + "null"),
        ({}, LACKS),
        ({"reason": "x"}, LACKS),
        ({"approved": False, "reason": 3}, "approval payload.reason must be a string, got number"),
        ({"approved": False, "reason": None}, "approval payload.reason must be a string, got null"),
        ({"approved": True, "editedArgs": "x"}, EDITS + "string"),
        ({"approved": True, "editedArgs": [1]}, EDITS + "array"),
        ({"approved": True, "editedArgs": None}, EDITS + "null"),
        ({"approved": False, "editedArgs": {}}, "approval payload.editedArgs only go with approved: true"),  # noqa: E501
        (None, OBJECT + "null"),
        ([True], OBJECT + "array"),
        ("approved", OBJECT + "string"),
    ],
)  # fmt: skip
def test_a_wrong_value_is_refused_naming_what_is_wrong(payload: Any, message: str) -> None:
    with pytest.raises(ApprovalPayloadError) as caught:
        read_approval_payload(payload)
    assert str(caught.value) == message
    assert caught.value.unknown_keys == ()


def test_a_wrong_value_refusal_names_the_requests_it_answers() -> None:
    with pytest.raises(ApprovalPayloadError) as caught:
        read_approval_payload({"approved": "yes"}, request_ids=["r1", "r2"])
    assert caught.value.request_ids == ("r1", "r2")


def test_a_python_value_that_is_no_json_type_is_named_by_its_type() -> None:
    """A Python caller passing a value JSON has no type for: the refusal names its type."""
    with pytest.raises(ApprovalPayloadError) as caught:
        read_approval_payload({"approved": b"yes"})
    assert str(caught.value) == BOOLEAN + "bytes"


def test_edited_arguments_with_a_key_that_is_not_a_string_are_refused() -> None:
    with pytest.raises(ApprovalPayloadError) as caught:
        read_approval_payload({"approved": True, "editedArgs": {1: "x"}})
    assert str(caught.value) == "approval payload.editedArgs must be an object with string keys"
    assert caught.value.unknown_keys == ()


def test_a_key_that_is_not_a_string_is_an_unknown_key() -> None:
    with pytest.raises(ApprovalPayloadError) as caught:
        read_approval_payload({"approved": True, 1: "x"})
    assert caught.value.unknown_keys == ("1",)


def test_a_good_payload_is_read_in_full() -> None:
    read = read_approval_payload({"approved": True, "reason": "ok", "editedArgs": {"path": "b"}})
    assert (read.approved, read.reason, read.edited_args) == (True, "ok", {"path": "b"})
    bare = read_approval_payload({"approved": False})
    assert (bare.approved, bare.reason, bare.edited_args) == (False, None, None)


def test_the_model_takes_the_wire_name_only() -> None:
    """``edited_args`` is the Python name; on the wire only ``editedArgs`` is known."""
    with pytest.raises(ApprovalPayloadError):
        read_approval_payload({"approved": True, "edited_args": {}})
    assert read_approval_payload({"approved": True, "editedArgs": {}}).edited_args == {}


def test_to_wire_writes_what_the_reader_reads() -> None:
    assert to_wire(False) == {"approved": False}
    assert to_wire(True, "fine", {"path": "b"}) == {
        "approved": True,
        "reason": "fine",
        "editedArgs": {"path": "b"},
    }
    at = datetime(2030, 1, 1, tzinfo=timezone.utc)
    written = to_wire(True, edited_args={"when": at})
    assert written == {"approved": True, "editedArgs": {"when": "2030-01-01T00:00:00Z"}}
    assert read_approval_payload(written).to_wire() == written
    payload = read_approval_payload({"approved": True, "editedArgs": {"nested": {"a": 1}}})
    payload.to_wire()[EDITED_ARGS]["nested"]["a"] = 2  # a written copy is the caller's own
    assert payload.edited_args == {"nested": {"a": 1}}
    with pytest.raises(ApprovalPayloadError, match="only go with approved: true"):
        to_wire(False, edited_args={"path": "b"})


def test_an_approval_answer_is_written_by_the_model() -> None:
    request = ToolApprovalRequestContent("r1", FunctionCallContent("c1", "rm", {"path": "a"}))
    edited = request.create_response(True, edited_arguments={"path": "b"})
    assert edited.to_payload() == {"approved": True, "editedArgs": {"path": "b"}}
    assert request.create_response(False, "not that one").to_payload() == {
        "approved": False,
        "reason": "not that one",
    }
    assert request.create_response(False, "").to_payload() == {"approved": False}


def test_the_old_schema_constant_is_gone() -> None:
    """``APPROVAL_RESPONSE_SCHEMA`` was a second definition of the payload."""
    assert not hasattr(agui_chat, "APPROVAL_RESPONSE_SCHEMA")
    assert "APPROVAL_RESPONSE_SCHEMA" not in agui_chat.__all__


# -- the schema approvals carry ------------------------------------------------------------


def test_the_response_schema_offers_edits_only_when_asked() -> None:
    plain = approval_response_schema()
    assert plain == {
        "type": "object",
        "properties": {"approved": {"type": "boolean"}, "reason": {"type": "string"}},
        "required": ["approved"],
    }
    assert not offers_edits(plain)
    params = {"type": "object", "properties": {"path": {"type": "string"}}}
    editable = approval_response_schema(params)
    assert editable["properties"]["editedArgs"] == params
    assert offers_edits(editable)
    assert not offers_edits(None) and not offers_edits({"properties": ["editedArgs"]})


def test_without_a_schema_only_the_peers_capabilities_offer_edits() -> None:
    offered = {"humanInTheLoop": {"approvals": True, "approveWithEdits": True}}
    assert offers_edits(None, offered)
    assert not offers_edits(None)
    assert not offers_edits(None, {"humanInTheLoop": {"approvals": True}})
    assert not offers_edits(None, {"humanInTheLoop": {"approveWithEdits": "yes"}})
    # An interrupt's schema is the more precise word: without editedArgs, no edit.
    assert not offers_edits(approval_response_schema(), offered)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=2), inner),
    max_leaves=4,
)
_KNOWN_KEYS = st.dictionaries(st.sampled_from(["approved", "reason", "editedArgs"]), _JSON)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_KNOWN_KEYS)
def test_the_model_and_its_schema_accept_the_same_payloads(payload: dict[str, Any]) -> None:
    """Over the known keys, the reader accepts exactly what the ``responseSchema`` accepts,
    but for the one rule a plain schema cannot say: edits only with ``approved: true``."""
    schema = approval_response_schema({"type": "object"})
    edits_with_rejection = "editedArgs" in payload and payload.get("approved") is False
    try:
        read_approval_payload(payload)
        accepted = True
    except ApprovalPayloadError:
        accepted = False
    assert accepted == (not schema_errors(payload, schema) and not edits_with_rejection)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    _KNOWN_KEYS, st.text(min_size=1).filter(lambda k: k not in ("approved", "reason", "editedArgs"))
)
def test_any_other_key_is_refused_as_unknown(payload: dict[str, Any], key: str) -> None:
    with pytest.raises(ApprovalPayloadError) as caught:
        read_approval_payload({**payload, "approved": True, key: {"path": "b"}})
    assert caught.value.unknown_keys == (key,)


@pytest.mark.parametrize(
    "value", [[1], {"approved": False, "editedArgs": {}}, {"approved": "yes"}, {"edited_args": {}}]
)
def test_every_refusal_names_the_request_it_answers(value: object) -> None:
    with pytest.raises(ApprovalPayloadError) as caught:
        read_approval_payload(value, request_ids=["approval_c1"])
    assert caught.value.request_ids == ("approval_c1",)
