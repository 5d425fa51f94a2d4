"""Client dialects: reading and answering peers that pause their own way (``docs/interop.md``).

``"langgraph"``: ag-ui-langgraph's default pause (``CUSTOM`` ``on_interrupt`` events and an
outcome-less ``RUN_FINISHED``), answered through ``forwardedProps.command.resume``;
``"langchain-hitl"``: ``HumanInTheLoopMiddleware``'s interrupts, read as approvals and
answered with its decisions; ``"adk"``: Google ADK's tool confirmation (a call to
``adk_request_confirmation``, through ag-ui-adk), read as an approval of the call it confirms
and, in ag-ui-adk's default configuration, answered with the tool message ADK expects. Each
is used when the peer speaks it, and said once per thread.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

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
ADK = "adk"
DIALECTS = (AGUI, LANGGRAPH, LANGCHAIN_HITL, ADK)

Warn = Callable[[str, str], None]  # (dialect, what it does), once per thread
FindCall = Callable[[str | None, str, Any], FunctionCallContent | None]
UnansweredCalls = Callable[[str], list[FunctionCallContent]]  # a run's calls of a name, no result
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
    ADK: (
        "reading ag-ui-adk's pause (a call to ADK's adk_request_confirmation left pending, "
        "RUN_FINISHED without an interrupt outcome) as an approval of the call it confirms; "
        'answers go out as ADK\'s tool message {"confirmed": true|false} for that call '
        "(dialect 'adk'; pass dialect='agui' to turn it off)"
    ),
}
#: Said when ag-ui-adk reports its confirmation as an AG-UI 1.0 interrupt (its
#: ``emit_interrupt_outcome=True``): the answer goes out as ``resume``, only the call differs.
_ADK_CONFIRMS = (
    "showing the call each ADK tool confirmation confirms (metadata.adk.originalFunctionCall), "
    "not the adk_request_confirmation call its interrupt names (dialect 'adk'; pass "
    "dialect='agui' to turn it off)"
)


def check_dialect(dialect: str | Iterable[str] | None) -> frozenset[str]:
    """The dialects a client may use besides AG-UI 1.0, from its ``dialect`` option."""
    if dialect is None:
        return frozenset({LANGGRAPH, LANGCHAIN_HITL, ADK})
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

    def __init__(
        self,
        enabled: frozenset[str],
        warn: Warn,
        find_call: FindCall,
        unanswered_calls: UnansweredCalls,
    ) -> None:
        self._enabled = enabled
        self._warn = warn
        self._find_call = find_call
        self._unanswered_calls = unanswered_calls
        self._legacy = LangGraphLegacyReader() if LANGGRAPH in enabled else None
        self._rewritten: str | None = None  # the dialect that rewrote the last event

    def event(self, event: dict[str, Any]) -> dict[str, Any]:
        rewritten = self._legacy.read(event) if self._legacy is not None else None
        self._rewritten = LANGGRAPH if rewritten is not None else None
        if rewritten is None and ADK in self._enabled and event["type"] == "RUN_FINISHED":
            rewritten = adk_pause(event, self._unanswered_calls(ADK_CONFIRMATION_TOOL))
            self._rewritten = ADK if rewritten is not None else None
        if self._rewritten is not None:
            self._warn(self._rewritten, _READS[self._rewritten])
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
        used = [self._rewritten] if self._rewritten is not None else []
        out: list[InputRequestContent] = [request]
        value = hitl_value(interrupt) if LANGCHAIN_HITL in self._enabled else None
        confirmed = adk_confirmed_call(interrupt) if ADK in self._enabled else None
        if value is not None:
            used.append(LANGCHAIN_HITL)
            self._warn(LANGCHAIN_HITL, _READS[LANGCHAIN_HITL])
            out = list(approvals_for(interrupt, value, self._find_call, props))
        elif confirmed is not None and isinstance(request, ToolApprovalRequestContent):
            if ADK not in used:  # its 1.0 outcome: answered as any, through resume
                self._warn(ADK, _ADK_CONFIRMS)
            out = [approval_of_confirmed_call(request, confirmed, self._find_call)]
        for content in out if used else ():
            content.additional_properties = {
                **(content.additional_properties or {}),
                DIALECT_KEY: used,
            }
        return out


class Outgoing(NamedTuple):
    """How the next run answers a paused one: AG-UI ``resume`` entries, LangGraph's
    ``forwardedProps.command.resume`` value, or tool messages to add to the history (ADK's
    answers to its tool confirmations); what is not used is ``None`` (or empty)."""

    resume: list[dict[str, Any]] | None
    command_resume: Any
    tool_messages: list[dict[str, Any]]

    def add_to(self, run_input: dict[str, Any]) -> None:
        """Put the answers that are not ``resume`` entries into ``run_input``."""
        if self.command_resume is not None:
            forwarded = run_input["forwardedProps"]
            command = forwarded.get("command")
            command = {**(command if isinstance(command, dict) else {})}
            command["resume"] = self.command_resume
            run_input["forwardedProps"] = {**forwarded, "command": command}
        if self.tool_messages:
            run_input["messages"] = with_tool_messages(run_input["messages"], self.tool_messages)


def outgoing_resume(
    history: Sequence[ChatMessage], enabled: frozenset[str], warn: Warn
) -> Outgoing:
    """The answers to the paused run, checked as for any peer, in the convention each of its
    requests was read in."""
    pairs = resume_entries(history)
    tool_messages = [
        adk_answer(request, entry) for request, entry in pairs if ADK in _dialects_of(request)
    ]
    if tool_messages:
        warn(ADK, _READS[ADK])
        pairs = [(r, e) for r, e in pairs if ADK not in _dialects_of(r)]
    resume, command_resume = _resume_or_command(pairs, enabled, warn)
    return Outgoing(resume, command_resume, tool_messages)


def _resume_or_command(
    pairs: list[tuple[InputRequestContent, dict[str, Any]]], enabled: frozenset[str], warn: Warn
) -> tuple[list[dict[str, Any]] | None, Any]:
    """``(resume, command_resume)``: the AG-UI ``resume`` entries, or LangGraph's
    ``forwardedProps.command.resume``; the other ``None``."""
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


# ---------------------------------------------------------------- Google ADK (ag-ui-adk)

#: ADK's own long-running tool that pauses a run for a tool confirmation.
ADK_CONFIRMATION_TOOL = "adk_request_confirmation"


def adk_pause(event: Event, confirmations: list[FunctionCallContent]) -> Event | None:
    """ag-ui-adk's default pause as the AG-UI 1.0 interrupt outcome it leaves out: a run that
    ends without one (or as a plain success) while ``confirmations`` (its calls to
    ``adk_request_confirmation``) have no result. Each interrupt is the one ag-ui-adk itself
    sends with ``emit_interrupt_outcome=True`` (id and ``toolCallId``: the confirmation call's),
    so both configurations are read alike; ``None`` when there is nothing to rewrite."""
    outcome = event.get("outcome")
    if not confirmations or (outcome is not None and outcome.get("type") != "success"):
        return None
    interrupts = []
    for call in confirmations:
        arguments = call.arguments or {}
        confirmation = arguments.get("toolConfirmation")
        hint = confirmation.get("hint") if isinstance(confirmation, Mapping) else None
        interrupt: dict[str, Any] = {
            "id": call.call_id,
            "reason": "confirmation",
            "toolCallId": call.call_id,
            "metadata": {
                "adk": {
                    "originalFunctionCall": arguments.get("originalFunctionCall"),
                    "toolConfirmation": confirmation,
                }
            },
        }
        if isinstance(hint, str) and hint:
            interrupt["message"] = hint
        interrupts.append(interrupt)
    return {**event, "outcome": {"type": "interrupt", "interrupts": interrupts}}


def adk_confirmed_call(interrupt: Mapping[str, Any]) -> tuple[str, str, dict[str, Any]] | None:
    """``(call id, name, arguments)`` of the call an ADK confirmation interrupt confirms (its
    ``metadata.adk.originalFunctionCall``), if it names one."""
    metadata = interrupt.get("metadata")
    adk = metadata.get("adk") if isinstance(metadata, Mapping) else None
    call = adk.get("originalFunctionCall") if isinstance(adk, Mapping) else None
    if not isinstance(call, Mapping):
        return None
    call_id, name, arguments = call.get("id"), call.get("name"), call.get("args", {})
    if not (isinstance(call_id, str) and call_id and isinstance(name, str) and name):
        return None
    if not isinstance(arguments, Mapping):
        return None
    return call_id, name, dict(arguments)


def approval_of_confirmed_call(
    request: ToolApprovalRequestContent,
    confirmed: tuple[str, str, dict[str, Any]],
    find_call: FindCall,
) -> ToolApprovalRequestContent:
    """``request`` naming the call that runs once approved, not ADK's
    ``adk_request_confirmation`` wrapper: the call the stream showed under that id when it
    is that very call, else the call as ADK holds it (a ``ToolCallContent``: the peer's)."""
    call_id, name, arguments = confirmed
    seen = find_call(call_id, name, None)
    shown: ToolCallContent = (
        seen
        if seen is not None and seen.name == name and (seen.arguments or {}) == arguments
        else ToolCallContent(call_id, name, arguments)
    )
    return ToolApprovalRequestContent(
        request.request_id,
        shown,
        message=request.message,
        allow_edits=False,  # ADK's confirmation is yes or no: it runs the call as it holds it
        expires_at=request.expires_at,
        additional_properties=request.additional_properties,
    )


def adk_answer(request: InputRequestContent, entry: Mapping[str, Any]) -> dict[str, Any]:
    """ADK's own answer to its tool confirmation, for a checked resume ``entry``: a tool
    message for the ``adk_request_confirmation`` call, ``{"confirmed": true|false}`` (a
    rejection's reason in ADK's ``payload``; a cancel is a refusal). Its id is the
    interrupt's, so the same answer sent again is the same message."""
    rid = request.request_id
    answer: dict[str, Any] = {"confirmed": False}
    if entry.get("status") == "resolved":
        payload = read_approval_payload(
            entry.get("payload"), where=f"answer to {rid!r}", request_ids=[rid]
        )
        answer = {"confirmed": payload.approved}
        if payload.reason:
            answer["payload"] = {"reason": payload.reason}
    call_id = _interrupt_of(request).get("toolCallId")
    return {
        "id": f"{rid}-confirmation",
        "role": "tool",
        "toolCallId": call_id if isinstance(call_id, str) else rid,
        "content": json.dumps(answer, separators=(",", ":")),
    }


def with_tool_messages(
    messages: list[dict[str, Any]], answers: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """``messages`` with each tool message of ``answers`` right after the assistant message
    that made its call (and the results already there), else at the end."""
    out = list(messages)
    for answer in answers:
        at = len(out)
        for index, message in enumerate(out):
            calls = message.get("toolCalls") or ()
            if any(c.get("id") == answer["toolCallId"] for c in calls):
                at = index + 1
                while at < len(out) and out[at].get("role") == "tool":
                    at += 1
                break
        out.insert(at, answer)
    return out
