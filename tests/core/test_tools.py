"""Tools: ai_function schemas and argument validation, declarations, and approval_required."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel

from agui_chat import (
    AIFunction,
    AIFunctionDeclaration,
    ApprovalRequiredAIFunction,
    DelegatingAIFunction,
    ToolArgumentsError,
    ToolError,
    ai_function,
    approval_required,
)


def get_weather(city: str, days: int = 3) -> str:
    """Get the weather forecast for a city.

    Args:
        city: The city to look up.
        days: How many days to forecast,
            counting today.
    """
    return f"{city}:{days}"


# -- building a function -------------------------------------------------------------------


def test_bare_decorator_makes_an_ai_function_named_after_the_function() -> None:
    @ai_function
    def lookup(query: str) -> str:
        """Look something up."""
        return query

    assert isinstance(lookup, AIFunction)
    assert lookup.name == "lookup"
    assert lookup.description == "Look something up."


def test_decorator_with_options_sets_name_and_description() -> None:
    @ai_function(name="find", description="Find things.")
    def lookup(query: str) -> str:
        """Look something up."""
        return query

    assert (lookup.name, lookup.description) == ("find", "Find things.")


def test_plain_call_wraps_a_function() -> None:
    tool = ai_function(get_weather)
    assert isinstance(tool, AIFunction)
    assert tool.name == "get_weather"
    assert tool.description == "Get the weather forecast for a city."


def test_wrapping_an_ai_function_again_returns_it_unchanged() -> None:
    tool = ai_function(get_weather)
    assert ai_function(tool) is tool


def test_schema_comes_from_type_hints_and_defaults_make_parameters_optional() -> None:
    schema = ai_function(get_weather).parameters
    assert schema["type"] == "object"
    assert schema["properties"]["city"]["type"] == "string"
    assert schema["properties"]["days"]["type"] == "integer"
    assert schema["properties"]["days"]["default"] == 3
    assert schema["required"] == ["city"]
    assert "title" not in schema


def test_google_style_docstring_describes_the_parameters() -> None:
    properties = ai_function(get_weather).parameters["properties"]
    assert properties["city"]["description"] == "The city to look up."
    assert properties["days"]["description"] == "How many days to forecast, counting today."


def test_sphinx_style_docstring_describes_the_parameters() -> None:
    def convert(amount: float, currency: str) -> str:
        """Convert money.

        :param amount: How much to convert.
        :param str currency: The target currency code.
        :returns: The converted amount.
        """
        return f"{amount}{currency}"

    tool = ai_function(convert)
    properties = tool.parameters["properties"]
    assert properties["amount"]["description"] == "How much to convert."
    assert properties["currency"]["description"] == "The target currency code."
    assert tool.description == "Convert money."


def test_google_sections_after_args_do_not_leak_into_descriptions() -> None:
    def f(city: str, days: int = 3) -> str:
        """Get the weather.

        Args:
            city (str): The city.
            days: Days.

        Returns:
            The forecast text.

        Raises:
            ValueError: never.
        """
        return city

    properties = ai_function(f).parameters["properties"]
    assert properties["city"]["description"] == "The city."
    assert properties["days"]["description"] == "Days."


def test_numpy_style_docstring_describes_the_parameters_without_their_types() -> None:
    def f(city: str, days: int = 3) -> str:
        """Get the weather.

        Parameters
        ----------
        city : str
            The city to look up.
        days : int
            How many days.

        Returns
        -------
        str
            The forecast.
        """
        return city

    properties = ai_function(f).parameters["properties"]
    assert properties["city"]["description"] == "The city to look up."
    assert properties["days"]["description"] == "How many days."


def test_a_parameter_without_docs_has_no_description() -> None:
    def f(x: int) -> int:
        return x

    assert "description" not in ai_function(f).parameters["properties"]["x"]


class Address(BaseModel):
    street: str
    zip_code: str


async def test_pydantic_model_parameters_are_validated_into_model_instances() -> None:
    received: list[Any] = []

    @ai_function
    def ship(address: Address, express: bool = False) -> str:
        """Ship a parcel."""
        received.append(address)
        return address.zip_code

    result = await ship.invoke({"address": {"street": "Main St", "zip_code": "12345"}})
    assert result == "12345"
    assert isinstance(received[0], Address)
    assert received[0].street == "Main St"
    schema = ship.parameters
    assert schema["required"] == ["address"]
    assert "$defs" in schema and "Address" in schema["$defs"]


async def test_sync_functions_are_called_with_validated_arguments() -> None:
    assert await ai_function(get_weather).invoke({"city": "Oslo", "days": "5"}) == "Oslo:5"


async def test_async_functions_are_awaited() -> None:
    @ai_function
    async def slow_add(a: int, b: int) -> int:
        """Add slowly."""
        await asyncio.sleep(0)
        return a + b

    assert await slow_add.invoke({"a": 2, "b": 3}) == 5


async def test_defaults_fill_missing_optional_arguments() -> None:
    assert await ai_function(get_weather).invoke({"city": "Oslo"}) == "Oslo:3"


async def test_a_missing_argument_is_named() -> None:
    with pytest.raises(ToolArgumentsError, match=r"argument 'city': Field required"):
        await ai_function(get_weather).invoke({"days": 2})


async def test_a_wrongly_typed_argument_is_named() -> None:
    with pytest.raises(ToolArgumentsError, match=r"argument 'days'"):
        await ai_function(get_weather).invoke({"city": "Oslo", "days": "many"})


async def test_an_unexpected_argument_is_named() -> None:
    with pytest.raises(ToolArgumentsError, match=r"argument 'country'"):
        await ai_function(get_weather).invoke({"city": "Oslo", "country": "NO"})


async def test_a_nested_model_error_names_the_path() -> None:
    @ai_function
    def ship(address: Address) -> None:
        """Ship."""

    with pytest.raises(ToolArgumentsError, match=r"argument 'address.zip_code'"):
        await ship.invoke({"address": {"street": "x"}})


async def test_invalid_arguments_never_reach_the_function() -> None:
    calls: list[str] = []

    @ai_function
    def record(city: str) -> None:
        """Record."""
        calls.append(city)

    with pytest.raises(ToolArgumentsError):
        await record.invoke({"city": ["not", "a", "str"]})
    assert calls == []


def test_arguments_that_are_not_an_object_are_refused_naming_the_tool() -> None:
    with pytest.raises(
        ToolArgumentsError, match="arguments for 'get_weather' must be a JSON object"
    ):
        ai_function(get_weather).validate_arguments(["Oslo"])  # type: ignore[arg-type]


def test_a_lambda_needs_a_name() -> None:
    with pytest.raises(ToolError, match="tool name '<lambda>' is invalid"):
        ai_function(lambda x: x)


def test_an_invalid_tool_name_is_refused() -> None:
    with pytest.raises(ToolError, match="tool name 'get weather' is invalid"):
        ai_function(name="get weather")(get_weather)


def test_a_declaration_name_is_validated_too() -> None:
    with pytest.raises(ToolError, match="is invalid"):
        AIFunctionDeclaration("x" * 65)


def test_positional_only_parameters_are_refused() -> None:
    def f(x: int, /) -> int:
        return x

    with pytest.raises(ToolError, match="positional-only parameter 'x'"):
        ai_function(f)


def test_declaration_keeps_name_description_and_schema() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}
    declaration = AIFunctionDeclaration("search", "Search.", schema)
    assert declaration.to_dict() == {
        "name": "search",
        "description": "Search.",
        "parameters": schema,
    }
    assert not isinstance(declaration, AIFunction)


# -- approval_required -------------------------------------------------------------------


def test_bare_approval_required_wraps_a_plain_function() -> None:
    @approval_required
    def delete_file(path: str) -> str:
        """Delete a file."""
        return path

    assert isinstance(delete_file, ApprovalRequiredAIFunction)
    assert delete_file.name == "delete_file"
    assert delete_file.description == "Delete a file."
    assert delete_file.requires_approval({"path": "/tmp"})


async def test_approval_required_on_an_ai_function_still_runs_it() -> None:
    tool = approval_required(ai_function(get_weather))
    assert isinstance(tool, ApprovalRequiredAIFunction)
    assert tool.parameters == ai_function(get_weather).parameters
    assert await tool.invoke({"city": "Rome"}) == "Rome:3"


def test_when_decides_per_call_from_the_arguments() -> None:
    @approval_required(when=lambda args: args["path"].startswith("/etc"))
    def delete_file(path: str) -> None:
        """Delete a file."""

    assert delete_file.requires_approval({"path": "/etc/passwd"})
    assert not delete_file.requires_approval({"path": "/tmp/x"})


def test_a_when_predicate_that_raises_means_approval_is_needed() -> None:
    tool = approval_required(when=lambda args: args["missing"])(get_weather)
    assert tool.requires_approval({"city": "x"})


def test_when_sees_the_arguments_converted_as_the_tool_receives_them() -> None:
    seen: list[dict[str, Any]] = []

    def recursive_only(args: Any) -> bool:
        seen.append(dict(args))
        return args["recursive"] is True

    @approval_required(when=recursive_only)
    def rm(path: str, recursive: bool = False) -> None:
        """Remove a path."""

    assert rm.requires_approval({"path": "/", "recursive": 1})
    assert rm.requires_approval({"path": "/", "recursive": "true"})
    assert not rm.requires_approval({"path": "/tmp/x"})
    assert seen == [
        {"path": "/", "recursive": True},
        {"path": "/", "recursive": True},
        {"path": "/tmp/x", "recursive": False},
    ]


def test_arguments_that_do_not_validate_or_hold_nan_need_approval() -> None:
    @approval_required(when=lambda args: args["amount"] > 100)
    def transfer(amount: float) -> None:
        """Send money."""

    assert not transfer.requires_approval({"amount": 5})
    assert transfer.requires_approval({"amount": "lots"})
    assert transfer.requires_approval({"amount": 5, "extra": 1})
    assert transfer.requires_approval({"amount": float("nan")})
    assert transfer.requires_approval(None)


def test_approval_required_is_discoverable_through_further_wrappers() -> None:
    class Audited(DelegatingAIFunction):
        pass

    marked = approval_required(get_weather)
    wrapped = Audited(Audited(marked))
    assert wrapped.get_service(ApprovalRequiredAIFunction) is marked
    assert wrapped.get_service(Audited) is wrapped
    assert ai_function(get_weather).get_service(ApprovalRequiredAIFunction) is None


def test_get_service_returns_the_tool_for_its_own_type() -> None:
    tool = ai_function(get_weather)
    assert tool.get_service(AIFunction) is tool
    assert tool.get_service(int) is None


def test_allow_edits_is_kept_on_the_wrapper() -> None:
    tool = approval_required(allow_edits=False)(get_weather)
    assert tool.allow_edits is False
    assert approval_required(get_weather).allow_edits is True
