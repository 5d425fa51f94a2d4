"""Delegating middleware: the tool loop, logging, retries and option defaults.

The tool loop and the middleware built on it are imported on first use (PEP 562), so a module
that needs only ``current_invocation`` or ``DelegatingChatClient`` (an MCP toolset, a
provider adapter) does not pay for them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._delegating import DelegatingChatClient
from ._invocation import FunctionInvocationContext, current_invocation

if TYPE_CHECKING:
    from ._builder import ChatClientBuilder
    from ._configure import ConfigureOptionsChatClient
    from ._function_invocation import FunctionInvokingChatClient
    from ._logging import LoggingChatClient
    from ._retry import RetryingChatClient

__all__ = [
    "ChatClientBuilder",
    "ConfigureOptionsChatClient",
    "DelegatingChatClient",
    "FunctionInvocationContext",
    "FunctionInvokingChatClient",
    "LoggingChatClient",
    "RetryingChatClient",
    "current_invocation",
]


def __getattr__(name: str) -> Any:
    found: Any
    if name == "ChatClientBuilder":
        from ._builder import ChatClientBuilder as found
    elif name == "ConfigureOptionsChatClient":
        from ._configure import ConfigureOptionsChatClient as found
    elif name == "FunctionInvokingChatClient":
        from ._function_invocation import FunctionInvokingChatClient as found
    elif name == "LoggingChatClient":
        from ._logging import LoggingChatClient as found
    elif name == "RetryingChatClient":
        from ._retry import RetryingChatClient as found
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}", name=name)
    globals()[name] = found  # asked once
    return found
