"""JSON helpers shared by the core: schema validation, expiry parsing and safe JSON dumping
(``jsonschema`` and ``pydantic_core`` are imported on first use)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any


def to_jsonable(value: Any) -> Any:
    """Convert ``value`` (pydantic models, dataclasses, datetimes...) to plain JSON data."""
    from pydantic_core import to_jsonable_python

    return to_jsonable_python(value, fallback=str)


def dump_json(value: Any) -> str:
    """Compact JSON text for ``value``; strings are returned unchanged."""
    if isinstance(value, str):
        return value
    return json.dumps(to_jsonable(value), separators=(",", ":"), ensure_ascii=False)


@lru_cache(maxsize=256)
def _validator_for(schema_json: str) -> Any:
    import jsonschema.validators

    schema = json.loads(schema_json)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def schema_errors(instance: Any, schema: Mapping[str, Any]) -> list[str]:
    """Every way ``instance`` fails ``schema``, as ``"path: message"`` lines (empty if valid);
    ``ValueError`` if ``schema`` itself is not a valid JSON schema."""
    import jsonschema

    try:
        validator = _validator_for(json.dumps(schema, sort_keys=True))
    except jsonschema.SchemaError as exc:
        raise ValueError(f"invalid JSON schema: {exc.message}") from exc
    return [
        f"{'/'.join(str(p) for p in e.absolute_path) or '(root)'}: {e.message}"
        for e in sorted(validator.iter_errors(instance), key=lambda e: list(e.path))
    ]


def parse_expiry(value: datetime | str | None) -> datetime | None:
    """An aware datetime for ``value`` (ISO 8601 text or a datetime; naive means UTC); text
    that does not parse gives ``None`` (per AG-UI, an uninterpretable expiry never expires)."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    if not isinstance(value, str):
        raise TypeError(f"expires_at must be a datetime or an ISO 8601 str, got {value!r}")
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)
