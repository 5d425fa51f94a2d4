"""A hook awaited just before a tool call starts.

A host that must know whether a call began (the AG-UI server, which releases the claim of
an approved call whose tool never started) sets one around the run with
:func:`on_tool_start`; the tool loop awaits :func:`tool_starting` before it invokes each
tool. A hook that raises stops the call before the tool starts, and the exception ends the
run. Without a hook it costs one context-variable read per call.
"""

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
