"""The tool loop's own audit writer: with an approval store (in process, or for the calls a
grant lets run on a server), each decided call's record is appended just before its tool's
first line (so no tool runs without its record), its grant kept if the approval asked to be
remembered, and its outcome appended when the tool is done. A server's resumed calls are
recorded by its claims instead, in the same step as the claim (``agui/server/_claims.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .._contents import FunctionCallContent, FunctionResultContent
from .._schema import dump_json
from ..consent._audit import Outcome, Verdict
from ..consent._oversight import Oversight
from ._invocation import InvocationOutcome
from ._tool_tracing import ToolTracing


class Ledger:
    """Records the verdicts of one request's calls (a ``ToolStartGuard``)."""

    def __init__(self, oversight: Oversight, telemetry: ToolTracing) -> None:
        self.oversight = oversight
        self.telemetry = telemetry
        self.verdicts: dict[str, Verdict] = {}
        self._seqs: dict[str, int] = {}

    async def starting(self, call: FunctionCallContent) -> None:
        """Append the record of ``call``'s verdict (and keep its grant) before it runs."""
        verdict = self.verdicts.pop(call.call_id, None)
        if verdict is None:
            return
        oversight = self.oversight
        self._seqs[call.call_id] = await oversight.store.append_audit(oversight.draft(verdict))
        grant = oversight.grant_for(verdict)
        if grant is not None:
            await oversight.store.add_grant(grant)
            oversight.forget_grants()
        self.telemetry.audited(verdict, grant)

    async def rejected(self, results: Iterable[FunctionResultContent]) -> None:
        """Append the records of the calls a person rejected (nothing of them runs)."""
        for result in results:
            verdict = self.verdicts.pop(result.call_id, None)
            if verdict is not None:
                await self.oversight.store.append_audit(self.oversight.draft(verdict))
                self.telemetry.audited(verdict, None)

    async def finished(self, outcomes: Sequence[InvocationOutcome]) -> None:
        """Append what became of each recorded call."""
        for o in outcomes:
            seq = self._seqs.pop(o.call.call_id, None)
            if seq is None:
                continue
            outcome: Outcome = "failed" if o.failed else "ran"
            text = None if o.result is None else dump_json(o.result.result)
            await self.oversight.store.record_outcome(seq, outcome, text)
