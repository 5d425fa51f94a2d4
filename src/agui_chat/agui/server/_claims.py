"""The server's side of the approval store: which store to use (:func:`open_store`), and the
claims of one resumed run (:class:`ClaimGuard`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import timedelta

from ..._contents import FunctionCallContent
from ..._exceptions import ApprovalStoreError, ConfigurationError
from ...stores import ApprovalStore, InMemoryApprovalStore, store_from_url
from . import _resume_check
from ._resume_check import STORE_RETRY_AFTER, CheckedResume, ResumeRejected

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
    """The claims one resumed run holds (``checked.claimed``: call id -> store key, under
    ``owner``), each marked started just before its tool starts. While the run lasts their
    leases are renewed every third of ``lease``, so a lease runs out only when the process
    holding it died; when it ends, :meth:`settle` leaves each claim in the state a re-sent
    answer must find."""

    def __init__(self, store: ApprovalStore, checked: CheckedResume, lease: timedelta) -> None:
        self.store = store
        self.owner = checked.owner
        self.claimed = dict(checked.claimed)
        self.keep = checked.unbound  # answers no tool takes (the model's questions): used once
        self.lease = lease.total_seconds()
        self.started: set[str] = set()  # the calls whose start was asked for (once)
        self.running: set[str] = set()  # those the store marked started under our claim
        self.resulted: set[str] = set()  # those whose result the run produced
        # A timer, not a sleeping task: most runs end before the first renewal is due.
        self._timer: asyncio.TimerHandle | None = None
        self._renewal: asyncio.Future[None] | None = None
        self._settled = False
        if self.claimed:
            self._renew_later()

    def _renew_later(self) -> None:
        self._timer = asyncio.get_running_loop().call_later(self.lease / 3, self._renew_now)

    def _renew_now(self) -> None:
        self._renewal = asyncio.ensure_future(self._renew())

    async def _renew(self) -> None:
        keys = list(self.claimed.values())
        try:
            await self.store.renew(keys, owner=self.owner, lease_until=self._lease_until())
        except ApprovalStoreError:  # the next renewal may reach it; a lost lease is safe
            _log.warning("could not renew the claims of resume %s", self.owner)
        if not self._settled:
            self._renew_later()

    def _lease_until(self) -> float:
        return _resume_check._clock() + self.lease

    async def starting(self, call: FunctionCallContent) -> None:
        """Mark a claimed call started in the store; ``ResumeRejected`` (the tool does not
        start) if its claim lapsed and another resume took it, or the store is out of reach."""
        key = self.claimed.get(call.call_id)
        if key is None or call.call_id in self.started:
            return
        self.started.add(call.call_id)
        try:
            started = await asyncio.shield(
                self.store.mark_started(key, owner=self.owner, lease_until=self._lease_until())
            )
        except ApprovalStoreError as exc:
            raise ResumeRejected(
                "APPROVAL_STORE_UNAVAILABLE",
                "the approval store cannot be reached; the tool was not started",
                retry_after=STORE_RETRY_AFTER,
            ) from exc
        if not started:
            raise ResumeRejected(
                "RESUME_IN_PROGRESS",
                f"the claim on tool call {call.call_id!r} lapsed before its tool started and "
                "another resume took it; the tool was not started here",
                retry_after=self.lease,
            )
        self.running.add(call.call_id)

    async def settle(self, *, finished: bool) -> None:
        """At the end of the run: release the claims whose tool never started (the answer may
        be sent again); a started call without a result keeps ``LOST_RESULT`` if the run
        broke off (its outcome is unknown), or holds for good if the run ``finished`` (its
        tool asked again: the answer was used); so do the ``keep`` answers."""
        self._settled = True
        if self._timer is not None:
            self._timer.cancel()
        if self._renewal is not None:
            self._renewal.cancel()
        unstarted: list[str] = []
        lost: list[str] = []
        used = [key for key in self.claimed.values() if key in self.keep]
        for call_id, key in self.claimed.items():
            if call_id not in self.running and key not in self.keep:
                unstarted.append(key)
            elif call_id in self.running and call_id not in self.resulted:
                (used if finished else lost).append(key)
        with contextlib.suppress(ApprovalStoreError):  # the leases then run out
            await asyncio.shield(self._settle(unstarted, lost, used))

    async def _settle(self, unstarted: list[str], lost: list[str], used: list[str]) -> None:
        for key in unstarted:
            await self.store.release(key, owner=self.owner)
        for key in lost:
            await self.store.record_result(key, _resume_check.LOST_RESULT)
        if used:
            await self.store.renew(used, owner=self.owner, lease_until=None)
