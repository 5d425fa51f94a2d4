"""A hook awaited just before a tool call starts; one that raises stops the call and the run."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from ._contents import FunctionCallContent

ToolStartHook = Callable[[FunctionCallContent], Awaitable[None]]

_hook: ContextVar[ToolStartHook | None] = ContextVar("agui_chat_tool_start", default=None)


@contextmanager
def on_tool_start(hook: ToolStartHook) -> Iterator[None]:
    """Await ``hook(call)`` before every tool call the code inside the ``with`` starts."""
    token = _hook.set(hook)
    try:
        yield
    finally:
        _hook.reset(token)


async def tool_starting(call: FunctionCallContent) -> None:
    """Called by the tool loop just before it invokes the tool of ``call``."""
    hook = _hook.get()
    if hook is not None:
        await hook(call)
