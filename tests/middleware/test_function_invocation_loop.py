"""FunctionInvokingChatClient: the tool loop and its settings, streaming and non-streaming."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from loop_support import Ask, call, results_for, scripted, seen

from agui_chat import (
    AIFunctionDeclaration,
    ChatFinishReason,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ChatToolMode,
    FunctionCallContent,
    FunctionInvokingChatClient,
    FunctionResultContent,
    InputRequired,
    UsageDetails,
    ai_function,
    approval_required,
    current_invocation,
)
from meai_texts import COMPLETED, FAILED, failed, not_found


def weather_tool(runs: list[dict[str, Any]]) -> Any:
    @ai_function
    def get_weather(city: str, days: int = 1) -> str:
        """Get the weather for a city."""
        runs.append({"city": city, "days": days})
        return f"sunny in {city}"

    return get_weather


def failing_tool(runs: list[str], message: str = "disk full") -> Any:
    @ai_function
    def save(name: str) -> str:
        """Save something."""
        runs.append(name)
        raise OSError(message)

    return save


# -- the loop ----------------------------------------------------------------------------


async def test_tool_results_are_fed_back_and_the_whole_transcript_is_returned(ask: Ask) -> None:
    runs: list[dict[str, Any]] = []
    model = scripted([call("c1", "get_weather", city="Paris")], "It is sunny in Paris.")
    client = FunctionInvokingChatClient(model)

    response = await ask(client, "Weather in Paris?", ChatOptions(tools=[weather_tool(runs)]))

    assert runs == [{"city": "Paris", "days": 1}]
    assert seen(model, 1) == [
        "user: Weather in Paris?",
        'assistant: call c1 get_weather {"city": "Paris"}',
        "tool: result c1 sunny in Paris",
    ]
    assert [m.role.value for m in response.messages] == ["assistant", "tool", "assistant"]
    # The call that ran is marked informational (MEAI): a stacked loop or a replay skips it.
    assert response.messages[0].contents == [
        FunctionCallContent("c1", "get_weather", {"city": "Paris"}, informational_only=True)
    ]
    assert results_for(response.messages, "c1") == ["sunny in Paris"]
    assert response.messages[-1].text == "It is sunny in Paris."
    assert response.finish_reason == ChatFinishReason.STOP


async def test_several_round_trips_run_until_the_model_answers(ask: Ask) -> None:
    runs: list[dict[str, Any]] = []
    model = scripted(
        [call("c1", "get_weather", city="Oslo")],
        [call("c2", "get_weather", city="Rome", days=2)],
        "Done.",
    )
    response = await ask(
        FunctionInvokingChatClient(model), "both", ChatOptions(tools=[weather_tool(runs)])
    )
    assert [r["city"] for r in runs] == ["Oslo", "Rome"]
    assert len(model.calls) == 3
    assert seen(model)[-1] == "tool: result c2 sunny in Rome"
    assert response.text == "Done."


async def test_an_answer_without_tool_calls_needs_one_round_trip(ask: Ask) -> None:
    model = scripted("Hello!")
    response = await ask(FunctionInvokingChatClient(model), "hi", ChatOptions(tools=[]))
    assert response.text == "Hello!"
    assert len(model.calls) == 1


async def test_the_callers_history_is_not_changed(ask: Ask) -> None:
    history = [ChatMessage("user", "Weather?")]
    model = scripted([call("c1", "get_weather", city="Oslo")], "ok")
    await ask(FunctionInvokingChatClient(model), history, ChatOptions(tools=[weather_tool([])]))
    assert [m.text for m in history] == ["Weather?"]


async def test_a_tool_returning_none_reports_success(ask: Ask) -> None:
    @ai_function
    def ping() -> None:
        """Ping."""

    model = scripted([call("c1", "ping")], "pong")
    await ask(FunctionInvokingChatClient(model), "ping", ChatOptions(tools=[ping]))
    assert seen(model)[-1] == f"tool: result c1 {COMPLETED}"


async def test_a_tool_returning_its_own_result_content_passes_it_through(ask: Ask) -> None:
    @ai_function
    def rich() -> FunctionResultContent:
        """Rich."""
        return FunctionResultContent("c1", {"rows": 2}, additional_properties={"ui": "table"})

    model = scripted([call("c1", "rich")], "ok")
    await ask(FunctionInvokingChatClient(model), "go", ChatOptions(tools=[rich]))
    result = model.calls[-1][0][-1].contents[0]
    assert isinstance(result, FunctionResultContent)
    assert (result.result, result.additional_properties) == ({"rows": 2}, {"ui": "table"})


async def test_calls_of_one_batch_get_their_results_in_one_tool_message(ask: Ask) -> None:
    runs: list[dict[str, Any]] = []
    model = scripted(
        [call("c1", "get_weather", city="Oslo"), call("c2", "get_weather", city="Rome")], "ok"
    )
    await ask(FunctionInvokingChatClient(model), "go", ChatOptions(tools=[weather_tool(runs)]))
    assert seen(model)[-1] == "tool: result c1 sunny in Oslo | result c2 sunny in Rome"


async def test_usage_is_summed_across_round_trips(ask: Ask) -> None:
    model = scripted(
        ChatResponse(
            ChatMessage("assistant", [call("c1", "get_weather", city="Oslo")]),
            usage=UsageDetails(input_token_count=10, output_token_count=2),
        ),
        ChatResponse(
            ChatMessage("assistant", "ok"),
            usage=UsageDetails(input_token_count=20, output_token_count=3),
        ),
    )
    response = await ask(
        FunctionInvokingChatClient(model), "go", ChatOptions(tools=[weather_tool([])])
    )
    assert response.usage == UsageDetails(input_token_count=30, output_token_count=5)


# -- invalid arguments -------------------------------------------------------------------


async def test_invalid_arguments_give_the_model_an_error_naming_them(ask: Ask) -> None:
    runs: list[dict[str, Any]] = []
    model = scripted([call("c1", "get_weather", city="Oslo", days="many")], "sorry")
    await ask(FunctionInvokingChatClient(model), "go", ChatOptions(tools=[weather_tool(runs)]))
    assert runs == []
    [result] = results_for(model.calls[-1][0], "c1")
    assert result.startswith("Error: invalid arguments for 'get_weather'")
    assert "argument 'days'" in result


async def test_arguments_that_are_not_json_give_the_model_an_error(ask: Ask) -> None:
    runs: list[dict[str, Any]] = []
    bad = FunctionCallContent.from_json_arguments("c1", "get_weather", '{"city": ')
    model = scripted([bad], "sorry")
    await ask(FunctionInvokingChatClient(model), "go", ChatOptions(tools=[weather_tool(runs)]))
    assert runs == []
    [result] = results_for(model.calls[-1][0], "c1")
    assert result.startswith("Error: invalid arguments for 'get_weather'")


async def test_argument_text_with_no_reason_given_tells_the_model_it_is_not_an_object(
    ask: Ask,
) -> None:
    """A model adapter kept the argument text but no parse error (here a JSON array): the
    tool does not run and the model is told the arguments are not a JSON object."""
    runs: list[dict[str, Any]] = []
    bad = FunctionCallContent("c1", "get_weather", None, raw_arguments='["Oslo"]')
    model = scripted([bad], "sorry")
    await ask(FunctionInvokingChatClient(model), "go", ChatOptions(tools=[weather_tool(runs)]))
    assert runs == []
    assert results_for(model.calls[-1][0], "c1") == [
        "Error: invalid arguments for 'get_weather': arguments are not a JSON object"
    ]


# -- max_iterations ----------------------------------------------------------------------


async def test_tools_are_withdrawn_on_the_last_round_trip(ask: Ask) -> None:
    runs: list[dict[str, Any]] = []
    tool = weather_tool(runs)
    model = scripted(
        [call("c1", "get_weather", city="Oslo")],
        [call("c2", "get_weather", city="Rome")],
        [call("c3", "get_weather", city="Nice")],
    )
    options = ChatOptions(tools=[tool], tool_mode=ChatToolMode.AUTO)
    client = FunctionInvokingChatClient(model, max_iterations=2)  # 2 tool rounds + the answer

    response = await ask(client, "go", options)

    assert len(model.calls) == 3
    assert [o.tools if o else None for _, o in model.calls] == [[tool], [tool], None]
    assert model.calls[2][1] is not None and model.calls[2][1].tool_mode is None
    assert [r["city"] for r in runs] == ["Oslo", "Rome"]
    assert results_for(response.messages, "c3") == []
    assert options.tools == [tool]


async def test_max_iterations_of_one_allows_one_tool_round_then_the_answer(ask: Ask) -> None:
    runs: list[dict[str, Any]] = []
    model = scripted([call("c1", "get_weather", city="Oslo")], "Cold.")
    client = FunctionInvokingChatClient(model, max_iterations=1)
    response = await ask(client, "go", ChatOptions(tools=[weather_tool(runs)]))
    assert [r["city"] for r in runs] == ["Oslo"]
    assert model.calls[0][1] is not None and model.calls[0][1].tools is not None
    assert model.calls[1][1] is not None and model.calls[1][1].tools is None
    assert response.text == "Cold."


@pytest.mark.parametrize("options", [None, ChatOptions()], ids=["no options", "no tools"])
async def test_the_last_round_trip_without_tools_in_the_options_still_answers(
    ask: Ask, options: ChatOptions | None
) -> None:
    """The loop's own tools only (none in the options): the last round trip has nothing to
    withdraw from the options, and the model answers."""
    runs: list[dict[str, Any]] = []
    model = scripted([call("c1", "get_weather", city="Oslo")], "Cold.")
    client = FunctionInvokingChatClient(
        model, additional_tools=[weather_tool(runs)], max_iterations=1
    )
    response = await ask(client, "go", options)
    assert [r["city"] for r in runs] == ["Oslo"]
    assert response.text == "Cold."
    assert len(model.calls) == 2


async def test_a_call_on_the_last_round_trip_is_neither_run_nor_surfaced(ask: Ask) -> None:
    deleted: list[str] = []

    @approval_required
    def delete_file(path: str) -> str:
        """Delete a file."""
        deleted.append(path)
        return path

    model = scripted([call("c0", "no_such_tool")], [call("c1", "delete_file", path="/tmp/a")])
    client = FunctionInvokingChatClient(model, max_iterations=1)
    response = await ask(client, "go", ChatOptions(tools=[delete_file]))
    assert deleted == []
    assert response.input_requests == []
    # Marked informational: no later answer (a question the model sent along) can run it.
    assert response.messages[-1].contents == [
        FunctionCallContent("c1", "delete_file", {"path": "/tmp/a"}, informational_only=True)
    ]
    assert response.finish_reason == ChatFinishReason.STOP


def test_max_iterations_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_iterations must be an int >= 1"):
        FunctionInvokingChatClient(scripted(), max_iterations=0)


# -- max_consecutive_errors --------------------------------------------------------------


def _always(reply: Any, times: int) -> list[Any]:
    return [reply] * times


async def test_too_many_failing_round_trips_in_a_row_raise_the_tools_error(ask: Ask) -> None:
    runs: list[str] = []
    model = scripted(*_always(lambda m, o: [call(f"c{len(m)}", "save", name="x")], 10))
    client = FunctionInvokingChatClient(model, max_consecutive_errors=2)
    with pytest.raises(OSError, match="disk full"):
        await ask(client, "go", ChatOptions(tools=[failing_tool(runs)]))
    assert len(runs) == 3
    assert len(model.calls) == 3


async def test_failures_up_to_the_limit_are_reported_to_the_model(ask: Ask) -> None:
    runs: list[str] = []
    model = scripted([call("c1", "save", name="a")], [call("c2", "save", name="b")], "I give up.")
    client = FunctionInvokingChatClient(model, max_consecutive_errors=2)
    response = await ask(client, "go", ChatOptions(tools=[failing_tool(runs)]))
    assert response.messages[-1].text == "I give up."
    assert results_for(model.calls[-1][0], "c2") == [FAILED]


async def test_a_clean_round_trip_resets_the_error_count(ask: Ask) -> None:
    runs: list[str] = []
    save = failing_tool(runs)
    model = scripted(
        [call("c1", "save", name="a")],
        [call("c2", "save", name="b")],
        [call("c3", "get_weather", city="Oslo")],
        [call("c4", "save", name="c")],
        [call("c5", "save", name="d")],
        "done",
    )
    client = FunctionInvokingChatClient(model, max_consecutive_errors=2)
    response = await ask(client, "go", ChatOptions(tools=[save, weather_tool([])]))
    assert response.messages[-1].text == "done"
    assert runs == ["a", "b", "c", "d"]


async def test_zero_consecutive_errors_raises_on_the_first_failure(ask: Ask) -> None:
    runs: list[str] = []
    model = scripted([call("c1", "save", name="a")], "unreachable")
    client = FunctionInvokingChatClient(model, max_consecutive_errors=0)
    with pytest.raises(OSError, match="disk full"):
        await ask(client, "go", ChatOptions(tools=[failing_tool(runs)]))
    assert (len(runs), len(model.calls)) == (1, 1)


# -- errors the model is told about -------------------------------------------------------


async def test_a_failing_tool_gives_the_model_a_generic_error_by_default(ask: Ask) -> None:
    model = scripted([call("c1", "save", name="a")], "sorry")
    await ask(FunctionInvokingChatClient(model), "go", ChatOptions(tools=[failing_tool([])]))
    assert results_for(model.calls[-1][0], "c1") == [FAILED]


async def test_include_detailed_errors_tells_the_model_the_exception(ask: Ask) -> None:
    model = scripted([call("c1", "save", name="a")], "sorry")
    client = FunctionInvokingChatClient(model, include_detailed_errors=True)
    await ask(client, "go", ChatOptions(tools=[failing_tool([])]))
    assert results_for(model.calls[-1][0], "c1") == [failed("disk full")]


async def test_an_unknown_tool_gives_the_model_the_not_found_text(ask: Ask) -> None:
    model = scripted([call("c1", "teleport", to="Mars")], "I cannot.")
    response = await ask(
        FunctionInvokingChatClient(model), "go", ChatOptions(tools=[weather_tool([])])
    )
    assert results_for(model.calls[-1][0], "c1") == [not_found("teleport")]
    assert response.messages[-1].text == "I cannot."


async def test_terminate_on_unknown_calls_hands_the_call_to_the_caller(ask: Ask) -> None:
    model = scripted([call("c1", "teleport", to="Mars")])
    client = FunctionInvokingChatClient(model, terminate_on_unknown_calls=True)
    response = await ask(client, "go", ChatOptions(tools=[weather_tool([])]))
    assert len(model.calls) == 1
    assert response.messages[-1].contents == [call("c1", "teleport", to="Mars")]
    assert results_for(response.messages, "c1") == []
    assert response.finish_reason == ChatFinishReason.TOOL_CALLS


# -- client-side tools and additional tools ----------------------------------------------


LOCATE = AIFunctionDeclaration(
    "get_location", "Where the user is.", {"type": "object", "properties": {}}
)


async def test_a_declaration_only_tool_hands_the_call_to_the_caller(ask: Ask) -> None:
    model = scripted([call("c1", "get_location")])
    response = await ask(
        FunctionInvokingChatClient(model), "where am I?", ChatOptions(tools=[LOCATE])
    )
    assert len(model.calls) == 1
    assert response.messages[-1].contents == [call("c1", "get_location")]
    assert response.finish_reason == ChatFinishReason.TOOL_CALLS


async def test_the_callers_result_for_a_client_side_tool_reaches_the_model(ask: Ask) -> None:
    runs: list[dict[str, Any]] = []
    model = scripted(
        [call("c1", "get_location"), call("c2", "get_weather", city="Oslo")], "Sunny where you are."
    )
    client = FunctionInvokingChatClient(model)
    options = ChatOptions(tools=[LOCATE, weather_tool(runs)])
    history: list[ChatMessage] = [ChatMessage("user", "weather here?")]

    first = await ask(client, history, options)
    assert runs == [{"city": "Oslo", "days": 1}]
    assert results_for(first.messages, "c2") == ["sunny in Oslo"]
    assert results_for(first.messages, "c1") == []

    history += first.messages
    history.append(ChatMessage("tool", [FunctionResultContent("c1", "Oslo")]))
    second = await ask(client, history, options)

    assert second.text == "Sunny where you are."
    assert len(runs) == 1
    assert seen(model)[-1] == "tool: result c1 Oslo"
    assert "tool: result c2 sunny in Oslo" in seen(model)


async def test_additional_tools_run_but_are_not_advertised(ask: Ask) -> None:
    runs: list[dict[str, Any]] = []
    hidden = weather_tool(runs)
    model = scripted([call("c1", "get_weather", city="Oslo")], "ok")
    client = FunctionInvokingChatClient(model, additional_tools=[hidden])
    await ask(client, "go", ChatOptions())
    assert runs == [{"city": "Oslo", "days": 1}]
    assert all(not (o and o.tools) for _, o in model.calls)
    assert seen(model)[-1] == "tool: result c1 sunny in Oslo"


# -- concurrency -------------------------------------------------------------------------


def overlap_tool(state: dict[str, int]) -> Any:
    @ai_function
    async def slow(n: int) -> int:
        """Slow."""
        state["active"] += 1
        state["peak"] = max(state["peak"], state["active"])
        for _ in range(5):
            await asyncio.sleep(0)
        state["active"] -= 1
        return n

    return slow


async def test_calls_of_a_batch_run_one_after_another_by_default(ask: Ask) -> None:
    state = {"active": 0, "peak": 0}
    model = scripted([call("c1", "slow", n=1), call("c2", "slow", n=2)], "ok")
    await ask(FunctionInvokingChatClient(model), "go", ChatOptions(tools=[overlap_tool(state)]))
    assert state["peak"] == 1
    assert seen(model)[-1] == "tool: result c1 1 | result c2 2"


async def test_allow_concurrent_invocation_overlaps_the_calls_of_a_batch(ask: Ask) -> None:
    state = {"active": 0, "peak": 0}
    model = scripted([call("c1", "slow", n=1), call("c2", "slow", n=2)], "ok")
    client = FunctionInvokingChatClient(model, allow_concurrent_invocation=True)
    await ask(client, "go", ChatOptions(tools=[overlap_tool(state)]))
    assert state["peak"] == 2
    assert seen(model)[-1] == "tool: result c1 1 | result c2 2"


# -- the invocation context --------------------------------------------------------------


async def test_current_invocation_describes_the_running_call(ask: Ask, streaming: bool) -> None:
    contexts: list[Any] = []

    @ai_function
    def inspect_me(x: int) -> str:
        """Inspect."""
        contexts.append(current_invocation())
        return "ok"

    model = scripted(
        [call("c1", "inspect_me", x=1), call("c2", "inspect_me", x=2)],
        [call("c3", "inspect_me", x=3)],
        "done",
    )
    await ask(FunctionInvokingChatClient(model), "go", ChatOptions(tools=[inspect_me]))

    first, second, third = contexts
    assert first.function is inspect_me
    assert first.arguments == {"x": 1}
    assert first.call.call_id == "c1"
    assert (first.function_call_index, first.function_count) == (0, 2)
    assert (second.function_call_index, second.arguments) == (1, {"x": 2})
    assert third.iteration == first.iteration + 1
    assert first.is_streaming is streaming
    assert any(
        c.call_id == "c1"
        for m in first.messages
        for c in m.contents
        if isinstance(c, FunctionCallContent)
    )
    assert current_invocation() is None


async def test_terminate_ends_the_loop_after_the_batch(ask: Ask) -> None:
    runs: list[str] = []

    @ai_function
    def finish(summary: str) -> str:
        """Finish the task."""
        runs.append(summary)
        context = current_invocation()
        assert context is not None
        context.terminate = True
        return "finished"

    model = scripted([call("c1", "finish", summary="all done")])
    response = await ask(FunctionInvokingChatClient(model), "go", ChatOptions(tools=[finish]))
    assert runs == ["all done"]
    assert len(model.calls) == 1
    assert results_for(response.messages, "c1") == ["finished"]
    assert [m.role.value for m in response.messages] == ["assistant", "tool"]


async def test_terminate_skips_the_later_calls_of_a_serial_batch(ask: Ask) -> None:
    runs: list[str] = []

    @ai_function
    def step(name: str) -> str:
        """A step."""
        runs.append(name)
        if name == "stop":
            context = current_invocation()
            assert context is not None
            context.terminate = True
        return name

    model = scripted([call("c1", "step", name="stop"), call("c2", "step", name="later")])
    response = await ask(FunctionInvokingChatClient(model), "go", ChatOptions(tools=[step]))
    assert runs == ["stop"]
    assert results_for(response.messages, "c2") == []


# -- options between round trips ---------------------------------------------------------


async def test_a_required_tool_mode_is_relaxed_after_the_first_round_trip(ask: Ask) -> None:
    model = scripted([call("c1", "get_weather", city="Oslo")], "ok")
    options = ChatOptions(tools=[weather_tool([])], tool_mode=ChatToolMode.REQUIRE_ANY)
    await ask(FunctionInvokingChatClient(model), "go", options)
    modes = [o.tool_mode if o else None for _, o in model.calls]
    assert modes == [ChatToolMode.REQUIRE_ANY, ChatToolMode.AUTO]
    assert options.tool_mode == ChatToolMode.REQUIRE_ANY


async def test_with_a_conversation_id_only_new_messages_are_sent(ask: Ask) -> None:
    model = scripted([call("c1", "get_weather", city="Oslo")], "ok")
    options = ChatOptions(tools=[weather_tool([])], conversation_id="thread-1")
    await ask(FunctionInvokingChatClient(model), "go", options)
    assert seen(model, 1) == ["tool: result c1 sunny in Oslo"]


def reported_conversation() -> ChatResponse:
    return ChatResponse(
        ChatMessage("assistant", [call("c1", "get_weather", city="Oslo")]),
        conversation_id="svc-1",
    )


async def test_a_conversation_id_the_service_reported_is_kept_for_the_next_round_trip(
    ask: Ask,
) -> None:
    """The service answered the first round trip under a conversation id: the next round
    trip goes with that id (and the options' tools and settings), sending only the new
    tool result; the caller's options are left as they were."""
    runs: list[dict[str, Any]] = []
    tool = weather_tool(runs)
    model = scripted(reported_conversation(), "ok")
    options = ChatOptions(tools=[tool], temperature=0.2)
    await ask(FunctionInvokingChatClient(model), "go", options)
    second = model.calls[1][1]
    assert second is not None
    assert (second.conversation_id, second.tools, second.temperature) == ("svc-1", [tool], 0.2)
    assert seen(model, 1) == ["tool: result c1 sunny in Oslo"]
    assert options.conversation_id is None


async def test_a_conversation_id_is_kept_when_the_caller_gave_no_options(ask: Ask) -> None:
    runs: list[dict[str, Any]] = []
    model = scripted(reported_conversation(), "ok")
    client = FunctionInvokingChatClient(model, additional_tools=[weather_tool(runs)])
    await ask(client, "go")
    assert model.calls[0][1] is None
    second = model.calls[1][1]
    assert second is not None and second.conversation_id == "svc-1"
    assert seen(model, 1) == ["tool: result c1 sunny in Oslo"]


async def test_a_tool_raising_input_required_itself_pauses_the_run(ask: Ask) -> None:
    @ai_function
    def pick() -> str:
        """Pick."""
        raise InputRequired("Which one?", key="which")

    model = scripted([call("c1", "pick")])
    response = await ask(FunctionInvokingChatClient(model), "go", ChatOptions(tools=[pick]))
    [question] = response.input_requests
    assert question.message == "Which one?"  # type: ignore[attr-defined]
    assert response.finish_reason == ChatFinishReason.INPUT_REQUIRED
    assert len(model.calls) == 1
