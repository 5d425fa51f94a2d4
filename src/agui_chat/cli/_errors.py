"""What the terminal says when a turn fails: one line, once, with what to do about it.

:func:`explain` turns any of our errors into that line. ``RUN_ERROR`` codes are the stable
ones documented in ``docs/errors.md``; a code not listed here is shown with the server's
own message.
"""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

from .._exceptions import (
    AGUIChatError,
    AuthenticationError,
    ConnectError,
    HTTPStatusError,
    ProtocolError,
    RunError,
    ServiceTimeoutError,
    TransportError,
    TruncatedStreamError,
)
from .._network_failure import REFUSED, network_failure

__all__ = ["CommandError", "ServerFailures", "address", "explain"]


class CommandError(Exception):
    """A problem to report in one line, exiting with status 1."""


#: What a person can do about each ``RUN_ERROR`` code (docs/errors.md has the full table).
_RUN_ERRORS = {
    "APPROVAL_KEY_CHANGED": "the server no longer recognises this approval: it was restarted "
    "or its key changed — ask again",
    "INTERRUPT_KEY_CHANGED": "the server no longer recognises this question: it was restarted "
    "or its key changed — ask again",
    "APPROVAL_FORGED": "the server refused the approval because its id was altered on the way "
    "(APPROVAL_FORGED); nothing ran — ask again",
    "INTERRUPT_FORGED": "the server refused the answer because the question's id was altered "
    "on the way (INTERRUPT_FORGED); nothing ran — ask again",
    "APPROVAL_EXPIRED": "the approval request expired before you approved it; nothing ran — "
    "ask again",
    "INTERRUPT_EXPIRED": "the question expired before you answered it — ask again",
    "RESUME_ALREADY_CONSUMED": "this approval was already used; nothing ran twice — ask again "
    "if you want it to run again",
    "APPROVAL_STORE_UNAVAILABLE": "the server cannot record approvals right now "
    "(APPROVAL_STORE_UNAVAILABLE); nothing ran and your answer was not used — send it again "
    "shortly",
    "APPROVAL_STORE_MISCONFIGURED": "the server's approval store refuses it "
    "(APPROVAL_STORE_MISCONFIGURED: a setting an operator must fix); nothing ran and your "
    "answer was not used — send it again once the store is fixed",
    "APPROVAL_STORE_VALUE_REJECTED": "the server's approval store cannot hold this answer "
    "(APPROVAL_STORE_VALUE_REJECTED); nothing ran",
    "RESUME_IN_PROGRESS": "your answer is being run by another request now "
    "(RESUME_IN_PROGRESS); nothing ran twice — send it again shortly to get its result",
    "RESUME_CLAIM_HELD": "your answer is held by a claim that has not started its tool yet "
    "(RESUME_CLAIM_HELD); nothing was used — send it again shortly",
    "APPROVAL_STORE_RESET": "the server's approval store lost its records since you were asked "
    "(APPROVAL_STORE_RESET); nothing ran — ask again",
    "APPROVAL_AUDIENCE_MISMATCH": "this approval was issued by another server that shares "
    "the key (APPROVAL_AUDIENCE_MISMATCH); nothing ran — ask this server again",
    "APPROVAL_STALE": "the approval request expired long ago and can no longer be answered; "
    "nothing ran — ask again",
    "INTERRUPT_STALE": "the question expired long ago and can no longer be answered — ask again",
    "MODEL_ERROR": "the agent's model service failed (MODEL_ERROR); try again, and if it "
    "persists tell whoever runs the server",
    "AGENT_ERROR": "the agent failed inside the server (AGENT_ERROR); try again, and if it "
    "persists tell whoever runs the server",
}


#: What to say for an error of each kind whose line needs nothing but the error itself, most
#: specific first: ``{where}`` is ``host:port``, ``{exc}`` the error.
_BY_KIND: tuple[tuple[type[AGUIChatError], str], ...] = (
    (ConnectError, "cannot connect to {where}: {exc}"),
    (ServiceTimeoutError, "{where} did not answer in time; try again, or check the server"),
    (
        AuthenticationError,
        "{where} refused the credentials (HTTP {exc.status_code}); pass them with "
        "--header 'Authorization: Bearer …'",
    ),
    (
        TruncatedStreamError,
        "{where} closed the stream before the run finished (the server is at fault); try again",
    ),
    (TransportError, "the connection to {where} broke: {exc}; try again"),
)


#: What the command line adds to a refused connection's advice.
_START_ONE = " (start one with: agui-chat serve)"


def _cut(text: str, limit: int) -> str:
    """``text`` up to ``limit`` characters, saying how many more there were (never silently)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit} more characters]"


def address(url: str) -> str:
    """``host:port`` of ``url`` (the port the scheme implies if none is given)."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{parts.hostname}:{port}"


def explain(exc: AGUIChatError, url: str) -> str:
    """The one line to print for ``exc``, raised while talking to ``url``."""
    where = address(url)
    advised = network_failure(exc, advice=True) if isinstance(exc, TransportError) else None
    if advised is not None:  # DNS, refused, TLS: told apart, each with what to do
        refused = advised.startswith(REFUSED)
        return f"cannot connect to {where}: {advised}{_START_ONE if refused else ''}"
    for kind, line in _BY_KIND:
        if isinstance(exc, kind):
            return line.format(where=where, exc=exc)
    if isinstance(exc, HTTPStatusError):
        if exc.body.lstrip()[:1] == "<":
            return f"{url} answered {exc.status_code} with an HTML page: is this an AG-UI endpoint?"
        detail = _cut(exc.body.strip().splitlines()[0], 200) if exc.body.strip() else ""
        return (
            f"{url} answered HTTP {exc.status_code}"
            + (f" ({detail})" if detail else "")
            + ": is this an AG-UI endpoint, and does it accept this request?"
        )
    if isinstance(exc, ProtocolError):
        text = str(exc)
        if "Content-Type" in text:
            return f"{url} did not answer with an event stream ({text}): is this an AG-UI endpoint?"
        return (
            f"the server at {where} broke the AG-UI protocol: {text}. The server is at fault, "
            "not your input; tell whoever runs it"
        )
    if isinstance(exc, RunError):
        known = _RUN_ERRORS.get(exc.code or "")
        if known is not None:
            return known
        code = f" ({exc.code}; see docs/errors.md)" if exc.code else ""
        return f"the agent's run failed: {exc.message}{code}"
    return str(exc)


class ServerFailures(logging.Filter):
    """While active (``with``), the demo's own in-process server keeps each one-line failure
    of a run (a model that cannot be reached, ...) here instead of logging it, so the demo
    reports it once, as the cause of the ``MODEL_ERROR`` its client receives. A failure
    logged with a traceback (a bug) is still logged."""

    def __init__(self) -> None:
        super().__init__()
        self.last: str | None = None
        self._logger = logging.getLogger("agui_chat.server")

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.ERROR or record.exc_info:
            return True
        self.last = record.getMessage().partition(" failed: ")[2] or record.getMessage()
        return False

    def __enter__(self) -> ServerFailures:
        self._logger.addFilter(self)
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._logger.removeFilter(self)

    def explain(self, exc: RunError) -> str:
        """The line for a run that failed: the model's failure itself when it was that."""
        if exc.code == "MODEL_ERROR" and self.last:
            return f"the model failed: {self.last}"
        return str(exc)
