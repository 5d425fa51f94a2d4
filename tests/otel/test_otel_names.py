"""Every convention name we emit is the ``opentelemetry-semantic-conventions`` package's."""

from __future__ import annotations

from opentelemetry.semconv._incubating.attributes import gen_ai_attributes
from opentelemetry.semconv._incubating.metrics import gen_ai_metrics
from opentelemetry.semconv.attributes import error_attributes, server_attributes
from opentelemetry.semconv.schemas import Schemas

from agui_chat.middleware import _otel_names as _names


def _values(module: object) -> set[str]:
    return {v for k, v in vars(module).items() if k.isupper() and isinstance(v, str)}


def test_every_convention_name_is_the_packages() -> None:
    known = (
        _values(gen_ai_attributes)
        | _values(gen_ai_metrics)
        | _values(server_attributes)
        | _values(error_attributes)
    )
    ours = {
        v
        for k, v in vars(_names).items()
        if k.isupper() and isinstance(v, str) and v.split(".")[0] in ("gen_ai", "server", "error")
    }
    assert len(ours) > 30
    assert ours - known == set()


def test_the_schema_url_is_one_the_package_knows() -> None:
    assert _names.SCHEMA_URL in {s.value for s in Schemas}
