"""MEAI parity, issue 16 items 3-7: the loop's error count, calls without arguments, its
iterations, the invocation context and ``function_invoker``, and failures of a batch, as
MEAI's own tests expect them (FunctionInvokingChatClientTests.cs: same plans, same
inputs), streaming and not."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest
from meai_support import Funcs, invoke, invoke_plan, shape

from agui_chat import (
    AIFunction,
    AITool,
    ApprovalRequiredAIFunction,
    ChatMessage,
    ChatOptions,
    ChatToolMode,
    FunctionCallContent,
    FunctionInvocationContext,
    FunctionInvokingChatClient,
    FunctionResultContent,
    TextContent,
    ToolApprovalRequestContent,
    ai_function,
    approval_required,
    current_invocation,
)
from agui_chat.testing import ScriptedChatClient
from meai_texts import COMPLETED, FAILED

if sys.version_info < (3, 11):  # pragma: no cover
    from exceptiongroup import ExceptionGroup


def fcc(call_id: str, name: str, arguments: dict[str, Any] | None = None) -> FunctionCallContent:
    return FunctionCallContent(call_id, name, arguments)


def assistant(*contents: Any) -> ChatMessage:
    return ChatMessage("assistant", list(contents))


def tool(*results: tuple[str, Any]) -> ChatMessage:
    return ChatMessage("tool", [FunctionResultContent(c, r) for c, r in results])


HELLO = ChatMessage("user", "hello")


# -- item 3: arguments that cannot be parsed count as errors --------------------------------


async def test_unparseable_arguments_count_toward_max_consecutive_errors(streaming: bool) -> None:
    runs: list[str] = []

    @ai_function
    def f(x: int = 0) -> str:
        """F."""
        runs.append("f")
        return "ok"

    model = ScriptedChatClient(
        lambda m, o: [FunctionCallContent.from_json_arguments("c", "f", "{bad")]
    )
    client = FunctionInvokingChatClient(model, max_consecutive_errors=2)
    with pytest.raises(ValueError, match="Expecting property name"):
        if streaming:
            [u async for u in client.get_streaming_response("go", ChatOptions(tools=[f]))]
        else:
            await client.get_response("go", ChatOptions(tools=[f]))
    assert len(model.calls) == 3  # two failed round trips allowed, the third raises
    assert runs == []
    # The model was told why on each round trip before that.
    last_seen = model.calls[-1][0]
    results = [c for m in last_seen for c in m.contents if isinstance(c, FunctionResultContent)]
    assert len(results) == 2 and all("invalid arguments" in str(r.result) for r in results)


async def test_a_clean_round_trip_resets_the_count_of_unparseable_arguments(
    streaming: bool,
) -> None:
    f = Funcs()
    bad = FunctionCallContent.from_json_arguments
    plan = [
        HELLO,
        assistant(bad("c1", "Func2", "{bad")),
        tool(
            (
                "c1",
                "Error: invalid arguments for 'Func2': Expecting property name enclosed in "
                "double quotes: line 1 column 2 (char 1)",
            )
        ),
        assistant(fcc("c2", "Func1")),
        tool(("c2", "Result 1")),
        assistant(bad("c3", "Func2", "[1]")),
        tool(
            (
                "c3",
                "Error: invalid arguments for 'Func2': tool arguments must be a JSON "
                "object, got list",
            )
        ),
        assistant(TextContent("world")),
    ]
    await invoke_plan(
        ChatOptions(tools=[f.func1, f.func2]), plan, streaming=streaming, max_consecutive_errors=1
    )
    assert f.runs == ["Func1"]


# -- item 4: no arguments is not "unparseable" ----------------------------------------------


async def test_a_call_without_arguments_to_a_gated_tool_is_an_approval_request(
    streaming: bool,
) -> None:
    wiped: list[str] = []

    @approval_required
    def wipe() -> str:
        """Wipe the disk."""
        wiped.append("wipe")
        return "wiped"

    response, _ = await invoke(
        ChatOptions(tools=[wipe]),
        [HELLO],
        [[assistant(FunctionCallContent("c1", "wipe"))]],
        streaming=streaming,
    )
    [request] = response.input_requests
    assert isinstance(request, ToolApprovalRequestContent)
    assert request.tool_call.arguments is None and not request.tool_call.unparseable  # type: ignore[attr-defined]
    assert wiped == []

    history = [HELLO, *response.messages, ChatMessage("user", [request.create_response(True)])]
    final, inner = await invoke(
        ChatOptions(tools=[wipe]), history, [[assistant(TextContent("done"))]], streaming=streaming
    )
    assert wiped == ["wipe"]
    assert shape(inner.received[0][-1:]) == shape([tool(("c1", "wiped"))])
    assert final.text == "done"


async def test_a_call_without_arguments_runs_a_tool_that_needs_none(streaming: bool) -> None:
    f = Funcs()
    plan = [
        HELLO,
        assistant(fcc("c1", "Func1")),
        tool(("c1", "Result 1")),
        assistant(TextContent("w")),
    ]
    await invoke_plan(ChatOptions(tools=[f.func1]), plan, streaming=streaming)
    assert f.runs == ["Func1"]


async def test_an_unparseable_call_to_a_gated_tool_is_an_error_not_a_request(
    streaming: bool,
) -> None:
    f = Funcs()
    bad = FunctionCallContent.from_json_arguments("c1", "Func2", '{"i": ')
    assert bad.unparseable and not FunctionCallContent("c2", "Func2").unparseable
    response, _ = await invoke(
        ChatOptions(tools=[ApprovalRequiredAIFunction(f.func2)]),
        [HELLO],
        [[assistant(bad)], [assistant(TextContent("sorry"))]],
        streaming=streaming,
    )
    assert response.input_requests == []
    [result] = [
        c for m in response.messages for c in m.contents if isinstance(c, FunctionResultContent)
    ]
    assert str(result.result).startswith("Error: invalid arguments for 'Func2'")
    assert f.runs == []


# -- item 5: iterations ----------------------------------------------------------------------


async def test_continues_with_successful_calls_until_maximum_iterations(streaming: bool) -> None:
    runs: list[int] = []

    @ai_function(name="VoidReturn")
    def void_return() -> None:
        """Returns nothing."""
        runs.append(1)

    max_iterations = 7
    plan = [HELLO, assistant(fcc("callId0", "VoidReturn"))]
    for i in range(max_iterations):
        plan.append(tool((f"callId{i}", COMPLETED)))
        plan.append(assistant(fcc(f"callId{i + 1}", "VoidReturn")))
    # The plan ends with a call: it is not run, because of the iteration limit.
    _, inner = await invoke_plan(
        ChatOptions(tools=[void_return]), plan, streaming=streaming, max_iterations=max_iterations
    )
    assert len(runs) == max_iterations
    assert len(inner.received) == max_iterations + 1
    last = inner.options[-1]
    assert last is not None and last.tools is None


class ServiceTool(AITool):
    """A tool the model's service runs itself (as MEAI's hosted tools): not a function."""

    def __init__(self) -> None:
        self.name = "web_search"
        self.description = "Run by the service."
        self.additional_properties = {}


async def test_the_last_iteration_keeps_the_tools_that_are_not_functions(streaming: bool) -> None:
    f = Funcs()
    hosted = ServiceTool()
    options = ChatOptions(tools=[f.func1, hosted], tool_mode=ChatToolMode.AUTO)
    plan = [
        HELLO,
        assistant(fcc("c1", "Func1")),
        tool(("c1", "Result 1")),
        assistant(TextContent("Done")),
    ]
    _, inner = await invoke_plan(options, plan, streaming=streaming, max_iterations=1)
    first, last = inner.options
    assert first is not None and first.tools == [f.func1, hosted]
    assert last is not None and last.tools == [hosted] and last.tool_mode is not None
    assert options.tools == [f.func1, hosted]  # the caller's options are not modified


def test_max_iterations_below_one_is_a_clear_error() -> None:
    for bad in (0, -1):
        with pytest.raises(ValueError, match="max_iterations must be an int >= 1"):
            FunctionInvokingChatClient(ScriptedChatClient(lambda m, o: "x"), max_iterations=bad)


# -- item 6: the invocation context, terminate and function_invoker --------------------------


async def test_the_invocation_context_is_seen_by_the_function(streaming: bool) -> None:
    contexts: list[FunctionInvocationContext] = []
    counts: list[int] = []

    async def func1(i: int) -> str:
        """Func1."""
        await asyncio.sleep(0)  # the context follows the call across awaits
        context = current_invocation()
        assert context is not None
        contexts.append(context)
        counts.append(len(context.messages))
        if i == 42:
            context.terminate = True
        return f"Result {i}"

    function = ai_function(name="Func1")(func1)
    before_termination = [
        HELLO,
        assistant(fcc("callId1", "Func1", {"i": 41})),
        tool(("callId1", "Result 41")),
        assistant(fcc("callId2", "Func1", {"i": 42})),
        tool(("callId2", "Result 42")),
    ]
    plan = [
        *before_termination,
        assistant(fcc("callId3", "Func1", {"i": 43})),
        tool(("callId3", "Result 43")),
        assistant(TextContent("world")),
    ]
    await invoke_plan(
        ChatOptions(tools=[function]), plan, streaming=streaming, expected=before_termination
    )
    assert [c.iteration for c in contexts] == [0, 1]  # MEAI counts from 0
    assert [c.terminate for c in contexts] == [False, True]
    assert counts == [2, 4]  # the messages so far, including the call being run
    for c in contexts:
        assert c.function is function and c.call.name == "Func1"
        assert (c.function_call_index, c.function_count) == (0, 1)
        assert c.is_streaming is streaming
    assert current_invocation() is None


async def test_index_and_count_number_the_calls_of_a_batch(streaming: bool) -> None:
    seen: list[tuple[int, int, str]] = []

    @ai_function(name="Func")
    def func(arg: str) -> str:
        """Func."""
        c = current_invocation()
        assert c is not None
        seen.append((c.function_call_index, c.function_count, c.call.call_id))
        return arg + arg

    plan = [
        HELLO,
        assistant(*(fcc(f"c{i}", "Func", {"arg": a}) for i, a in enumerate("xyz"))),
        tool(("c0", "xx"), ("c1", "yy"), ("c2", "zz")),
        assistant(TextContent("done")),
    ]
    await invoke_plan(ChatOptions(tools=[func]), plan, streaming=streaming)
    assert seen == [(0, 3, "c0"), (1, 3, "c1"), (2, 3, "c2")]


async def test_terminate_halts_the_batch_and_the_loop(streaming: bool) -> None:
    """MEAI's HaltFunctionCallingAfterTermination: serially, the calls after the one that
    set ``terminate`` get no result, and the model is not called again."""
    runs: list[str] = []

    @ai_function(name="Search")
    def search(result: str | None = None) -> str | None:
        """Search."""
        runs.append(result or "-")
        if result:
            return result
        c = current_invocation()
        assert c is not None
        c.terminate = True
        return None

    calls = assistant(fcc("callId1", "Search"), fcc("callId2", "Search", {"result": "birds"}))
    plan = [HELLO, calls, tool(("callId1", COMPLETED))]
    await invoke_plan(
        ChatOptions(tools=[search]),
        [*plan, assistant(TextContent("x"))],
        streaming=streaming,
        expected=plan,
    )
    assert runs == ["-"]


async def test_function_invoker_overrides_how_every_function_runs(streaming: bool) -> None:
    f = Funcs()

    @ai_function(name="VoidReturn")
    def void_return(i: int) -> None:
        """Nothing."""

    async def invoker(context: FunctionInvocationContext) -> Any:
        assert isinstance(context.function, AIFunction)
        result = await context.function.invoke(context.arguments)
        return f"{result} from delegate" if isinstance(result, str) else result

    plan = [
        HELLO,
        assistant(fcc("callId1", "Func1")),
        tool(("callId1", "Result 1 from delegate")),
        assistant(fcc("callId2", "Func2", {"i": 42})),
        tool(("callId2", "Result 2: 42 from delegate")),
        assistant(fcc("callId3", "VoidReturn", {"i": 43})),
        tool(("callId3", COMPLETED)),
        assistant(TextContent("world")),
    ]
    options = ChatOptions(tools=[f.func1, f.func2, void_return])
    await invoke_plan(options, plan, streaming=streaming, function_invoker=invoker)
    assert f.runs == ["Func1", "Func2(42)"]


async def test_a_sync_function_invoker_can_sandbox_every_call(streaming: bool) -> None:
    f = Funcs()
    audited: list[str] = []

    def refuse(context: FunctionInvocationContext) -> str:
        audited.append(context.call.name)
        return "refused by the sandbox"

    plan = [
        HELLO,
        assistant(fcc("c1", "Func1")),
        tool(("c1", "refused by the sandbox")),
        assistant(TextContent("ok")),
    ]
    await invoke_plan(
        ChatOptions(tools=[f.func1]), plan, streaming=streaming, function_invoker=refuse
    )
    assert audited == ["Func1"] and f.runs == []


# -- item 7: failures of a batch -------------------------------------------------------------


def _failing_plan(call_index: list[int], *should_throw: bool) -> list[ChatMessage]:
    calls, results = [], []
    for throw in should_throw:
        i = call_index[0]
        call_index[0] += 1
        calls.append(fcc(f"callId{i}", "Func", {"shouldThrow": throw, "callIndex": i}))
        results.append((f"callId{i}", FAILED if throw else COMPLETED))
    return [assistant(*calls), tool(*results)]


@pytest.mark.parametrize("concurrent", [False, True], ids=["serial", "concurrent"])
async def test_continues_with_failing_calls_until_maximum_consecutive_errors(
    streaming: bool, concurrent: bool
) -> None:
    ran: list[int] = []

    @ai_function(name="Func")
    def func(shouldThrow: bool, callIndex: int) -> None:
        """Func."""
        ran.append(callIndex)
        if shouldThrow:
            raise TimeoutError(f"Exception from call {callIndex}")

    index = [0]
    plan = [
        HELLO,
        *_failing_plan(index, True, False),  # 1 failed round trip
        *_failing_plan(index, False, False, False),  # reset
        *_failing_plan(index, False, True, False),  # 1
        *_failing_plan(index, True, True, True),  # 2: one round trip, however many fail
        *_failing_plan(index, True, True),  # 3 > 2: raised
    ]
    options = ChatOptions(tools=[func])
    settings = {"max_consecutive_errors": 2, "allow_concurrent_invocation": concurrent}
    if concurrent:
        with pytest.raises(ExceptionGroup) as group:
            await invoke_plan(options, plan, streaming=streaming, **settings)
        assert [str(e) for e in group.value.exceptions] == [
            "Exception from call 11",
            "Exception from call 12",
        ]
        assert ran[-2:] == [11, 12]
    else:
        with pytest.raises(TimeoutError, match="Exception from call 11"):
            await invoke_plan(options, plan, streaming=streaming, **settings)
        assert ran[-1] == 11  # the serial batch stops at the failure past the limit


@pytest.mark.parametrize("concurrent", [False, True], ids=["serial", "concurrent"])
async def test_can_fail_on_the_first_exception(streaming: bool, concurrent: bool) -> None:
    @ai_function(name="Func")
    def func() -> None:
        """Func."""
        raise TimeoutError("It failed")

    plan = [HELLO, assistant(fcc("callId0", "Func")), tool(("callId0", FAILED))]
    with pytest.raises(TimeoutError, match="It failed"):  # one exception is never wrapped
        await invoke_plan(
            ChatOptions(tools=[func]),
            plan,
            streaming=streaming,
            max_consecutive_errors=0,
            allow_concurrent_invocation=concurrent,
        )


async def test_a_declaration_only_function_is_handed_back_to_the_caller_not_run() -> None:
    """MEAI's ``AsDeclarationOnly``: the model sees the function as it is (name, description,
    schema), and the loop hands its calls to the caller instead of running it."""
    from agui_chat import (
        AIFunctionDeclaration,
        ChatOptions,
        FunctionCallContent,
        FunctionInvokingChatClient,
        ai_function,
    )
    from agui_chat.testing import ScriptedChatClient

    ran: list[str] = []

    @ai_function
    def pick_color(hint: str) -> str:
        """Let the person pick a color in the app."""
        ran.append(hint)
        return "red"

    declared = pick_color.as_declaration_only()
    assert type(declared) is AIFunctionDeclaration
    assert declared.to_dict() == pick_color.to_dict()
    assert declared.additional_properties == pick_color.additional_properties
    model = ScriptedChatClient(
        lambda m, o: [FunctionCallContent("c1", "pick_color", {"hint": "warm"})]
    )
    response = await FunctionInvokingChatClient(model).get_response(
        "pick a color", ChatOptions(tools=[declared])
    )
    assert ran == []
    assert response.finish_reason == "tool_calls"
    [call] = [
        c for m in response.messages for c in m.contents if isinstance(c, FunctionCallContent)
    ]
    assert (call.name, call.arguments) == ("pick_color", {"hint": "warm"})
