"""UsageDetails: field-by-field addition where "not reported" is not zero."""

from __future__ import annotations

import pytest

from agui_chat import UsageDetails


def test_counts_add_field_by_field() -> None:
    total = UsageDetails(input_token_count=3, output_token_count=4) + UsageDetails(
        input_token_count=10, output_token_count=1
    )
    assert (total.input_token_count, total.output_token_count) == (13, 5)


def test_none_plus_a_count_is_the_count() -> None:
    total = UsageDetails(input_token_count=None) + UsageDetails(input_token_count=7)
    assert total.input_token_count == 7
    assert (UsageDetails(total_token_count=2) + UsageDetails()).total_token_count == 2


def test_none_plus_none_stays_none() -> None:
    assert (UsageDetails() + UsageDetails()).reasoning_token_count is None


def test_additional_counts_are_summed_by_key() -> None:
    total = UsageDetails(additional_counts={"a": 1, "b": 2}) + UsageDetails(
        additional_counts={"b": 3, "c": 4}
    )
    assert total.additional_counts == {"a": 1, "b": 5, "c": 4}


def test_addition_leaves_both_operands_unchanged() -> None:
    left = UsageDetails(input_token_count=1, additional_counts={"a": 1})
    right = UsageDetails(input_token_count=2, additional_counts={"a": 1})
    _ = left + right
    assert left.input_token_count == 1
    assert left.additional_counts == {"a": 1}


def test_adding_something_else_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        _ = UsageDetails() + 3  # type: ignore[operator]


def test_a_negative_count_is_refused_naming_the_field() -> None:
    with pytest.raises(ValueError, match="input_token_count must be a non-negative int"):
        UsageDetails(input_token_count=-1)


def test_round_trips_through_a_dict() -> None:
    usage = UsageDetails(
        input_token_count=1, cached_input_token_count=0, additional_counts={"x": 2}
    )
    assert UsageDetails.from_dict(usage.to_dict()) == usage
    assert "output_token_count" not in usage.to_dict()


def test_unknown_usage_field_is_named() -> None:
    with pytest.raises(ValueError, match="unknown usage fields: tokens"):
        UsageDetails.from_dict({"tokens": 1})
