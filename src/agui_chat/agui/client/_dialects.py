"""Client dialects: reading and answering peers that pause their own way, not AG-UI 1.0's.

Besides AG-UI 1.0 (the default and the reference), ``"langgraph"`` reads ag-ui-langgraph's
default pause (``CUSTOM`` ``on_interrupt`` + an outcome-less ``RUN_FINISHED``) as
interrupts and answers through ``forwardedProps.command.resume`` (also when several
LangGraph interrupts are answered at once, keyed by their ids), and ``"langchain-hitl"``
reads ``HumanInTheLoopMiddleware`` interrupts as approvals answered with its decisions.
Each is chosen from what the peer sends unless ``AGUIChatClient(dialect=...)`` says
otherwise, and says so, once per thread, as a warning. Nothing is retried.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..._contents import FunctionCallContent
from ..._exceptions import ProtocolError
from ..._hitl_contents import InputRequestContent, ToolApprovalRequestContent
from ..._messages import ChatMessage
from ..._responses import ChatResponseUpdate
from ._langchain_hitl import BATCH_KEY, approvals_for, decision, hitl_value
from ._langgraph import (
    CANCELLED_SENTINEL,
    LangGraphLegacyReader,
    is_langgraph_interrupt,
    langgraph_id,
)
from ._resume import resume_entries
from ._updates import INTERRUPT_KEY

__all__ = ["DialectReader", "check_dialect", "outgoing_resume"]

AGUI = "agui"
LANGGRAPH = "langgraph"
LANGCHAIN_HITL = "langchain-hitl"
DIALECTS = (AGUI, LANGGRAPH, LANGCHAIN_HITL)

#: On a request content: the dialects it was read in (and is answered in), e.g.
#: ``["langgraph", "langchain-hitl"]``; absent for AG-UI 1.0.
DIALECT_KEY = "agui_dialect"

Warn = Callable[[str, str], None]  # (dialect, what it does), once per thread

_READS = {
    LANGGRAPH: (
        "reading the peer's LangGraph pause (CUSTOM on_interrupt, RUN_FINISHED without "
        "outcome) as AG-UI interrupts; answers go out as forwardedProps.command.resume "
        "(dialect 'langgraph'; pass dialect='agui' to turn it off)"
    ),
    LANGCHAIN_HITL: (
        "reading LangChain HumanInTheLoopMiddleware interrupts as tool approvals; answers go "
        "out as its approve / reject / edit decisions (dialect 'langchain-hitl'; pass "
        "dialect='agui' to turn it off)"
    ),
}


def check_dialect(dialect: str | Iterable[str] | None) -> frozenset[str]:
    """The dialects a client may use besides AG-UI 1.0, from its ``dialect`` option."""
    if dialect is None:
        return frozenset({LANGGRAPH, LANGCHAIN_HITL})
    names = [dialect] if isinstance(dialect, str) else list(dialect)
    unknown = [n for n in names if n not in DIALECTS]
    if unknown or not names:
        raise ValueError(
            f"dialect must be None (chosen from what the peer sends) or among {DIALECTS}, "
            f"got {dialect!r}"
        )
    return frozenset(names) - {AGUI}


class DialectReader:
    """One run's incoming side: the events it watches (``WATCHED``), what it delivers instead
    of them (:meth:`event`) and the requests it reads in their dialects (:meth:`update`)."""

    WATCHED = frozenset({"RUN_STARTED", "RUN_ERROR", "RUN_FINISHED", "CUSTOM"})

    def __init__(
        self,
        enabled: frozenset[str],
        warn: Warn,
        find_call: Callable[[str | None, str, Any], FunctionCallContent | None],
    ) -> None:
        self._enabled = enabled
        self._warn = warn
        self._find_call = find_call
        self._legacy = LangGraphLegacyReader() if LANGGRAPH in enabled else None
        self._rewritten = False

    def event(self, event: dict[str, Any]) -> dict[str, Any]:
        rewritten = self._legacy.read(event) if self._legacy is not None else None
        self._rewritten = rewritten is not None
        if rewritten is None:
            return event
        self._warn(LANGGRAPH, _READS[LANGGRAPH])
        return rewritten

    def update(self, update: ChatResponseUpdate) -> ChatResponseUpdate:
        """The update with its requests read in their dialects (stamped with them)."""
        if any(isinstance(c, InputRequestContent) for c in update.contents):
            update.contents = [
                read
                for content in update.contents
                for read in (
                    self._read(content) if isinstance(content, InputRequestContent) else [content]
                )
            ]
        return update

    def _read(self, request: InputRequestContent) -> list[InputRequestContent]:
        props = dict(request.additional_properties or {})
        interrupt = props.get(INTERRUPT_KEY)
        used = [LANGGRAPH] if self._rewritten else []
        out: list[InputRequestContent] = [request]
        value = hitl_value(interrupt) if isinstance(interrupt, Mapping) else None
        if value is not None and LANGCHAIN_HITL in self._enabled:
            assert isinstance(interrupt, Mapping)
            used.append(LANGCHAIN_HITL)
            self._warn(LANGCHAIN_HITL, _READS[LANGCHAIN_HITL])
            out = list(approvals_for(interrupt, value, self._find_call, props))
        if used:
            for content in out:
                content.additional_properties = {
                    **(content.additional_properties or {}),
                    DIALECT_KEY: used,
                }
        return out


def outgoing_resume(
    history: Sequence[ChatMessage], enabled: frozenset[str], warn: Warn
) -> tuple[list[dict[str, Any]] | None, Any]:
    """``(resume, command_resume)`` for the next run, checked as for any peer: the AG-UI
    ``resume`` entries, or LangGraph's ``forwardedProps.command.resume``; the other ``None``."""
    pairs = resume_entries(history)
    entries = [entry for _, entry in pairs] or None
    if entries is None or not enabled:
        return entries, None
    legacy = any(LANGGRAPH in _dialects_of(r) for r, _ in pairs)
    several = LANGGRAPH in enabled and _several_langgraph(pairs)
    if not legacy and not several and not any(_dialects_of(r) for r, _ in pairs):
        return entries, None
    answers = _per_interrupt(pairs, warn)
    if not legacy and not several:
        return [entry for entry, _, _ in answers], None
    if not legacy:
        warn(LANGGRAPH, _SEVERAL)
    if len(answers) == 1:
        return None, answers[0][1]
    keyed: dict[str, Any] = {}
    for _, value, lg_id in answers:
        if lg_id is None:
            raise ProtocolError(
                "the server's on_interrupt events carry no LangGraph interrupt ids "
                "(ag-ui-langgraph with emit_raw_events=False), so its several pending "
                "interrupts cannot be answered in one resume: turn on its raw events or "
                "emit_interrupt_outcome=True"
            )
        keyed[lg_id] = value
    return None, keyed


_SEVERAL = (
    "answering several LangGraph interrupts at once through forwardedProps.command.resume, "
    "keyed by LangGraph interrupt id (ag-ui-langgraph's own resume[] handling wraps several "
    "answers in a map no graph reads); dialect 'langgraph', pass dialect='agui' to turn it off"
)


#: One peer interrupt's answer: its AG-UI resume entry, its LangGraph value, its LangGraph id.
_Answer = tuple[dict[str, Any], Any, str | None]


def _dialects_of(request: InputRequestContent) -> list[str]:
    found = (request.additional_properties or {}).get(DIALECT_KEY)
    return list(found) if isinstance(found, list) else []


def _interrupt_of(request: InputRequestContent) -> Mapping[str, Any]:
    found = (request.additional_properties or {}).get(INTERRUPT_KEY)
    return found if isinstance(found, Mapping) else {}


def _several_langgraph(pairs: list[tuple[InputRequestContent, dict[str, Any]]]) -> bool:
    """Several LangGraph interrupts answered at once."""
    ids = {langgraph_id(_interrupt_of(r)) for r, _ in pairs}
    return len(ids) > 1 and all(is_langgraph_interrupt(_interrupt_of(r)) for r, _ in pairs)


def _per_interrupt(
    pairs: list[tuple[InputRequestContent, dict[str, Any]]], warn: Warn
) -> list[_Answer]:
    """One answer per peer interrupt: LangChain decisions for its approvals (a batch's in
    one ``{"decisions": [...]}``), else the payload (LangGraph's cancel sentinel for a
    cancel)."""
    out: list[_Answer] = []
    batches: dict[str, list[Any]] = {}
    for request, entry in pairs:
        interrupt = _interrupt_of(request)
        lg_id = langgraph_id(interrupt)
        if LANGCHAIN_HITL in _dialects_of(request) and isinstance(
            request, ToolApprovalRequestContent
        ):
            warn(LANGCHAIN_HITL, _READS[LANGCHAIN_HITL])
            value: Any = decision(request, entry)
            batch = (request.additional_properties or {}).get(BATCH_KEY)
            if isinstance(batch, Mapping):
                batch_id = str(batch["interruptId"])
                if batch_id in batches:
                    batches[batch_id].append(value)
                    continue
                batches[batch_id] = [value]
                value = {"decisions": batches[batch_id]}
                resolved = {"interruptId": batch_id, "status": "resolved", "payload": value}
                out.append((resolved, value, langgraph_id({"id": batch_id})))
                continue
            resolved = {"interruptId": entry["interruptId"], "status": "resolved", "payload": value}
            out.append((resolved, value, lg_id))
        elif entry["status"] == "cancelled":
            sentinel = {CANCELLED_SENTINEL: True, "interrupt_id": entry["interruptId"]}
            out.append((entry, sentinel, lg_id))
        else:
            out.append((entry, entry.get("payload"), lg_id))
    return out
