"""Answering a paused AG-UI run: the ``resume`` entries of the next request, checked first.

The latest paused run is found skipping failed runs (so a refused resume can be answered
again), and the newest batch of answers after it is paired by id as the tool loop does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..._contents import ErrorContent
from ..._exceptions import UnknownResponseError
from ..._hitl_contents import (
    InputRequestContent,
    InputResponseContent,
    InterruptRequestContent,
    InterruptResponseContent,
    ToolApprovalRequestContent,
    ToolApprovalResponseContent,
)
from ..._messages import ChatMessage
from ...consent._plan import pair_by_id
from ...consent._rules import (
    check_answered_once,
    check_approval,
    check_payload,
    check_question,
    read_approval_payload,
)
from ..wire._messages import RUN_ID_KEY
from ._updates import INTERRUPT_KEY

ResumeEntry = dict[str, Any]

#: On a request content: the dialects it was read in (and is answered in), e.g.
#: ``["langgraph", "langchain-hitl"]``; absent for AG-UI 1.0.
DIALECT_KEY = "agui_dialect"
LANGCHAIN_HITL = "langchain-hitl"


def _langchain_decision_given(request: InputRequestContent, answer: InputResponseContent) -> bool:
    """Whether ``answer`` is a LangChain decision (``{"type": ...}``) given by hand to an
    approval read from LangChain's middleware: it goes out as given (checked when sent)."""
    dialects = (request.additional_properties or {}).get(DIALECT_KEY)
    return (
        isinstance(answer, InterruptResponseContent)
        and isinstance(dialects, list)
        and LANGCHAIN_HITL in dialects
        and isinstance(answer.payload, Mapping)
        and "type" in answer.payload
    )


def _find_pause(
    history: Sequence[ChatMessage],
) -> tuple[list[InputRequestContent], list[InputResponseContent]] | None:
    """The pending requests of the last paused run and the newest answers given to them;
    ``None`` (or ``UnknownResponseError`` for answers given anyway) when it did not pause."""
    run_last_index: dict[str, int] = {}  # by message index
    failed_runs: set[str] = set()
    remote: list[tuple[int, InputRequestContent]] = []
    local_ids: set[str] = set()
    answers: list[tuple[int, InputResponseContent]] = []
    for index, message in enumerate(history):
        run_id = (message.additional_properties or {}).get(RUN_ID_KEY)
        if isinstance(run_id, str):
            run_last_index[run_id] = index
        for content in message.contents:
            if isinstance(content, InputRequestContent):
                if INTERRUPT_KEY in (content.additional_properties or {}):  # a server's
                    remote.append((index, content))
                    request_run = _run_of(content)
                    if request_run is not None:  # (messages come in index order)
                        run_last_index[request_run] = index
                else:
                    local_ids.add(content.request_id)
            elif isinstance(content, InputResponseContent):
                answers.append((index, content))
            elif isinstance(content, ErrorContent) and isinstance(run_id, str):
                failed_runs.add(run_id)
    runs = sorted(run_last_index.items(), key=lambda item: item[1])
    later_boundaries: list[int] = []
    for run_id, last_index in reversed(runs):
        if run_id in failed_runs:
            later_boundaries.append(last_index)
            continue
        requests = _unique(c for _, c in remote if _run_of(c) == run_id)
        if not requests:
            break
        start = max(i for i, c in remote if _run_of(c) == run_id)
        return requests, _newest_batch(answers, start, sorted(later_boundaries), local_ids)
    latest = runs[-1][1] if runs else -1
    _, ids = pair_by_id(local_ids, (a for i, a in answers if i > latest))
    if ids:
        raise UnknownResponseError(
            f"{_named(ids)} {_answer_verb(ids)} nothing pending: the last run did not pause "
            "for a person (send the response holding the request along with the answer)",
            request_ids=ids,
        )
    return None


def resume_entries(
    history: Sequence[ChatMessage],
) -> list[tuple[InputRequestContent, ResumeEntry]]:
    """Each pending request of the paused run with its ``resume`` entry (none when no run is
    paused). Raises ``UnansweredRequestError``, ``UnknownResponseError``,
    ``DuplicateResponseError``, ``ExpiredRequestError`` or ``InvalidResponseError``."""
    pause = _find_pause(history)
    if pause is None:
        return []
    requests, answers = pause
    pending = {r.request_id: r for r in requests}
    by_id, unknown = pair_by_id(pending, answers)
    if unknown:
        raise UnknownResponseError(
            f"{_named(unknown)} {_answer_verb(unknown)} no pending request; the paused run "
            f"waits for {_named(list(pending))}",
            request_ids=unknown,
        )
    check_answered_once(by_id)
    return [(request, _entry(request, by_id[rid][0])) for rid, request in pending.items()]


def _entry(request: InputRequestContent, answer: InputResponseContent) -> ResumeEntry:
    rid = request.request_id
    expired = request.is_expired()
    metadata = answer.metadata if isinstance(answer, InterruptResponseContent) else None
    if _langchain_decision_given(request, answer):
        assert isinstance(answer, InterruptResponseContent)
        return {"interruptId": rid, "status": answer.status, "payload": dict(answer.payload)}
    if (
        isinstance(request, ToolApprovalRequestContent)
        and isinstance(answer, InterruptResponseContent)
        and answer.status == "resolved"
    ):
        # A hand-built answer to an approval: read in full by the one approval payload model
        # (an unknown key raises here, before anything is sent), then checked as any is.
        approval = read_approval_payload(
            answer.payload, where=f"answer to {rid!r}", request_ids=[rid]
        )
        answer = ToolApprovalResponseContent(
            rid, approval.approved, request.tool_call, approval.reason, approval.edited_args
        )
    if isinstance(answer, ToolApprovalResponseContent):
        if answer.cancelled or (not answer.approved and expired):
            return {"interruptId": rid, "status": "cancelled"}
        check_approval(
            rid,
            approved=answer.approved,
            edited_arguments=answer.edited_arguments,
            allow_edits=not isinstance(request, ToolApprovalRequestContent) or request.allow_edits,
            expires_at=request.expires_at,
        )
        schema = _schema_of(request)
        payload = _fit_reason(answer.to_payload(), schema)
        check_payload(rid, payload, schema)
        resolved: ResumeEntry = {"interruptId": rid, "status": "resolved", "payload": payload}
        if metadata:
            resolved["metadata"] = metadata
        return resolved
    assert isinstance(answer, InterruptResponseContent)
    entry: ResumeEntry = {"interruptId": rid, "status": answer.status}
    if answer.status == "resolved":
        check_question(
            rid,
            resolved=True,
            payload=answer.payload,
            response_schema=_schema_of(request),
            expires_at=request.expires_at,
        )
        entry["payload"] = answer.payload
    if answer.metadata:
        entry["metadata"] = answer.metadata
    return entry


def _schema_of(request: InputRequestContent) -> Mapping[str, Any] | None:
    if isinstance(request, InterruptRequestContent) and request.response_schema is not None:
        return request.response_schema
    raw = (request.additional_properties or {}).get(INTERRUPT_KEY)
    schema = raw.get("responseSchema") if isinstance(raw, Mapping) else None
    return schema if isinstance(schema, Mapping) else None


def _fit_reason(payload: dict[str, Any], schema: Mapping[str, Any] | None) -> dict[str, Any]:
    """Drop a rejection reason the server's schema has no room for (it forbids extras)."""
    if "reason" not in payload or schema is None or schema.get("additionalProperties") is not False:
        return payload
    properties = schema.get("properties")
    if isinstance(properties, Mapping) and "reason" in properties:
        return payload
    return {k: v for k, v in payload.items() if k != "reason"}


def _run_of(content: InputRequestContent) -> str | None:
    run_id = (content.additional_properties or {}).get(RUN_ID_KEY)
    return run_id if isinstance(run_id, str) else None


def _unique(contents: Any) -> list[InputRequestContent]:
    seen: dict[str, InputRequestContent] = {}
    for content in contents:
        seen.setdefault(content.request_id, content)
    return list(seen.values())


def _newest_batch(
    answers: list[tuple[int, InputResponseContent]],
    start: int,
    boundaries: list[int],
    local_ids: set[str],
) -> list[InputResponseContent]:
    """The answers after ``start`` in the newest non-empty gap between failed runs."""
    batches: dict[int, list[InputResponseContent]] = {}
    for index, answer in answers:
        if index > start and answer.request_id not in local_ids:
            batches.setdefault(sum(1 for b in boundaries if b < index), []).append(answer)
    return batches[max(batches)] if batches else []


def _named(ids: Sequence[str]) -> str:
    quoted = ", ".join(repr(i) for i in ids)
    return f"request {quoted}" if len(ids) == 1 else f"requests {quoted}"


def _answer_verb(ids: Sequence[str]) -> str:
    return "answers" if len(ids) == 1 else "answer"
