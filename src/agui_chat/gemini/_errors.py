"""``google-genai`` SDK errors (and the transport's, which it lets through), mapped into our
exception tree, with the SDK's chained as ``__cause__``::

    httpx2.TimeoutException            -> ServiceTimeoutError
    httpx2.ConnectError                -> ConnectError
    other httpx2.TransportError        -> TransportError
    APIError 401 / 403                 -> AuthenticationError
    APIError 429                       -> RateLimitError (retry_after from Retry-After, else
                                          the error's RetryInfo.retryDelay)
    APIError 502 / 503 / 504           -> ServiceUnavailableError (retry_after too)
    other APIError                     -> HTTPStatusError (status_code, body)
    anything else the SDK raises       -> ChatClientError
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx2
from google.genai import errors

from .._exceptions import (
    AuthenticationError,
    ChatClientError,
    ConnectError,
    HTTPStatusError,
    RateLimitError,
    ServiceTimeoutError,
    ServiceUnavailableError,
    TransportError,
)
from ..middleware._retry import parse_retry_after

__all__ = ["SDK_ERRORS", "map_error"]

#: What a call through the SDK can raise that is not a bug of ours.
SDK_ERRORS: tuple[type[Exception], ...] = (errors.APIError, httpx2.TransportError, ValueError)

_UNAVAILABLE = frozenset({502, 503, 504})
_SECONDS = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")


def map_error(exc: Exception, service: str) -> ChatClientError:
    """Our error for ``exc``; ``service`` names who answered (for the message)."""
    if isinstance(exc, httpx2.TimeoutException):
        return ServiceTimeoutError(f"{service} did not answer in time: {exc}")
    if isinstance(exc, httpx2.ConnectError):
        return ConnectError(f"could not reach {service}: {exc}")
    if isinstance(exc, httpx2.TransportError):
        return TransportError(f"the connection to {service} broke: {exc}")
    if isinstance(exc, errors.APIError):
        return _status_error(exc, service)
    return ChatClientError(f"{service} request failed: {exc}")


def _status_error(exc: errors.APIError, service: str) -> HTTPStatusError:
    status = int(exc.code or 0)
    message = f"{service} answered HTTP {status}: {exc.message or exc.status or exc}"
    body = json.dumps(exc.details) if exc.details is not None else ""
    if status in (401, 403):
        return AuthenticationError(message, status_code=status, body=body)
    if status == 429 or status in _UNAVAILABLE:
        headers = getattr(exc.response, "headers", None)
        retry_after = parse_retry_after(headers.get("retry-after") if headers else None)
        if retry_after is None:
            retry_after = _retry_delay(exc.details)
        kind = RateLimitError if status == 429 else ServiceUnavailableError
        return kind(message, status_code=status, body=body, retry_after=retry_after)
    return HTTPStatusError(message, status_code=status, body=body)


def _retry_delay(details: Any) -> float | None:
    """``retryDelay`` ("17s") of a ``google.rpc.RetryInfo`` in the error body, if any."""
    error = details.get("error", details) if isinstance(details, dict) else None
    for item in (error.get("details") if isinstance(error, dict) else None) or ():
        delay = item.get("retryDelay") if isinstance(item, dict) else None
        match = _SECONDS.match(delay) if isinstance(delay, str) else None
        if match:
            return float(match.group(1))
    return None
