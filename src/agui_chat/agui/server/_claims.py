"""The server's side of the approval store: which store to use (:func:`open_store`), and the
claims of one resumed run (:class:`ClaimGuard`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping, Set

from ..._contents import FunctionCallContent
from ..._exceptions import ApprovalStoreError, ConfigurationError
from ...stores import ApprovalStore, InMemoryApprovalStore, store_from_url
from ._resume_check import ResumeRejected

_log = logging.getLogger("agui_chat.server")

_FIXED_KEY_NEEDS_A_STORE = (
    "AGUIServer has a fixed signing key (signing_key or AGUI_CHAT_SIGNING_KEY) but no shared "
    "approval store: an in-memory one is neither shared by other workers nor kept across a "
    "restart, so an approval could run its tool twice. Pass approval_store='sqlite:///"
    "approvals.db' (one host), 'redis://host:6379/0' (several machines), or "
    "InMemoryApprovalStore() for one process that never restarts (tests)."
)


def open_store(store: ApprovalStore | str | None, *, fixed_key: bool) -> tuple[ApprovalStore, bool]:
    """The store to use and whether the server owns it (so closes it). ``None`` with a fixed
    key is refused (``ConfigurationError``): every process holding the key must share the store."""
    if store is None:
        if fixed_key:
            raise ConfigurationError(_FIXED_KEY_NEEDS_A_STORE)
        return InMemoryApprovalStore(), True
    if isinstance(store, str):
        return store_from_url(store), True
    return store, False


class ClaimGuard:
    """The claims one resumed run holds (call id -> store key, under ``owner``): each marked
    started just before its tool starts; the others released at the end (but ``keep``)."""

    def __init__(
        self,
        store: ApprovalStore,
        owner: str,
        claimed: Mapping[str, str],
        keep: Set[str] = frozenset(),
    ) -> None:
        self.store = store
        self.owner = owner
        self.claimed = dict(claimed)
        self.keep = keep
        self.started: set[str] = set()

    async def starting(self, call: FunctionCallContent) -> None:
        """Mark a claimed call started in the store; ``ResumeRejected`` (the tool does not
        start) if its claim lapsed and another resume took it, or the store is out of reach."""
        key = self.claimed.get(call.call_id)
        if key is None or call.call_id in self.started:
            return
        self.started.add(call.call_id)
        try:
            started = await asyncio.shield(self.store.mark_started(key, owner=self.owner))
        except ApprovalStoreError as exc:
            raise ResumeRejected(
                "APPROVAL_STORE_UNAVAILABLE",
                "the approval store cannot be reached; the tool was not started",
            ) from exc
        if not started:
            raise ResumeRejected(
                "RESUME_ALREADY_CONSUMED",
                f"the claim on tool call {call.call_id!r} lapsed before its tool started and "
                "another resume took it; the tool was not started here",
            )

    async def release_unstarted(self) -> None:
        """Release every claim whose tool never started (the store keeps those with a result)."""
        for call_id, key in self.claimed.items():
            if call_id in self.started or key in self.keep:
                continue
            with contextlib.suppress(ApprovalStoreError):
                await asyncio.shield(self.store.release(key, owner=self.owner))
