"""Who may answer a gated call: the rules ``approval_required(approvers=...,
distinct_approver=...)`` set, checked by the consent engine before an answer is used (in
process and over AG-UI alike), so a refused answer uses nothing up and the right person can
still answer. A tool without either rule keeps the old one: whoever holds the answer."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Protocol

from .._contents import FunctionCallContent
from .._exceptions import ApproverNotAllowedError
from .._principal import Principal
from .._tools import AITool
from ._rules import approval_wrappers

_log = logging.getLogger("agui_chat.consent")


def check_approver(
    request_id: str,
    *,
    tool: AITool,
    call: FunctionCallContent,
    approver: Principal | None,
    requester: Principal | None,
    identity_required: bool,
) -> None:
    """Refuse an answer ``approver`` may not give (``ApproverNotAllowedError``): nobody where
    somebody must answer (``APPROVER_UNKNOWN``: ``identity_required``, a tool with
    ``approvers=``, or four eyes), the requester answering their own four-eyes call (or a
    requester nobody knows, so four eyes cannot be shown: ``APPROVER_IS_REQUESTER`` /
    ``APPROVER_UNKNOWN``), or an answerer without one of the roles, or whom the tool's
    predicate turns down (``APPROVER_NOT_ALLOWED``; a predicate that raises turns them
    down). Every approval wrapper of the tool is asked; each must let the answer through."""
    ruled = [w for w in approval_wrappers(tool) if w.approvers is not None or w.distinct_approver]
    label = f"the answer to {request_id!r} (tool {call.name!r})"
    if approver is None and (identity_required or ruled):
        raise ApproverNotAllowedError(
            f"{label} came from nobody: this call may only be answered by an identified "
            "person; nothing was used up",
            request_ids=[request_id],
            code="APPROVER_UNKNOWN",
        )
    for wrapper in ruled:
        assert approver is not None
        if wrapper.distinct_approver:
            if requester is None:
                raise ApproverNotAllowedError(
                    f"{label}: who asked for this call is not known, so a second person's "
                    "approval cannot be shown (four eyes); nothing was used up",
                    request_ids=[request_id],
                    code="APPROVER_UNKNOWN",
                )
            if requester.id == approver.id:
                raise ApproverNotAllowedError(
                    f"{label}: {approver.id!r} asked for this call and may not answer it too "
                    "(four eyes: another person must); nothing was used up",
                    request_ids=[request_id],
                    code="APPROVER_IS_REQUESTER",
                )
        rule = wrapper.approvers
        if rule is None:
            continue
        if isinstance(rule, frozenset):
            allowed = bool(rule & approver.roles)
            needs = f"one of the roles {', '.join(sorted(rule))}"
        else:
            allowed = _predicate_allows(rule, approver, call)
            needs = "the tool's approver rule to allow them"
        if not allowed:
            raise ApproverNotAllowedError(
                f"{label}: {approver.id!r} may not answer this call (it needs {needs}); "
                "nothing was used up, so someone allowed can still answer",
                request_ids=[request_id],
                code="APPROVER_NOT_ALLOWED",
            )


def check_identified(request_ids: Sequence[str], answerer: Answering) -> None:
    """Refuse every answer from nobody where the server requires an identity
    (``require_identity=True``): ``APPROVER_UNKNOWN``, nothing used up."""
    if answerer.identity_required and answerer.principal is None and request_ids:
        raise ApproverNotAllowedError(
            f"{', '.join(request_ids)}: this server takes answers only from an identified "
            "person (require_identity), and this request names nobody; nothing was used up",
            request_ids=request_ids,
            code="APPROVER_UNKNOWN",
        )


class Answering(Protocol):
    """Who sent the answers, and whether an identity is required of them."""

    @property
    def principal(self) -> Principal | None: ...

    @property
    def identity_required(self) -> bool: ...


def _predicate_allows(rule: object, approver: Principal, call: FunctionCallContent) -> bool:
    """What a predicate says; one that raises says no (a consent check fails closed)."""
    assert callable(rule)
    try:
        return bool(rule(approver, call))
    except Exception:
        _log.warning("the approvers predicate of %s raised; the answer is refused", call.name)
        return False
