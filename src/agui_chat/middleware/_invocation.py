"""Running one tool call: the invocation context, result texts and error capture."""

from __future__ import annotations

import builtins
import importlib
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, NoReturn

from .._contents import FunctionCallContent, FunctionResultContent
from .._exceptions import ToolArgumentsError
from .._hitl_contents import InterruptResponseContent
from .._input import InputRequired, provide_answers
from .._messages import ChatMessage
from .._options import ChatOptions
from .._tools import AIFunction
from ..consent._plan import ToolStartGuard

_log = logging.getLogger("agui_chat.tools")

COMPLETED_TEXT = "Success: Function completed."
FAILED_TEXT = "Error: Function failed."


def not_found_text(name: str) -> str:
    return f'Error: Requested function "{name}" not found.'


def raise_failures(exceptions: Sequence[Exception], rounds: int) -> NoReturn:
    """Raise the one exception, or an ``ExceptionGroup`` (MEAI's ``AggregateException``)."""
    if len(exceptions) == 1:
        raise exceptions[0]
    group: Any = getattr(builtins, "ExceptionGroup", None)
    if group is None:  # Python 3.10: the backport (a dependency there)
        group = importlib.import_module("exceptiongroup").ExceptionGroup
    raise group(f"{len(exceptions)} tool calls failed ({rounds} round trips in a row)", exceptions)


@dataclass
class FunctionInvocationContext:
    """What a running tool can learn about its call (see :func:`current_invocation`). Set
    ``terminate = True`` to end the tool loop after this batch: the model is not called
    again."""

    function: AIFunction
    arguments: dict[str, Any]
    call: FunctionCallContent
    messages: Sequence[ChatMessage]
    options: ChatOptions | None
    iteration: int
    function_call_index: int = 0
    function_count: int = 1
    is_streaming: bool = False
    terminate: bool = False


#: Replaces how every function is invoked (MEAI's ``FunctionInvoker``): returns the result,
#: or an awaitable of it. The default is ``context.function.invoke(context.arguments)``.
FunctionInvoker = Callable[[FunctionInvocationContext], "Awaitable[Any] | Any"]


_current: ContextVar[FunctionInvocationContext | None] = ContextVar(
    "agui_chat_current_invocation", default=None
)


def current_invocation() -> FunctionInvocationContext | None:
    """The invocation context of the tool running now, or ``None`` outside a tool."""
    return _current.get()


@dataclass
class InvocationOutcome:
    """What became of one call: a result, or a question for the person."""

    call: FunctionCallContent
    result: FunctionResultContent | None = None
    input_required: InputRequired | None = None
    terminate: bool = False
    failed: bool = False
    exception: BaseException | None = field(default=None, repr=False)


async def invoke_call(
    context: FunctionInvocationContext,
    *,
    answers: Mapping[str, InterruptResponseContent] | None = None,
    include_detailed_errors: bool = False,
    invoker: FunctionInvoker | None = None,
    guard: ToolStartGuard | None = None,
) -> InvocationOutcome:
    """Run ``context.function`` for ``context.call``, after ``guard`` lets it start (what
    that raises propagates).
    Tool failures become an error result for the model (the exception text only with
    ``include_detailed_errors``, the reason always for invalid arguments); ``InputRequired``
    becomes a question; cancellation propagates."""
    function, call = context.function, context.call
    if guard is not None:
        await guard.starting(call)
    token = _current.set(context)
    try:
        with provide_answers(answers or {}):
            _log.debug("invoking %s", function.name)
            if invoker is None:
                value = await function.invoke(call.arguments)
            else:
                value = invoker(context)
                if inspect.isawaitable(value):
                    value = await value
    except InputRequired as question:
        return InvocationOutcome(call, input_required=question, terminate=context.terminate)
    except ToolArgumentsError as exc:
        _log.info("tool %s called with invalid arguments: %s", function.name, exc)
        result = FunctionResultContent(call.call_id, f"Error: {exc}", exception=exc)
        return InvocationOutcome(call, result, failed=True, exception=exc)
    except Exception as exc:
        _log.exception("tool %s failed", function.name)
        text = f"{FAILED_TEXT} Exception: {exc}" if include_detailed_errors else FAILED_TEXT
        result = FunctionResultContent(call.call_id, text, exception=exc)
        return InvocationOutcome(
            call, result, failed=True, exception=exc, terminate=context.terminate
        )
    finally:
        _current.reset(token)
    if isinstance(value, FunctionResultContent) and value.call_id == call.call_id:
        result = value
    else:
        result = FunctionResultContent(call.call_id, COMPLETED_TEXT if value is None else value)
    return InvocationOutcome(call, result, terminate=context.terminate)
