"""``anthropic`` SDK errors, mapped into our exception tree.

Each SDK error becomes one of ours, with the SDK's chained as ``__cause__``::

    APITimeoutError                       -> ServiceTimeoutError
    APIConnectionError                    -> ConnectError
    APIStatusError 401 / 403              -> AuthenticationError
    APIStatusError 429                    -> RateLimitError (retry_after from Retry-After)
    APIStatusError 502 / 503 / 504 / 529  -> ServiceUnavailableError (retry_after too)
    other APIStatusError                  -> HTTPStatusError (status_code, body)
    an error event inside a stream        -> RunError (code: the error's type)
    APIResponseValidationError            -> ProtocolError
    any other AnthropicError              -> ChatClientError
"""

from __future__ import annotations

import json

import anthropic

from .._exceptions import (
    AuthenticationError,
    ChatClientError,
    ConnectError,
    HTTPStatusError,
    ProtocolError,
    RateLimitError,
    RunError,
    ServiceTimeoutError,
    ServiceUnavailableError,
)
from ..middleware._retry import parse_retry_after

__all__ = ["map_error"]

# 529 is Anthropic's "overloaded": as transient as a 503.
_UNAVAILABLE = frozenset({502, 503, 504, 529})


def map_error(exc: anthropic.AnthropicError, service: str) -> ChatClientError:
    """Our error for ``exc``; ``service`` names who answered (for the message)."""
    if isinstance(exc, anthropic.APITimeoutError):
        return ServiceTimeoutError(f"{service} did not answer in time: {exc}")
    if isinstance(exc, anthropic.APIConnectionError):
        cause = exc.__cause__
        detail = f" ({type(cause).__name__}: {cause})" if cause is not None else ""
        return ConnectError(f"could not reach {service}: {exc}{detail}")
    if isinstance(exc, anthropic.APIStatusError):
        if exc.status_code < 400:  # the stream had begun (HTTP 200), then carried an error
            detail = _body_message(exc.body) or exc.message
            kind = getattr(exc, "type", None)
            return RunError(
                f"{service} reported an error in the stream: {detail}",
                code=kind if isinstance(kind, str) else None,
            )
        return _status_error(exc, service)
    if isinstance(exc, anthropic.APIResponseValidationError):
        return ProtocolError(f"{service} sent a response that does not fit its schema: {exc}")
    return ChatClientError(f"{service} request failed: {exc}")


def _status_error(exc: anthropic.APIStatusError, service: str) -> HTTPStatusError:
    status = exc.status_code
    detail = getattr(exc, "api_message", None) or _body_message(exc.body) or exc.message
    message = f"{service} answered HTTP {status}: {detail}"
    try:
        body = exc.response.text
    except Exception:  # a streamed body that was never read
        body = json.dumps(exc.body) if exc.body is not None else ""
    if status in (401, 403):
        return AuthenticationError(message, status_code=status, body=body)
    retry_after = parse_retry_after(exc.response.headers.get("retry-after"))
    if status == 429:
        return RateLimitError(message, status_code=status, body=body, retry_after=retry_after)
    if status in _UNAVAILABLE:
        return ServiceUnavailableError(
            message, status_code=status, body=body, retry_after=retry_after
        )
    return HTTPStatusError(message, status_code=status, body=body)


def _body_message(body: object) -> str | None:
    """``error.message`` of an Anthropic error body, if it is one."""
    error = body.get("error") if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return message if isinstance(message, str) and message else None
