"""Every error agui_chat raises, in one tree.

Catch at the level you care about::

    AGUIChatError                      base of everything below
    ├── ChatClientError                talking to a model or an agent failed
    │   ├── TransportError             the request or the stream broke on the network
    │   │   ├── ConnectError           (transient) could not connect
    │   │   └── ServiceTimeoutError    (transient before the first update) timed out
    │   ├── HTTPStatusError            the service answered an error status (.status_code, .body)
    │   │   ├── AuthenticationError    401 / 403
    │   │   ├── RateLimitError         (transient) 429, with .retry_after
    │   │   └── ServiceUnavailableError (transient) 502 / 503 / 504, with .retry_after
    │   ├── ProtocolError              the peer broke the protocol (a stream we reject)
    │   │   └── TruncatedStreamError   the stream ended before the run did
    │   ├── RunError                   the remote run reported its own failure (.code)
    │   │   ├── ResumeRetryError       (transient) answers not usable yet (.retry_after)
    │   │   └── AskAgainError          answers the server will never use: ask the person again
    │   ├── RefusalError               the model refused to answer (.refusal)
    │   └── InvalidHistoryError        (also a ValueError) the history cannot be sent to this
    │                                  model: a tool result answers no call in it (.call_id)
    ├── StructuredOutputError          a reply does not fit the asked-for type (.text, .errors)
    ├── ConfigurationError             (also a ValueError) a server, store or key is set wrongly
    ├── ToolError                      a tool could not be built, declared or called
    │   ├── ToolArgumentsError         arguments do not fit the tool's parameters
    │   └── DuplicateToolError         two tools of one tool set share a name (.name)
    ├── ApprovalStoreError             the store of consumed approvals failed
    │   ├── ApprovalStoreUnavailableError (transient) it cannot be reached; nothing ran
    │   ├── ApprovalStoreResetError    the store lost its records since the token was issued
    │   ├── ApprovalStoreValueError    the store refused a value it cannot hold (not an outage)
    │   └── ApprovalStoreMisconfiguredError the store refuses this server (permissions, a
    │                                  read-only file): an operator must fix it; not an outage
    ├── AuditChainError                the audit trail was altered or cut short (.seq)
    └── HumanInTheLoopError            an answer to a pause is wrong; nothing was run
        ├── UnansweredRequestError     a pending request has no answer (.request_ids)
        ├── UnknownResponseError       an answer names no pending request (.request_ids)
        ├── DuplicateResponseError     a request was answered twice (.request_ids)
        ├── ExpiredRequestError        a request past its expiry was resolved, not cancelled
        └── InvalidResponseError       a payload or edited arguments fail their schema, or
                                       the answers are ambiguous (two calls share an id)
            └── ApproverNotAllowedError who answered may not answer this call (.code)

    TransientError                     mixin: safe to retry before anything was streamed

``InputRequired`` (``agui_chat._input``) is not an error: a tool raises it to ask a person.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


class AGUIChatError(Exception):
    """Base class of every error raised by agui_chat."""


class TransientError(AGUIChatError):
    """Mixin for failures that may succeed if the same request is sent again (the retry
    middleware retries them, only before the first streamed update)."""

    retry_after: float | None = None


class ChatClientError(AGUIChatError):
    """Talking to a model or an agent failed."""


class TransportError(ChatClientError):
    """The request or the response stream broke on the network."""


class ConnectError(TransportError, TransientError):
    """Could not connect to the service."""


class ServiceTimeoutError(TransportError, TransientError):
    """The service did not answer in time."""


class HTTPStatusError(ChatClientError):
    """The service answered with an HTTP error status; no stream was opened."""

    def __init__(
        self,
        message: str,
        *,
        status_code: int,
        body: str = "",
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.body = body
        self.retry_after = retry_after


class AuthenticationError(HTTPStatusError):
    """The service refused the credentials (401 or 403)."""


class RateLimitError(HTTPStatusError, TransientError):
    """The service asked us to slow down (429); see ``retry_after``."""


class ServiceUnavailableError(HTTPStatusError, TransientError):
    """The service is temporarily unavailable (502, 503 or 504)."""


class ProtocolError(ChatClientError):
    """The peer sent something the protocol does not allow; the stream was rejected."""


class TruncatedStreamError(ProtocolError):
    """The stream ended before the run finished; the run has no outcome."""


class RunError(ChatClientError):
    """The remote run reported its own failure (AG-UI ``RUN_ERROR``)."""

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message if code is None else f"{message} (code {code})")
        self.message = message
        self.code = code


class ResumeRetryError(RunError, TransientError):
    """The server could not use the answers yet (its approval store is down, they are being
    run, or a dead worker's claim is waiting out its lease); nothing of them was used, and
    the same answers may be sent again after ``retry_after`` seconds. ``AGUIChatClient``
    retries these itself; it raises this one only when its retries are spent."""

    def __init__(self, message: str, *, code: str | None, retry_after: float | None) -> None:
        super().__init__(message, code=code)
        self.retry_after = retry_after


class AskAgainError(RunError):
    """The server will never use these answers (the approval was used, or its store lost
    its records since it was asked): nothing ran twice; ask the person again."""


class RefusalError(ChatClientError):
    """The model refused the request; ``refusal`` holds its words."""

    def __init__(self, message: str, *, refusal: str, response: Any = None) -> None:
        super().__init__(message)
        self.refusal = refusal
        self.response = response


class InvalidHistoryError(ChatClientError, ValueError):
    """The history cannot be sent to the model as it is: a tool result answers no call
    earlier in it (``call_id``), and the provider needs the call (Gemini names each result
    after its call's function). Nothing was sent."""

    def __init__(self, message: str, *, call_id: str) -> None:
        super().__init__(message)
        self.call_id = call_id


class StructuredOutputError(AGUIChatError):
    """The model's reply does not validate as the requested ``response_format`` type:
    ``text`` is the reply, ``errors`` one line each, ``attempts`` the replies tried."""

    def __init__(
        self,
        message: str,
        *,
        text: str,
        errors: Iterable[str] = (),
        response: Any = None,
        attempts: int = 1,
    ) -> None:
        super().__init__(message)
        self.text = text
        self.errors: tuple[str, ...] = tuple(errors)
        self.response = response
        self.attempts = attempts


class ConfigurationError(AGUIChatError, ValueError):
    """A server, store or signing key is set wrongly (the message names it); nothing ran."""


class ToolError(AGUIChatError):
    """A tool could not be built from a function, declared, or called."""


class ToolArgumentsError(ToolError, ValueError):
    """The arguments of a tool call do not fit the tool's parameters."""


class DuplicateToolError(ToolError):
    """Two different tools of one tool set have the same name (``name``), from any two
    sources; the message names both, and nothing ran."""

    def __init__(self, message: str, *, name: str) -> None:
        super().__init__(message)
        self.name = name


class ApprovalStoreError(AGUIChatError):
    """The store of consumed approvals (see ``agui_chat.stores``) failed."""


class ApprovalStoreUnavailableError(ApprovalStoreError, TransientError):
    """The approval store cannot be reached now (the message names it, never its password);
    nothing ran, and the same answer succeeds once the store is back."""


class ApprovalStoreValueError(ApprovalStoreError):
    """The store refused a value it cannot hold (a result over its size limit); the store is
    up, so sending the same thing again fails the same way. Nothing ran because of it."""


class ApprovalStoreMisconfiguredError(ApprovalStoreError):
    """The store answers but refuses this server: a permission or a missing right on its
    table, a read-only file or replica, a wrong password, a corrupt file. Retrying does not
    help until an operator fixes it (the message says what the store said); nothing ran and
    nothing was used, so the same answer succeeds once it is fixed."""


class ApprovalStoreResetError(ApprovalStoreError):
    """The store's epoch is not the one a claim names: it lost its records since the
    interrupt was issued (Redis restarted without persistence, a recreated database), so it
    cannot tell a used approval from a new one; nothing ran, and the person must be asked
    again."""


class HumanInTheLoopError(AGUIChatError):
    """An answer to a paused run is wrong; nothing was run or sent. ``code`` is the refusal's
    AG-UI ``RUN_ERROR`` code when the consent engine names a more precise one than the class
    does (``APPROVAL_EDIT_NOT_ALLOWED``...)."""

    def __init__(
        self, message: str, *, request_ids: Iterable[str] = (), code: str | None = None
    ) -> None:
        super().__init__(message)
        self.request_ids: tuple[str, ...] = tuple(request_ids)
        self.code = code


class UnansweredRequestError(HumanInTheLoopError):
    """A pending request has no answer; a pause must be answered in one go."""


class UnknownResponseError(HumanInTheLoopError):
    """An answer names a request that is not pending."""


class DuplicateResponseError(HumanInTheLoopError):
    """The same request was answered more than once."""


class ExpiredRequestError(HumanInTheLoopError):
    """A request past its ``expires_at`` was resolved; it can only be cancelled."""


class InvalidResponseError(HumanInTheLoopError):
    """An answer's payload or edited arguments fail their JSON schema, or the answers cannot
    be paired safely (a pending call's id is used twice); nothing was run."""


class ApproverNotAllowedError(InvalidResponseError):
    """Who answered may not answer this call; nothing was used up, so the right person can
    still answer. ``code``: ``APPROVER_NOT_ALLOWED`` (lacks the role, or the tool's predicate
    said no), ``APPROVER_IS_REQUESTER`` (four eyes: the requester answered their own call) or
    ``APPROVER_UNKNOWN`` (nobody answered where somebody must)."""


class AuditChainError(AGUIChatError):
    """The audit trail does not verify: a record was altered, deleted or inserted. ``seq``
    names the first record that breaks the chain."""

    def __init__(self, message: str, *, seq: int) -> None:
        super().__init__(message)
        self.seq = seq
