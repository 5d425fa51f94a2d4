"""agui_chat: a Microsoft.Extensions.AI-style chat-client layer for Python, with human in
the loop over the AG-UI protocol. The public surface is what this module re-exports."""

from typing import TYPE_CHECKING

from ._client import BaseChatClient, ChatClient
from ._contents import (
    AIContent,
    DataContent,
    ErrorContent,
    FunctionCallContent,
    FunctionCallUpdateContent,
    FunctionResultContent,
    TextContent,
    TextReasoningContent,
    ToolCallContent,
    ToolResultContent,
    UriContent,
    UsageContent,
)
from ._exceptions import (
    AGUIChatError,
    ApprovalStoreError,
    ApprovalStoreMisconfiguredError,
    ApprovalStoreResetError,
    ApprovalStoreUnavailableError,
    ApprovalStoreValueError,
    ApproverNotAllowedError,
    AskAgainError,
    AuditChainError,
    AuthenticationError,
    ChatClientError,
    ConfigurationError,
    ConnectError,
    DuplicateResponseError,
    DuplicateToolError,
    ExpiredRequestError,
    HTTPStatusError,
    HumanInTheLoopError,
    InvalidHistoryError,
    InvalidResponseError,
    ProtocolError,
    RateLimitError,
    RefusalError,
    ResumeRetryError,
    RunError,
    ServiceTimeoutError,
    ServiceUnavailableError,
    StructuredOutputError,
    ToolArgumentsError,
    ToolError,
    TransientError,
    TransportError,
    TruncatedStreamError,
    UnansweredRequestError,
    UnknownResponseError,
)
from ._hitl_contents import (
    InputRequestContent,
    InputResponseContent,
    InterruptRequestContent,
    InterruptResponseContent,
    ToolApprovalRequestContent,
    ToolApprovalResponseContent,
    without_pause,
)
from ._input import InputRequired, request_input
from ._messages import ChatMessage
from ._options import ChatOptions, ChatToolMode
from ._principal import Principal
from ._response_format import ChatResponseFormat
from ._responses import ChatResponse, ChatResponseUpdate
from ._role_and_finish_reason import ChatFinishReason, ChatRole
from ._structured import get_structured_response
from ._sync import SyncChatClient
from ._tool_registry import ToolSource
from ._tools import (
    AIFunction,
    AIFunctionDeclaration,
    AITool,
    ApprovalRequiredAIFunction,
    DelegatingAIFunction,
    ai_function,
    approval_required,
)
from ._usage import UsageDetails
from ._version import __version__
from .middleware import DelegatingChatClient, FunctionInvocationContext, current_invocation

if TYPE_CHECKING:
    from .middleware import (
        ChatClientBuilder,
        ConfigureOptionsChatClient,
        FunctionInvokingChatClient,
        LoggingChatClient,
        RetryingChatClient,
    )

__all__ = [
    "AGUIChatError",
    "AIContent",
    "AIFunction",
    "AIFunctionDeclaration",
    "AITool",
    "ApprovalRequiredAIFunction",
    "ApprovalStoreError",
    "ApprovalStoreMisconfiguredError",
    "ApprovalStoreResetError",
    "ApprovalStoreUnavailableError",
    "ApprovalStoreValueError",
    "ApproverNotAllowedError",
    "AskAgainError",
    "AuditChainError",
    "AuthenticationError",
    "BaseChatClient",
    "ChatClient",
    "ChatClientBuilder",
    "ChatClientError",
    "ChatFinishReason",
    "ChatMessage",
    "ChatOptions",
    "ChatResponse",
    "ChatResponseFormat",
    "ChatResponseUpdate",
    "ChatRole",
    "ChatToolMode",
    "ConfigurationError",
    "ConfigureOptionsChatClient",
    "ConnectError",
    "DataContent",
    "DelegatingAIFunction",
    "DelegatingChatClient",
    "DuplicateResponseError",
    "DuplicateToolError",
    "ErrorContent",
    "ExpiredRequestError",
    "FunctionCallContent",
    "FunctionCallUpdateContent",
    "FunctionInvocationContext",
    "FunctionInvokingChatClient",
    "FunctionResultContent",
    "HTTPStatusError",
    "HumanInTheLoopError",
    "InputRequestContent",
    "InputRequired",
    "InputResponseContent",
    "InterruptRequestContent",
    "InterruptResponseContent",
    "InvalidHistoryError",
    "InvalidResponseError",
    "LoggingChatClient",
    "Principal",
    "ProtocolError",
    "RateLimitError",
    "RefusalError",
    "ResumeRetryError",
    "RetryingChatClient",
    "RunError",
    "ServiceTimeoutError",
    "ServiceUnavailableError",
    "StructuredOutputError",
    "SyncChatClient",
    "TextContent",
    "TextReasoningContent",
    "ToolApprovalRequestContent",
    "ToolApprovalResponseContent",
    "ToolArgumentsError",
    "ToolCallContent",
    "ToolError",
    "ToolResultContent",
    "ToolSource",
    "TransientError",
    "TransportError",
    "TruncatedStreamError",
    "UnansweredRequestError",
    "UnknownResponseError",
    "UriContent",
    "UsageContent",
    "UsageDetails",
    "__version__",
    "ai_function",
    "approval_required",
    "current_invocation",
    "get_structured_response",
    "request_input",
    "without_pause",
]


def __getattr__(name: str) -> object:
    """The tool loop and the middleware on it, imported on first use; an adapter's name asked
    of ``agui_chat``: an ``ImportError`` naming its one home."""
    from . import middleware  # already imported: its names load on first use

    if name in middleware.__all__:
        found = globals()[name] = getattr(middleware, name)
        return found
    if name in ("AGUIServer", "AGUIChatClient"):
        raise ImportError(f"{name} is not in agui_chat: from agui_chat.agui import {name}")
    raise AttributeError(f"module 'agui_chat' has no attribute {name!r}", name=name)
