"""Client dialects: reading and answering peers that pause their own way (``docs/interop.md``).

``"langgraph"``: ag-ui-langgraph's default pause (``CUSTOM`` ``on_interrupt`` events and an
outcome-less ``RUN_FINISHED``), answered through ``forwardedProps.command.resume``;
``"langchain-hitl"``: ``HumanInTheLoopMiddleware``'s interrupts, read as approvals and
answered with its decisions. Each is used when the peer speaks it, and said once per thread.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..._contents import FunctionCallContent, ToolCallContent
from ..._exceptions import InvalidResponseError, ProtocolError
from ..._hitl_contents import CANCELLED_REASON, InputRequestContent, ToolApprovalRequestContent
from ..._messages import ChatMessage
from ..._responses import ChatResponseUpdate
from ...consent._rules import check_approval, read_approval_payload
from ._resume import DIALECT_KEY, LANGCHAIN_HITL, resume_entries
from ._updates import INTERRUPT_KEY

AGUI = "agui"
LANGGRAPH = "langgraph"
DIALECTS = (AGUI, LANGGRAPH, LANGCHAIN_HITL)

Warn = Callable[[str, str], None]  # (dialect, what it does), once per thread
FindCall = Callable[[str | None, str, Any], FunctionCallContent | None]
Event = dict[str, Any]

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
    if not names or not set(names) <= set(DIALECTS):
        raise ValueError(
            f"dialect must be None (chosen from what the peer sends) or among {DIALECTS}, "
            f"got {dialect!r}"
        )
    return frozenset(names) - {AGUI}


class DialectReader:
    """One run's incoming side: the events it watches (``WATCHED``), what it delivers instead
    of them (:meth:`event`) and the requests it reads in their dialects (:meth:`update`)."""

    WATCHED = frozenset({"RUN_STARTED", "RUN_ERROR", "RUN_FINISHED", "CUSTOM"})

    def __init__(self, enabled: frozenset[str], warn: Warn, find_call: FindCall) -> None:
        self._enabled = enabled
        self._warn = warn
        self._find_call = find_call
        self._legacy = LangGraphLegacyReader() if LANGGRAPH in enabled else None
        self._rewritten = False

    def event(self, event: dict[str, Any]) -> dict[str, Any]:
        rewritten = self._legacy.read(event) if self._legacy is not None else None
        self._rewritten = rewritten is not None
        if rewritten is not None:
            self._warn(LANGGRAPH, _READS[LANGGRAPH])
        return rewritten or event

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
        interrupt = props[INTERRUPT_KEY]  # set by the update mapper
        used = [LANGGRAPH] if self._rewritten else []
        out: list[InputRequestContent] = [request]
        value = hitl_value(interrupt) if LANGCHAIN_HITL in self._enabled else None
        if value is not None:
            used.append(LANGCHAIN_HITL)
            self._warn(LANGCHAIN_HITL, _READS[LANGCHAIN_HITL])
            out = list(approvals_for(interrupt, value, self._find_call, props))
        for content in out if used else ():
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
    answers = _per_interrupt(pairs, warn)  # each AG-UI entry unchanged outside the dialects
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
    ids = {langgraph_id(_interrupt_of(r)) for r, _ in pairs}
    return len(ids) > 1 and all(langgraph_metadata(_interrupt_of(r)) is not None for r, _ in pairs)


def _per_interrupt(
    pairs: list[tuple[InputRequestContent, dict[str, Any]]], warn: Warn
) -> list[_Answer]:
    """One answer per interrupt: LangChain's decisions (a batch's in one ``{"decisions"}``),
    else the payload (or LangGraph's cancel sentinel)."""
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
            interrupt_id = entry["interruptId"]
            if isinstance(batch, Mapping):
                interrupt_id = str(batch["interruptId"])
                if interrupt_id in batches:
                    batches[interrupt_id].append(value)
                    continue
                value = {"decisions": batches.setdefault(interrupt_id, [value])}
                lg_id = langgraph_id({"id": interrupt_id})
            resolved = {"interruptId": interrupt_id, "status": "resolved", "payload": value}
            out.append((resolved, value, lg_id))
        elif entry["status"] == "cancelled":
            sentinel = {CANCELLED_SENTINEL: True, "interrupt_id": entry["interruptId"]}
            out.append((entry, sentinel, lg_id))
        else:
            out.append((entry, entry.get("payload"), lg_id))
    return out


# ---------------------------------------------------------------- LangGraph

#: What ag-ui-langgraph itself turns a cancelled AG-UI resume entry into (its graphs know it).
CANCELLED_SENTINEL = "__agui_cancelled__"
#: The id given to an ``on_interrupt`` whose LangGraph interrupt id was not sent.
LEGACY_INTERRUPT_ID_PREFIX = "langgraph-interrupt:"

_FIELDS = (
    ("toolCallId", "tool_call_id"),
    ("responseSchema", "response_schema"),
    ("expiresAt", "expires_at"),
)


class LangGraphLegacyReader:
    """Reads one stream's ``on_interrupt`` events and the outcome-less finish after them."""

    def __init__(self) -> None:
        self._values: list[tuple[Any, str | None]] = []

    def read(self, event: Event) -> Event | None:
        """The event to deliver instead of ``event`` (``None``: deliver it as is): only an
        outcome-less ``RUN_FINISHED`` after ``on_interrupt`` events is rewritten."""
        kind = event["type"]
        if kind == "CUSTOM":
            if event.get("name") == "on_interrupt":
                value = event.get("value")
                if isinstance(value, str):
                    with contextlib.suppress(ValueError):  # else a plain string: the value itself
                        value = json.loads(value)
                raw = event.get("rawEvent")
                lg_id = raw.get("id") if isinstance(raw, Mapping) else None
                self._values.append((value, lg_id if isinstance(lg_id, str) else None))
            return None
        values, self._values = self._values, []  # a run started, failed or finished
        if kind != "RUN_FINISHED" or not values or event.get("outcome") is not None:
            return None
        interrupts = [
            _interrupt(value, interrupt_id, f"{event['runId']}:{index}")
            for index, (value, interrupt_id) in enumerate(values)
        ]
        return {**event, "outcome": {"type": "interrupt", "interrupts": interrupts}}


def _interrupt(value: Any, interrupt_id: str | None, fallback: str) -> dict[str, Any]:
    """An AG-UI interrupt for one LangGraph interrupt value, as ag-ui-langgraph maps it."""
    fields = value if isinstance(value, Mapping) else {}
    reason = fields.get("reason")
    out: dict[str, Any] = {
        "id": interrupt_id or LEGACY_INTERRUPT_ID_PREFIX + fallback,
        "reason": reason if isinstance(reason, str) else "langgraph:interrupt",
    }
    for message in (value, fields.get("message"), fields.get("description")):
        if isinstance(message, str):
            out["message"] = message
            break
    for camel, snake in _FIELDS:
        found = fields.get(camel, fields.get(snake))
        if found is not None:
            out[camel] = found
    langgraph: dict[str, Any] = {"raw": value}
    if interrupt_id is not None:
        langgraph["interruptId"] = interrupt_id
    out["metadata"] = {"langgraph": langgraph}
    return out


def langgraph_metadata(interrupt: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """An AG-UI interrupt's ``metadata.langgraph``: present when it is ag-ui-langgraph's."""
    metadata = interrupt.get("metadata")
    langgraph = metadata.get("langgraph") if isinstance(metadata, Mapping) else None
    return langgraph if isinstance(langgraph, Mapping) else None


def langgraph_id(interrupt: Mapping[str, Any]) -> str | None:
    """The LangGraph interrupt id of an AG-UI interrupt, when the peer sent it."""
    interrupt_id = interrupt.get("id")
    if not isinstance(interrupt_id, str) or interrupt_id.startswith(LEGACY_INTERRUPT_ID_PREFIX):
        return None
    return interrupt_id


# ---------------------------------------------------------------- LangChain HITL middleware

#: On a request content of a batched interrupt: ``{"interruptId", "index", "count"}``.
BATCH_KEY = "agui_langchain_batch"


def hitl_value(interrupt: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The LangChain ``HumanInTheLoopMiddleware`` value an AG-UI interrupt carries, if any."""
    raw = (langgraph_metadata(interrupt) or {}).get("raw")
    if not isinstance(raw, Mapping):
        return None
    if raw.get("type") == "tool_approval" and isinstance(raw.get("name"), str):
        return raw
    requests = raw.get("action_requests")
    if isinstance(requests, list) and requests and all(_is_action(a) for a in requests):
        return raw
    return None


def _is_action(action: Any) -> bool:
    return isinstance(action, Mapping) and isinstance(action.get("name"), str)


def approvals_for(
    interrupt: Mapping[str, Any], value: Mapping[str, Any], find_call: FindCall, props: Any
) -> list[ToolApprovalRequestContent]:
    """The approval requests for a LangChain HITL interrupt. ``find_call(call_id, name,
    args)`` finds the call the stream showed; ``props`` are the request's properties."""
    interrupt_id = str(interrupt["id"])
    expires_at = interrupt.get("expiresAt")
    # A schema the interrupt carries describes LangChain's decisions, not the AG-UI answer the
    # person gives (which becomes a decision when it is sent): the answer is not held to it.
    props = {
        **props,
        INTERRUPT_KEY: {k: v for k, v in interrupt.items() if k != "responseSchema"},
    }
    per_call = value.get("type") == "tool_approval"
    actions: list[Any] = [value] if per_call else list(value["action_requests"])
    configs = value.get("review_configs")
    allowed = {
        c.get("action_name"): c.get("allowed_decisions")
        for c in (configs if isinstance(configs, list) else [])
        if isinstance(c, Mapping)
    }
    out = []
    for index, action in enumerate(actions):
        name = action["name"]
        call_id = _text(action.get("tool_call_id")) if per_call else None
        fallback_id = call_id or (interrupt_id if per_call else f"{interrupt_id}:{index}")
        # A call the stream never showed is the peer's (a ToolCallContent, which no tool loop
        # runs): its approval can only be answered to the peer, even when a local tool has
        # its name, and it is never sent back as a call the model made.
        call: ToolCallContent = find_call(call_id, name, action) or ToolCallContent(
            fallback_id, name, dict(action.get("args") or {})
        )
        decisions = allowed.get(name)
        batch = {"interruptId": interrupt_id, "index": index, "count": len(actions)}
        out.append(
            ToolApprovalRequestContent(
                f"{interrupt_id}#{index}" if len(actions) > 1 else interrupt_id,
                call,
                message=_text(action.get("description")),
                allow_edits=not isinstance(decisions, list) or "edit" in decisions,
                expires_at=expires_at,
                additional_properties=dict(props) if per_call else {**props, BATCH_KEY: batch},
            )
        )
    return out


def decision(request: ToolApprovalRequestContent, entry: Mapping[str, Any]) -> dict[str, Any]:
    """LangChain's decision for a checked resume entry, its payload read by the one approval
    payload model (an unknown key raises ``InvalidResponseError`` before anything is sent)."""
    if entry.get("status") == "cancelled":
        return {"type": "reject", "message": CANCELLED_REASON}
    given = entry.get("payload")
    if isinstance(given, Mapping) and "type" in given:
        return _given_decision(request, given)
    payload = read_approval_payload(
        given, where=f"answer to {request.request_id!r}", request_ids=[request.request_id]
    )
    if not payload.approved:
        reason = payload.reason
        return {"type": "reject", "message": reason} if reason else {"type": "reject"}
    if payload.edited_args is not None:
        return {
            "type": "edit",
            "edited_action": {"name": request.tool_call.name, "args": payload.edited_args},
        }
    return {"type": "approve"}


#: LangChain's decisions and the members each may carry besides ``type``.
_DECISIONS: dict[str, frozenset[str]] = {
    "approve": frozenset(),
    "reject": frozenset({"message"}),
    "edit": frozenset({"edited_action"}),
}


def _given_decision(
    request: ToolApprovalRequestContent, given: Mapping[str, Any]
) -> dict[str, Any]:
    """A LangChain decision the person gave as it is (``InterruptResponseContent`` with
    ``{"type": "approve"}``, ...), checked: anything else raises ``InvalidResponseError``
    before anything is sent, so a decision is never sent as another one."""
    rid = request.request_id
    kind, action = given.get("type"), given.get("edited_action")
    problem = None
    if kind not in _DECISIONS:
        problem = f"has type {kind!r}"
    elif extra := set(given) - {"type"} - _DECISIONS[kind]:
        problem = f"has unknown key(s) {sorted(extra)} for a {kind!r} decision"
    elif kind == "reject" and not isinstance(given.get("message", ""), str):
        problem = "has a message that is not a string"
    elif kind == "edit" and not (
        isinstance(action, Mapping)
        and set(action) == {"name", "args"}
        and action["name"] == request.tool_call.name
        and isinstance(action["args"], Mapping)
    ):
        problem = (
            f"has an edited_action that is not {{name: {request.tool_call.name!r}, args: {{...}}}}"
        )
    if problem is not None:
        raise InvalidResponseError(
            f"answer to {rid!r} is not a LangChain decision: it {problem}; give "
            '{"type": "approve"}, {"type": "reject", "message": ...} or {"type": "edit", '
            '"edited_action": {"name": ..., "args": {...}}}, or answer with '
            "request.create_response(...)",
            request_ids=[rid],
        )
    if kind != "reject":  # the consent rules, as for any approval: expiry, edits offered
        check_approval(
            rid,
            approved=True,
            edited_arguments=action["args"] if isinstance(action, Mapping) else None,
            allow_edits=request.allow_edits,
            expires_at=request.expires_at,
        )
    copied: dict[str, Any] = json.loads(json.dumps(dict(given)))  # plain JSON, not shared
    return copied


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None
