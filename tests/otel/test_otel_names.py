"""Every convention name we emit is the ``opentelemetry-semantic-conventions`` package's."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from opentelemetry.semconv._incubating.attributes import gen_ai_attributes
from opentelemetry.semconv._incubating.metrics import gen_ai_metrics
from opentelemetry.semconv.attributes import error_attributes, server_attributes
from opentelemetry.semconv.schemas import Schemas

import agui_chat
from agui_chat.middleware._tool_tracing import SCHEMA_URL

CONVENTION = re.compile(r"(gen_ai|server|error)\.[a-z_.]+")


def _values(module: object) -> set[str]:
    return {v for k, v in vars(module).items() if k.isupper() and isinstance(v, str)}


def _convention_literals() -> set[str]:
    """Every string literal in the package that looks like a convention name."""
    return {
        node.value
        for path in Path(agui_chat.__file__).parent.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and CONVENTION.fullmatch(node.value)
    }


def test_every_convention_name_is_the_packages() -> None:
    known = (
        _values(gen_ai_attributes)
        | _values(gen_ai_metrics)
        | _values(server_attributes)
        | _values(error_attributes)
    )
    ours = _convention_literals()
    assert len(ours) > 30
    assert ours - known == set()


def test_the_schema_url_is_one_the_package_knows() -> None:
    assert SCHEMA_URL in {s.value for s in Schemas}
