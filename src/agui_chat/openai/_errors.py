"""``openai`` SDK errors, mapped into our exception tree.

Each SDK error becomes one of ours, with the SDK's chained as ``__cause__``::

    APITimeoutError                       -> ServiceTimeoutError
    APIConnectionError                    -> ConnectError
    APIStatusError 401 / 403              -> AuthenticationError
    APIStatusError 429                    -> RateLimitError (retry_after from Retry-After)
    APIStatusError 502 / 503 / 504        -> ServiceUnavailableError (retry_after too)
    other APIStatusError                  -> HTTPStatusError (status_code, body)
    APIResponseValidationError            -> ProtocolError
    APIError (an error event in a stream) -> RunError (code from the error object)
    any other OpenAIError                 -> ChatClientError
"""

from __future__ import annotations

import json
from typing import Any

import openai

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
from .._network_failure import network_failure
from ..middleware._retry import parse_retry_after

__all__ = ["map_error"]

_UNAVAILABLE = frozenset({502, 503, 504})


def map_error(exc: openai.OpenAIError, service: str) -> ChatClientError:
    """Our error for ``exc``; ``service`` names who answered (for the message)."""
    if isinstance(exc, openai.APITimeoutError):
        return ServiceTimeoutError(f"{service} did not answer in time: {exc}")
    if isinstance(exc, openai.APIConnectionError):
        failure = network_failure(exc) or "no connection"  # DNS, refused or TLS, in words
        return ConnectError(f"could not reach {service}: {failure} ({_cause(exc)})")
    if isinstance(exc, openai.APIStatusError):
        return _status_error(exc, service)
    if isinstance(exc, openai.APIResponseValidationError):
        return ProtocolError(f"{service} sent a response that does not fit its schema: {exc}")
    if isinstance(exc, openai.APIError):
        return RunError(f"{service} reported an error: {exc.message}", code=exc.code)
    return ChatClientError(f"{service} request failed: {exc}")


def _status_error(exc: openai.APIStatusError, service: str) -> HTTPStatusError:
    status = exc.status_code
    # The body's own message, when the server sent an OpenAI error object, reads best.
    detail = exc.body.get("message") if isinstance(exc.body, dict) else None
    message = f"{service} answered HTTP {status}: {detail or exc.message}"
    body = _body_text(exc)
    if status in (401, 403):
        return AuthenticationError(message, status_code=status, body=body)
    if status == 429:
        return RateLimitError(
            message, status_code=status, body=body, retry_after=_retry_after(exc.response.headers)
        )
    if status in _UNAVAILABLE:
        return ServiceUnavailableError(
            message, status_code=status, body=body, retry_after=_retry_after(exc.response.headers)
        )
    return HTTPStatusError(message, status_code=status, body=body)


def _body_text(exc: openai.APIStatusError) -> str:
    try:
        return exc.response.text
    except Exception:  # a streamed body that was never read
        return json.dumps(exc.body) if exc.body is not None else ""


def _cause(exc: BaseException) -> str:
    """What caused the connection error (the SDK's own text is generic): the network error at
    the root of the chain when there is one, else the direct cause."""
    root, link = None, exc.__cause__
    while link is not None:  # the deepest network error of the chain
        root = link if isinstance(link, OSError) else root
        link = link.__cause__ or link.__context__
    if root is not None:
        return f"{type(root).__name__}: {root}"
    cause = exc.__cause__
    return f"{exc} ({type(cause).__name__}: {cause})" if cause is not None else str(exc)


def _retry_after(headers: Any) -> float | None:
    """Seconds to wait, from ``retry-after-ms`` (OpenAI's) or ``Retry-After`` (seconds or an
    HTTP date); ``None`` when neither is there or readable."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(float(millis) / 1000.0, 0.0)
        except ValueError:
            pass
    return parse_retry_after(headers.get("retry-after"))
