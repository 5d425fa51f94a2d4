"""The consent engine's pairing function and the resume plan it makes: which answer belongs to
which request, which calls run (with which answers), which are answered as rejected, and the
history the model sees. Three named steps, each once per resume: :func:`pair` (from a history,
or from answers a caller verified itself: :class:`VerifiedPair`), :func:`check` (every refusal,
through the consent rules, before anything is used) and :func:`schedule` (never refuses).
The tool loop runs the three on the history it is handed; ``AGUIServer`` runs them itself,
claiming the answers between ``check`` and ``schedule``, and hands the plan to the tool loop
(:func:`with_plan`), which then pairs nothing again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from .._contents import AIContent, FunctionCallContent, FunctionResultContent
from .._exceptions import InvalidResponseError, UnknownResponseError
from .._hitl_contents import (
    InputRequestContent,
    InputResponseContent,
    InterruptRequestContent,
    InterruptResponseContent,
    ToolApprovalRequestContent,
    ToolApprovalResponseContent,
    call_id_of,
)
from .._input import question_digest
from .._messages import ChatMessage
from .._options import ChatOptions
from .._role_and_finish_reason import ChatRole
from .._tools import AIFunction, AITool
from . import _rules
from ._approvers import check_approver
from ._audit import Verdict
from ._grants import check_remember
from ._rules import (
    Remember,
    check_answered_once,
    check_approval,
    check_question,
    find_tool,
    requests_named,
)

_Answer = TypeVar("_Answer", bound=InputResponseContent)

#: MEAI's text for a rejected call, which the person's reason follows (``rejected_text``).
REJECTED_TEXT = "Tool call invocation rejected."
#: What .NET's ``char.IsWhiteSpace`` counts besides Unicode Zs, Zl and Zp.
_NET_CONTROL_SPACES = frozenset("\t\n\v\f\r\x85")


def rejected_text(reason: str | None) -> str:
    """MEAI's rejection text, then the person's reason verbatim unless it is blank (.NET's
    ``IsNullOrWhiteSpace``, as MEAI applies it)."""
    import unicodedata

    blank = reason is None or all(
        ch in _NET_CONTROL_SPACES or unicodedata.category(ch) in ("Zs", "Zl", "Zp") for ch in reason
    )
    return REJECTED_TEXT if blank else f"{REJECTED_TEXT} {reason}"


# -- pairing -------------------------------------------------------------------------------------


def same_call(a: FunctionCallContent, b: FunctionCallContent) -> bool:
    return (
        a.call_id == b.call_id
        and a.name == b.name
        and a.arguments == b.arguments
        and a.raw_arguments == b.raw_arguments
    )


@dataclass
class CallRecord:
    """What the history holds under one call id: its different calls (more than one is
    ambiguous), and the call objects of its requests and answers (``handled``)."""

    variants: list[FunctionCallContent] = field(default_factory=list)
    informational: bool = False  # some copy of the call is informational_only
    flagged: bool = False  # its request or answer says it was handled
    answered: bool = False  # the history holds its result
    handled: list[FunctionCallContent] = field(default_factory=list)
    ambiguous: bool = False  # a caller vouched for it, but the history holds two calls

    def add(self, call: FunctionCallContent) -> None:
        if not any(same_call(call, c) for c in self.variants):
            self.variants.append(call)
        self.informational = self.informational or call.informational_only


@dataclass
class ApprovalPair:
    """An approval request of a local-looking call and the answers a person gave to it."""

    request: ToolApprovalRequestContent
    call: FunctionCallContent
    answers: list[ToolApprovalResponseContent] = field(default_factory=list)
    approved_at: int | None = None  # where the first approving answer stands
    ambiguous: bool = False  # another request uses the same id for a different call


@dataclass
class QuestionPair:
    """A question a tool asked and the answers a person gave to it."""

    request: InterruptRequestContent
    asked_at: int  # where it was first asked
    answers: list[InterruptResponseContent] = field(default_factory=list)
    ambiguous: bool = False  # another question uses the same id


@dataclass(frozen=True)
class VerifiedPair:
    """A request, its one answer and the call it is about, vouched for by the caller
    (``AGUIServer`` builds them from the interrupt ids it signed, with the expiry and edits
    the ids carry). ``call`` is the call as it runs (for an approval: before the person's
    edit, which the answer carries)."""

    call: FunctionCallContent
    request: ToolApprovalRequestContent | InterruptRequestContent
    answer: ToolApprovalResponseContent | InterruptResponseContent


@dataclass
class Pairs:
    """A history's calls by id, its approval requests and questions by request id with their
    answers, and the ids of answers with no request; ``verified`` holds the calls of
    :class:`VerifiedPair` s by id (they stand for the history's copies)."""

    calls: dict[str, CallRecord] = field(default_factory=dict)
    approvals: dict[str, ApprovalPair] = field(default_factory=dict)
    questions: dict[str, QuestionPair] = field(default_factory=dict)
    unknown_approvals: list[str] = field(default_factory=list)
    unknown_questions: list[str] = field(default_factory=list)
    verified: dict[str, FunctionCallContent] = field(default_factory=dict)
    #: Where each request's first answer stands in the history, and the newest such place:
    #: the answers given now (earlier ones are carried along for a tool that asks again).
    answered_at: dict[str, int] = field(default_factory=dict)

    def call(self, call_id: str) -> CallRecord:
        return self.calls.setdefault(call_id, CallRecord())


def pair(history: Sequence[ChatMessage], verified: Sequence[VerifiedPair] | None = None) -> Pairs:
    """The pairing function: each request of ``history`` with its answers (answers count only
    in user messages), by request id. With ``verified``, the answers come from those pairs
    instead and only the history's calls and results count, each verified call standing for
    the history's copy (a pair whose parts do not belong together: ``InvalidResponseError``)."""
    pairs = Pairs()
    approved_at: dict[str, int] = {}
    approval_answers: list[ToolApprovalResponseContent] = []
    question_answers: list[InterruptResponseContent] = []
    for index, message in enumerate(history):
        from_person = verified is None and message.role == ChatRole.USER
        for c in message.contents:
            if isinstance(c, FunctionResultContent):
                pairs.call(c.call_id).answered = True
            elif c.__class__ is FunctionCallContent:
                assert isinstance(c, FunctionCallContent)
                pairs.call(c.call_id).add(c)
            elif verified is not None:
                continue  # the verified pairs are the requests and answers
            elif isinstance(c, ToolApprovalRequestContent):
                call = c.tool_call
                if not isinstance(call, FunctionCallContent):
                    continue  # a call the service runs: its approval passes through
                record = pairs.call(call.call_id)
                _note_handled(record, call)
                first = pairs.approvals.setdefault(c.request_id, ApprovalPair(c, call))
                first.ambiguous = first.ambiguous or not same_call(first.call, call)
                record.add(call)
            elif isinstance(c, InterruptRequestContent):
                asked = pairs.questions.setdefault(c.request_id, QuestionPair(c, index))
                asked.ambiguous = asked.ambiguous or asked.request.to_dict() != c.to_dict()
            elif not from_person:
                continue  # an answer only a person gives: never one in a model's message
            elif isinstance(c, ToolApprovalResponseContent):
                if not isinstance(c.tool_call, FunctionCallContent):
                    continue  # an answer for the service: passed through
                _note_handled(pairs.call(c.tool_call.call_id), c.tool_call)
                approval_answers.append(c)
                pairs.answered_at.setdefault(c.request_id, index)
                if c.approved:
                    approved_at.setdefault(c.request_id, index)
            elif isinstance(c, InterruptResponseContent):
                question_answers.append(c)
                pairs.answered_at.setdefault(c.request_id, index)
    if verified is not None:
        for one in verified:
            _add_verified(pairs, one)
        return pairs
    given, pairs.unknown_approvals = pair_by_id(pairs.approvals, approval_answers)
    for rid, approval in pairs.approvals.items():
        approval.answers, approval.approved_at = given[rid], approved_at.get(rid)
    replies, pairs.unknown_questions = pair_by_id(pairs.questions, question_answers)
    for rid, question in pairs.questions.items():
        question.answers = replies[rid]
    _forget_edited_copies(pairs)
    return pairs


def _note_handled(record: CallRecord, call: FunctionCallContent) -> None:
    record.handled.append(call)
    if call.informational_only:
        record.flagged = True


def _add_verified(pairs: Pairs, one: VerifiedPair) -> None:
    call_id, request, answer = one.call.call_id, one.request, one.answer
    if call_id_of(request) != call_id or answer.request_id != request.request_id:
        raise InvalidResponseError(
            f"the answer to {request.request_id!r} is not about tool call {call_id!r}; "
            "nothing was run",
            request_ids=[request.request_id],
        )
    sent = pairs.call(call_id)  # the history's copies: two different calls make it ambiguous
    record = pairs.calls[call_id] = CallRecord([one.call], answered=sent.answered)
    record.ambiguous = len(sent.variants) > 1
    pairs.verified[call_id] = one.call
    if isinstance(request, ToolApprovalRequestContent):
        assert isinstance(answer, ToolApprovalResponseContent)
        record.handled.append(one.call)
        approval = pairs.approvals.setdefault(request.request_id, ApprovalPair(request, one.call))
        approval.answers.append(answer)
        if answer.approved and approval.approved_at is None:
            approval.approved_at = 0  # before every question (asked at 1)
    else:
        assert isinstance(answer, InterruptResponseContent)
        question = pairs.questions.setdefault(request.request_id, QuestionPair(request, 1))
        question.answers.append(answer)


def pair_by_id(
    request_ids: Iterable[str], answers: Iterable[_Answer]
) -> tuple[dict[str, list[_Answer]], list[str]]:
    """The answers of each request of ``request_ids`` (each has an entry, in that order), and
    the ids the other answers name (once each, in order: answers with no request)."""
    paired: dict[str, list[_Answer]] = {rid: [] for rid in request_ids}
    unknown: list[str] = []
    for answer in answers:
        given = paired.get(answer.request_id)
        if given is not None:
            given.append(answer)
        elif answer.request_id not in unknown:
            unknown.append(answer.request_id)
    return paired, unknown


def _forget_edited_copies(pairs: Pairs) -> None:
    """Drop the copy of an approved, edited call the loop returned with the edit: it is that
    call, not another call with the same id."""
    for approval in pairs.approvals.values():
        request = approval.call
        for answer in approval.answers:
            if not (answer.approved and answer.edited_arguments is not None):
                continue
            record = pairs.call(request.call_id)
            record.variants = [
                c
                for c in record.variants
                if same_call(c, request)
                or not (c.name == request.name and c.arguments == answer.edited_arguments)
            ]


# -- checking --------------------------------------------------------------------------------------


@dataclass
class Pending:
    """The requests a resume answers now, each with exactly one usable answer (the approved
    edits as the tool takes them in ``edits``); the ``local_`` ones also hold those of calls
    answered before (they leave the model's history too)."""

    approvals: dict[str, ApprovalPair]
    questions: dict[str, QuestionPair]
    local_approvals: dict[str, ApprovalPair]
    local_questions: dict[str, QuestionPair]
    tools: dict[str, AIFunction]
    edits: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: What each approval asks to remember, by call id (checked: it can be honoured).
    remembers: dict[str, Remember] = field(default_factory=dict)


def check(
    pairs: Pairs,
    tools: Mapping[str, AITool],
    now: float | None = None,
    *,
    thread_id: str | None = None,
    identity_required: bool = False,
    keeps_grants: bool = False,
) -> Pending:
    """Every refusal of a resume, before anything is used: an answer without a request
    (``UnknownResponseError``), ambiguous ids (``InvalidResponseError``), a pending request
    not answered exactly once, and each answer the consent rules refuse (expired, an edit not
    offered or not fitting, a payload that fails its schema, an answerer the tool's approver
    rules turn down: ``ApproverNotAllowedError``, a ``remember`` that cannot be honoured in
    ``thread_id``, or at all where nothing ``keeps_grants``). Only requests for tools in
    ``tools`` are checked; others (a remote agent's) are left for the inner client."""
    local = _local_tools(pairs, tools)

    def answered(question: QuestionPair) -> bool:
        return pairs.calls[question.request.tool_call_id or ""].answered

    local_approvals = {rid: a for rid, a in pairs.approvals.items() if a.call.name in local}
    _check_unknown(pairs.unknown_approvals, "approval")
    _check_unknown(pairs.unknown_questions, "question", approvals=pairs.approvals)
    approvals = {
        rid: a
        for rid, a in local_approvals.items()
        if not (pairs.calls[a.call.call_id].answered or pairs.calls[a.call.call_id].flagged)
    }
    local_questions = {
        rid: q
        for rid, q in pairs.questions.items()
        if any(
            c.name in local
            for c in pairs.calls.get(q.request.tool_call_id or "", CallRecord()).variants
        )
    }
    candidates = {rid: q for rid, q in local_questions.items() if not answered(q)}
    _check_ambiguous(
        [(rid, a.call.call_id, a.ambiguous) for rid, a in approvals.items()]
        + [(rid, q.request.tool_call_id or "", q.ambiguous) for rid, q in candidates.items()],
        pairs.calls,
    )
    questions = {rid: q for rid, q in candidates.items() if _asked_by_its_tool(pairs, q)}
    local_questions = {
        rid: q for rid, q in local_questions.items() if rid in questions or answered(q)
    }
    pending = Pending(approvals, questions, local_approvals, local_questions, local)
    _check_answers(pending, _rules.clock() if now is None else now)
    for rid, a in approvals.items():
        answer, tool = a.answers[0], pending.tools[a.call.name]
        check_approver(
            rid,
            tool=tool,
            call=a.call,
            approver=answer.approver,
            requester=a.request.requester,
            identity_required=identity_required,
        )
        remember = answer.remembered
        if remember is not None:
            pending.remembers[a.call.call_id] = remember
        check_remember(
            rid,
            remember,
            approved=answer.approved,
            tool=tool,
            thread_id=thread_id,
            approver=answer.approver,
            keeps_grants=keeps_grants,
        )
    return pending


def _local_tools(pairs: Pairs, tools: Mapping[str, AITool]) -> dict[str, AIFunction]:
    """The tools (by name) that run the history's calls here; a call a caller vouched for
    whose tool does not run here (any more) is refused."""
    local: dict[str, AIFunction] = {}
    for record in pairs.calls.values():
        for c in record.variants:
            tool = find_tool(tools, c.name)
            if isinstance(tool, AIFunction):
                local[c.name] = tool
    unrun = [c for c in pairs.verified.values() if c.name not in local]
    if unrun:
        cid, name = unrun[0].call_id, unrun[0].name
        about = [rid for rid, a in pairs.approvals.items() if a.call.call_id == cid]
        about += [rid for rid, q in pairs.questions.items() if q.request.tool_call_id == cid]
        raise UnknownResponseError(
            f"{requests_named(about)} {'is' if len(about) == 1 else 'are'} about a call to tool "
            f"{name!r}, which is not run here; nothing was run",
            request_ids=about,
            code="RESUME_UNKNOWN_TOOL",
        )
    return local


def _check_answers(pending: Pending, now: float) -> None:
    """Each pending request answered exactly once, and each answer through the consent
    rules; the approved edits as the tool takes them go into ``pending.edits``."""
    given: dict[str, list[InputResponseContent]] = {
        rid: [*a.answers] for rid, a in pending.approvals.items()
    }
    for rid, q in pending.questions.items():
        given.setdefault(rid, []).extend(q.answers)
    check_answered_once(given)
    rejected: set[str] = set()
    for rid, a in pending.approvals.items():
        answer, request = a.answers[0], a.request
        edits = check_approval(
            rid,
            approved=answer.approved,
            edited_arguments=answer.edited_arguments,
            allow_edits=request.allow_edits,
            expires_at=request.expires_at,
            tool=pending.tools[a.call.name],
            now=now,
        )
        if edits is not None:
            pending.edits[a.call.call_id] = edits
        if not answer.approved:
            rejected.add(a.call.call_id)
    for rid, q in pending.questions.items():
        reply = q.answers[0]
        if q.request.tool_call_id in rejected:
            continue  # a rejected call never runs, whatever else was answered for it
        check_question(
            rid,
            resolved=reply.status == "resolved",
            payload=reply.payload,
            response_schema=q.request.response_schema,
            expires_at=q.request.expires_at,
            now=now,
        )


def _asked_by_its_tool(pairs: Pairs, question: QuestionPair) -> bool:
    """Whether the loop ran ``question``'s call and its tool asked (gated: after approval)."""
    call_id = question.request.tool_call_id
    assert call_id is not None
    record = pairs.calls[call_id]
    [call] = record.variants
    if record.informational or call.unparseable:
        return False
    gated = [a for a in pairs.approvals.values() if a.call.call_id == call_id]
    return not gated or any(
        a.approved_at is not None and a.approved_at < question.asked_at for a in gated
    )


def _check_ambiguous(
    pending: Sequence[tuple[str, str, bool]], calls: Mapping[str, CallRecord]
) -> None:
    """Refuse pending requests that cannot be told apart (a request id or a call id used
    twice): an answer could then run a call the person never saw."""
    call_ids = sorted(
        {
            cid
            for _, cid, amb in pending
            if amb or (cid in calls and (len(calls[cid].variants) > 1 or calls[cid].ambiguous))
        }
    )
    if not call_ids:
        return
    request_ids = [rid for rid, cid, _ in pending if cid in call_ids]
    raise InvalidResponseError(
        f"tool call id{'s' if len(call_ids) > 1 else ''} {', '.join(map(repr, call_ids))} "
        f"{'are' if len(call_ids) > 1 else 'is'} used by more than one call or request, so "
        f"the answers to {requests_named(list(dict.fromkeys(request_ids)))} are ambiguous; "
        "nothing was run (each tool call needs its own id)",
        request_ids=dict.fromkeys(request_ids),
    )


def _check_unknown(
    unknown: Sequence[str], what: str, approvals: Mapping[str, object] | None = None
) -> None:
    if not unknown:
        return
    hint = "send the assistant message holding the request along with the answer"
    if approvals is not None and any(rid in approvals for rid in unknown):
        hint = (
            "it names an approval request: answer that with request.create_response(approved, "
            "reason) (an InterruptResponseContent answers a question); nothing was sent or run"
        )
    raise UnknownResponseError(
        f"{requests_named(unknown)} answer{'s' if len(unknown) == 1 else ''} no {what} request "
        f"in the history; {hint}",
        request_ids=list(unknown),
    )


# -- the plan ------------------------------------------------------------------------------------


class ToolStartGuard(Protocol):
    """Awaited just before a planned call's tool starts (``AGUIServer`` marks its claim
    started); raising stops the call and the run."""

    async def starting(self, call: FunctionCallContent) -> None: ...


@dataclass
class ScheduledCall:
    """A call to run now: an approved call, or a tool asked again with its answers."""

    call: FunctionCallContent
    function: AIFunction
    answers: dict[str, InterruptResponseContent] = field(default_factory=dict)


@dataclass
class ResumePlan:
    """What a resume does. ``to_run``: the calls to run; ``rejected``: their results for the
    calls a person rejected; ``answered``: each request answered now with its answer (for the
    person's events). ``model_history`` is the history the model sees, the resumed block
    going at ``anchor``; ``rebuilt`` the assistant messages holding the answered calls again,
    as MEAI rebuilds them (unless the service keeps the history). ``handled``: each call id's
    call objects to mark once it has its result. ``guard`` is awaited before each planned
    call's tool starts; ``verdicts`` say what was decided about each call (its audit)."""

    model_history: list[ChatMessage]
    to_run: list[ScheduledCall] = field(default_factory=list)
    rejected: list[FunctionResultContent] = field(default_factory=list)
    answered: list[tuple[InputRequestContent, InputResponseContent]] = field(default_factory=list)
    anchor: int = 0
    rebuilt: list[ChatMessage] = field(default_factory=list)
    handled: dict[str, list[FunctionCallContent]] = field(default_factory=dict)
    guard: ToolStartGuard | None = None
    #: What was decided about each call answered now, by call id: what its audit record says.
    verdicts: dict[str, Verdict] = field(default_factory=dict)

    def mark_handled(self, call_ids: Sequence[str]) -> None:
        """Mark ``call_ids``' calls ``informational_only`` (MEAI: a replay then skips them)."""
        for call_id in call_ids:
            for call in self.handled.get(call_id, ()):
                call.informational_only = True


def leave_out(pairs: Pairs, pending: Pending, call_ids: Set[str]) -> None:
    """Leave out, in place, the requests about ``call_ids``: their answers were used by an
    earlier run, whose results the caller replays instead (nothing of them runs again)."""
    for table in (pairs.approvals, pending.approvals, pending.local_approvals):
        for rid in [rid for rid, a in table.items() if a.call.call_id in call_ids]:
            del table[rid]
    for questions in (pairs.questions, pending.questions, pending.local_questions):
        for rid in [rid for rid, q in questions.items() if q.request.tool_call_id in call_ids]:
            del questions[rid]
    for call_id in call_ids:
        pairs.verified.pop(call_id, None)


def schedule(pairs: Pairs, pending: Pending, history: Sequence[ChatMessage]) -> ResumePlan:
    """What runs, what is answered as rejected, and the history the model sees, for answers
    :func:`check` passed (it refuses nothing)."""
    plan = ResumePlan(
        model_history=[], handled={cid: r.handled for cid, r in pairs.calls.items() if r.handled}
    )
    to_run: dict[str, ScheduledCall] = {}
    newest = max(pairs.answered_at.values(), default=None)

    def now(request_id: str) -> bool:  # answered now, not carried along (or vouched for)
        return newest is None or pairs.answered_at.get(request_id) == newest

    for rid, a in pending.approvals.items():
        answer, call = a.answers[0], a.call
        if now(rid):
            plan.answered.append((a.request, answer))
        if not answer.approved:
            plan.rejected.append(FunctionResultContent(call.call_id, rejected_text(answer.reason)))
            plan.verdicts[call.call_id] = Verdict.of_approval(a.request, answer, call, None)
            continue
        # Run the call the request recorded, never one a response carries.
        edits = pending.edits.get(call.call_id)
        if edits is not None:
            call = FunctionCallContent(call.call_id, call.name, edits)
        to_run[call.call_id] = ScheduledCall(call, pending.tools[call.name])
        remember = pending.remembers.get(call.call_id)
        plan.verdicts[call.call_id] = Verdict.of_approval(a.request, answer, call, remember)
    rejected = {r.call_id for r in plan.rejected}
    for call_id, answers in _answers_by_call(pending.questions, plan, now).items():
        if call_id in rejected:
            continue
        scheduled = to_run.get(call_id)
        if scheduled is None:
            [call] = pairs.calls[call_id].variants
            earlier = (  # an approved edit an earlier approval made
                answer.edited_arguments
                for approval in pairs.approvals.values()
                if approval.call.call_id == call_id
                for answer in approval.answers
                if answer.approved and answer.edited_arguments is not None
            )
            arguments = next(earlier, call.arguments)
            scheduled = ScheduledCall(
                FunctionCallContent(call_id, call.name, arguments), pending.tools[call.name]
            )
            to_run[call_id] = scheduled
        scheduled.answers = answers
        if call_id not in plan.verdicts:
            resolved = any(a.status == "resolved" for a in answers.values())
            plan.verdicts[call_id] = Verdict(
                "answered" if resolved else "cancelled", scheduled.call
            )
    plan.to_run = list(to_run.values())
    shown = {s.call.call_id: s.call for s in plan.to_run}
    for result in plan.rejected:
        [call] = pairs.calls[result.call_id].variants
        shown[result.call_id] = FunctionCallContent(call.call_id, call.name, call.arguments)
    # Verified calls stand for the client's copies: an approval's as its request (so it is
    # rebuilt like any answered request), a question's as the call.
    stand_in: dict[str, AIContent] = {**pairs.verified}
    stand_in.update({a.call.call_id: a.request for a in pairs.approvals.values()})
    plan.model_history, plan.anchor, plan.rebuilt = _model_history(
        history,
        {rid: a.request for rid, a in pending.local_approvals.items()},
        {rid: q.request for rid, q in pending.local_questions.items()},
        shown,
        {cid: stand_in[cid] for cid in pairs.verified},
    )
    for message in plan.rebuilt:
        for c in message.contents:
            assert isinstance(c, FunctionCallContent)
            plan.handled.setdefault(c.call_id, []).append(c)
    return plan


def _answers_by_call(
    questions: Mapping[str, QuestionPair], plan: ResumePlan, now: Callable[[str], bool]
) -> dict[str, dict[str, InterruptResponseContent]]:
    """The answers each call's tool finds when it runs again, keyed by the question's key,
    message and schema (another question under the same key is asked again)."""
    per_call: dict[str, dict[str, InterruptResponseContent]] = {}
    for rid, q in questions.items():
        question, reply = q.request, q.answers[0]
        if now(rid):
            plan.answered.append((question, reply))
        assert question.tool_call_id is not None
        key = question_digest(
            question.key or question.message or rid, question.message, question.response_schema
        )
        per_call.setdefault(question.tool_call_id, {})[key] = InterruptResponseContent(
            rid, reply.payload, reply.status
        )
    return per_call


def _model_history(
    history: Sequence[ChatMessage],
    approvals: Mapping[str, ToolApprovalRequestContent],
    interrupts: Mapping[str, InterruptRequestContent],
    shown: Mapping[str, FunctionCallContent],
    verified: Mapping[str, AIContent],
) -> tuple[list[ChatMessage], int, list[ChatMessage]]:
    """The history as the model sees it, where the resumed block goes, and the rebuilt call
    messages (MEAI's ``ProcessFunctionApprovalResponses``). Local requests and their answers
    are removed (a message left empty goes). The calls handled now (``shown``) are rebuilt,
    one message per message that held their requests, unless the history holds them as plain
    calls; a request whose call was answered before becomes its call in place. The block is
    anchored just before the last message that held such content if something of it
    survives, else where it stood, so results stay next to their calls. ``verified`` calls
    stand for the history's copies (the calls the client did not send back, as Agent
    Framework's does not, in a message at the end), and the block goes at the end. A call
    is kept once."""
    plain = {c.call_id for m in history for c in m.contents if c.__class__ is FunctionCallContent}
    if verified:
        missing = [content for cid, content in verified.items() if cid not in plain]
        if missing:
            history = [*history, ChatMessage(ChatRole.ASSISTANT, missing)]
        plain -= verified.keys()
    out: list[ChatMessage] = []
    rebuilt: dict[str | None, ChatMessage] = {}
    seen_calls: set[str] = set()
    anchor = -1
    for message in history:
        contents: list[AIContent] = []
        changed = relevant = holds_shown = False
        for c in message.contents:
            if verified and c.__class__ is FunctionCallContent and c.call_id in verified:
                assert isinstance(c, FunctionCallContent)
                c, changed = verified[c.call_id], True
            if isinstance(c, ToolApprovalRequestContent) and c.request_id in approvals:
                changed = relevant = True
                call_id = c.tool_call.call_id
                if call_id in shown and call_id not in plain:
                    if call_id not in seen_calls:
                        # One rebuilt message per message id (one for those without).
                        if message.message_id not in rebuilt:
                            rebuilt[message.message_id] = message.clone([])
                        rebuilt[message.message_id].contents.append(shown[call_id])
                        seen_calls.add(call_id)
                    continue
                assert isinstance(c.tool_call, FunctionCallContent)
                c = shown.get(call_id, c.tool_call)  # with the approved edit, if any
            elif (isinstance(c, ToolApprovalResponseContent) and c.request_id in approvals) or (
                isinstance(c, (InterruptRequestContent, InterruptResponseContent))
                and c.request_id in interrupts
            ):
                changed = relevant = True
                continue
            if isinstance(c, FunctionCallContent):
                if c.call_id in seen_calls:
                    changed = True
                    continue
                seen_calls.add(c.call_id)
                holds_shown = holds_shown or c.call_id in shown
            contents.append(c)
        if relevant:
            anchor = max(anchor, len(out))
        if not contents:
            continue
        if changed:
            message = message.clone(contents)
        out.append(message)
        if holds_shown:
            anchor = max(anchor, len(out))
        elif not relevant and anchor == len(out) - 1 and message.role == ChatRole.TOOL:
            anchor = len(out)  # after the results of the same batch
    if verified or anchor < 0:
        anchor = len(out)
    return out, anchor, list(rebuilt.values())


# -- the hand-off to the tool loop -----------------------------------------------------------------

#: The key of ``ChatOptions.additional_properties`` a checked plan travels under.
PLAN_KEY = "agui_chat.resume_plan"


def with_plan(options: ChatOptions | None, plan: ResumePlan) -> ChatOptions:
    """``options`` (new ones for ``None``) carrying ``plan`` to the first tool loop below:
    it resumes with the plan as given instead of pairing the history again."""
    carrying = options if options is not None else ChatOptions()
    carrying.additional_properties[PLAN_KEY] = plan
    return carrying


def take_plan(options: ChatOptions | None) -> ResumePlan | None:
    """Take the plan ``options`` carry off them (``None``: none). A plan is used once: the
    options a loop passes on, or sends again (a retry), resume nothing."""
    if options is None:
        return None
    plan = options.additional_properties.pop(PLAN_KEY, None)
    assert plan is None or isinstance(plan, ResumePlan)
    return plan
