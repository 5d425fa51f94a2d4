"""Delegating middleware: the tool loop, logging, retries and option defaults."""

from ._builder import ChatClientBuilder
from ._configure import ConfigureOptionsChatClient
from ._delegating import DelegatingChatClient
from ._function_invocation import FunctionInvokingChatClient
from ._invocation import FunctionInvocationContext, current_invocation
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
