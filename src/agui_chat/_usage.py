"""Token usage counts, summed across the round trips of one response."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

_COUNTS = (
    "input_token_count",
    "output_token_count",
    "total_token_count",
    "cached_input_token_count",
    "reasoning_token_count",
)


def _add(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else a + b


@dataclass(slots=True)
class UsageDetails:
    """Token counts (``None``: not reported, which is not zero); ``a + b`` sums field by field
    (``None + x`` is ``x``). Cached and reasoning counts are parts of the input and output."""

    input_token_count: int | None = None
    output_token_count: int | None = None
    total_token_count: int | None = None
    cached_input_token_count: int | None = None
    reasoning_token_count: int | None = None
    additional_counts: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in _COUNTS:
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value < 0
            ):
                raise ValueError(f"{name} must be a non-negative int or None, got {value!r}")
        if not isinstance(self.additional_counts, dict) or not all(
            isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool)
            for k, v in self.additional_counts.items()
        ):
            raise TypeError("additional_counts must be a dict of str to int")

    def __add__(self, other: UsageDetails) -> UsageDetails:
        if not isinstance(other, UsageDetails):
            return NotImplemented
        extra = dict(self.additional_counts)
        for key, value in other.additional_counts.items():
            extra[key] = extra.get(key, 0) + value
        sums = {n: _add(getattr(self, n), getattr(other, n)) for n in _COUNTS}
        return UsageDetails(**sums, additional_counts=extra)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict with only the reported counts."""
        out: dict[str, Any] = {n: getattr(self, n) for n in _COUNTS if getattr(self, n) is not None}
        if self.additional_counts:
            out["additional_counts"] = dict(self.additional_counts)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> UsageDetails:
        """Load what :meth:`to_dict` wrote."""
        unknown = set(data) - set(_COUNTS) - {"additional_counts"}
        if unknown:
            raise ValueError(f"unknown usage fields: {', '.join(sorted(unknown))}")
        return cls(**data)
