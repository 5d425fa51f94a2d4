"""The collect step of the consent engine's pairing function: the pairs of a resume, read
from a history (calls, and each request with its answers, paired by id) or handed over by a
caller that verified the answers itself (:class:`VerifiedPair`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TypeVar

from .._contents import FunctionCallContent, FunctionResultContent
from .._exceptions import InvalidResponseError
from .._hitl_contents import (
    InputResponseContent,
    InterruptRequestContent,
    InterruptResponseContent,
    ToolApprovalRequestContent,
    ToolApprovalResponseContent,
)
from .._messages import ChatMessage
from .._role_and_finish_reason import ChatRole

_Answer = TypeVar("_Answer", bound=InputResponseContent)


@dataclass
class CallRecord:
    """What the history holds under one call id: its different calls (more than one is
    ambiguous), and the call objects of its requests and answers (``handled``)."""

    variants: list[FunctionCallContent] = field(default_factory=list)
    informational: bool = False  # some copy of the call is informational_only
    flagged: bool = False  # its request or answer says it was handled
    answered: bool = False  # the history holds its result
    handled: list[FunctionCallContent] = field(default_factory=list)

    def add(self, call: FunctionCallContent) -> None:
        if not any(same_call(call, c) for c in self.variants):
            self.variants.append(call)
        self.informational = self.informational or call.informational_only


@dataclass
class ApprovalPair:
    """An approval request of a local-looking call and the answers a person gave to it."""

    request: ToolApprovalRequestContent
    answers: list[ToolApprovalResponseContent] = field(default_factory=list)
    approved_at: int | None = None  # where the first approving answer stands
    ambiguous: bool = False  # another request uses the same id for a different call

    @property
    def call(self) -> FunctionCallContent:
        call = self.request.tool_call
        assert isinstance(call, FunctionCallContent)
        return call


@dataclass
class QuestionPair:
    """A question a tool asked and the answers a person gave to it."""

    request: InterruptRequestContent
    asked_at: int  # where it was first asked
    answers: list[InterruptResponseContent] = field(default_factory=list)
    ambiguous: bool = False  # another question uses the same id


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

    def call(self, call_id: str) -> CallRecord:
        return self.calls.setdefault(call_id, CallRecord())


def collect_pairs(history: Sequence[ChatMessage]) -> Pairs:
    """One pass over ``history``: calls, results, requests, answers (users' only), by id."""
    pairs = Pairs()
    approval_answers: list[ToolApprovalResponseContent] = []
    approved_at: dict[str, int] = {}
    question_answers: list[InterruptResponseContent] = []
    for index, message in enumerate(history):
        from_person = message.role == ChatRole.USER
        for c in message.contents:
            if isinstance(c, FunctionResultContent):
                pairs.call(c.call_id).answered = True
            elif isinstance(c, FunctionCallContent):
                pairs.call(c.call_id).add(c)
            elif isinstance(c, ToolApprovalRequestContent):
                call = c.tool_call
                if not isinstance(call, FunctionCallContent):
                    continue  # a call the service runs: its approval passes through
                record = pairs.call(call.call_id)
                _note_handled(record, call)
                first = pairs.approvals.setdefault(c.request_id, ApprovalPair(c))
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
                if c.approved:
                    approved_at.setdefault(c.request_id, index)
            elif isinstance(c, InterruptResponseContent):
                question_answers.append(c)
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


def same_call(a: FunctionCallContent, b: FunctionCallContent) -> bool:
    return (
        a.call_id == b.call_id
        and a.name == b.name
        and a.arguments == b.arguments
        and a.raw_arguments == b.raw_arguments
    )


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


@dataclass(frozen=True)
class VerifiedPair:
    """A request, its one answer and the call it is about, all vouched for by the caller
    (``AGUIServer`` builds them from the interrupt ids it signed). ``call`` is the call as
    it runs (for an approval: before the person's edit, which the answer carries)."""

    call: FunctionCallContent
    request: ToolApprovalRequestContent | InterruptRequestContent
    answer: ToolApprovalResponseContent | InterruptResponseContent


def verified_pairs(history: Sequence[ChatMessage], verified: Sequence[VerifiedPair]) -> Pairs:
    """The pairs of a resume whose answers were verified elsewhere: only the calls and
    results of ``history`` count, each verified call standing for the history's copy. A
    pair whose parts do not belong together is refused (``InvalidResponseError``); two
    answers to one request stay two, and the check refuses them."""
    pairs = Pairs()
    for message in history:
        for c in message.contents:
            if isinstance(c, FunctionResultContent):
                pairs.call(c.call_id).answered = True
            elif c.__class__ is FunctionCallContent:
                assert isinstance(c, FunctionCallContent)
                pairs.call(c.call_id).add(c)
    for pair in verified:
        call_id, request, answer = pair.call.call_id, pair.request, pair.answer
        about = (
            request.tool_call.call_id
            if isinstance(request, ToolApprovalRequestContent)
            else request.tool_call_id
        )
        if about != call_id or answer.request_id != request.request_id:
            raise InvalidResponseError(
                f"the answer to {request.request_id!r} is not about tool call {call_id!r}; "
                "nothing was run",
                request_ids=[request.request_id],
            )
        record = pairs.calls[call_id] = CallRecord(
            [pair.call], answered=pairs.call(call_id).answered
        )
        pairs.verified[call_id] = pair.call
        if isinstance(request, ToolApprovalRequestContent):
            assert isinstance(answer, ToolApprovalResponseContent)
            record.handled.append(pair.call)
            approval = pairs.approvals.setdefault(request.request_id, ApprovalPair(request))
            approval.answers.append(answer)
            if answer.approved and approval.approved_at is None:
                approval.approved_at = 0  # before every question (asked at 1)
        else:
            assert isinstance(answer, InterruptResponseContent)
            question = pairs.questions.setdefault(request.request_id, QuestionPair(request, 1))
            question.answers.append(answer)
    return pairs


@dataclass
class _Handed:
    pairs: Sequence[VerifiedPair]
    taken: bool = False


_HANDED: ContextVar[_Handed | None] = ContextVar("agui_chat_verified_pairs", default=None)


@contextmanager
def resume_with(pairs: Sequence[VerifiedPair]) -> Iterator[None]:
    """Within this block, the next tool loop that starts resumes with ``pairs`` instead of
    the answers in its history; a loop started later in the block (a nested one) pairs from
    its history as usual."""
    token = _HANDED.set(_Handed(pairs))
    try:
        yield
    finally:
        _HANDED.reset(token)


def take_verified_pairs() -> Sequence[VerifiedPair] | None:
    """The pairs handed over by :func:`resume_with`, once (``None`` after, or without)."""
    handed = _HANDED.get()
    if handed is None or handed.taken:
        return None
    handed.taken = True
    return handed.pairs
