"""The approval store's contract: what makes a replayed resume run nothing twice.

Before a resumed call runs, the server *claims* its interrupt; a second claim of the same
interrupt fails, and the server re-emits the result it kept instead of running the tool
again. Every store implements :class:`ApprovalStore` with an atomic claim.
"""

from __future__ import annotations

import abc

__all__ = ["ApprovalStore"]


class ApprovalStore(abc.ABC):
    """Records which interrupts were consumed, and the tool result each one produced.

    ``key`` identifies one issued interrupt (a digest of its decoded signature, so every
    spelling of one id gives the same key). ``expires_at`` is when the interrupt stops being
    answerable at all (epoch seconds, or ``None`` for never): its expiry plus
    ``ANSWER_RETENTION`` (see ``_resume_check``), after which every answer to it, even a
    cancel, is refused. Keep the record at least until then; dropping it earlier would let
    the same answer be accepted again.
    """

    @abc.abstractmethod
    async def claim(self, key: str, *, expires_at: float | None) -> bool:
        """Mark ``key`` consumed. True if this call claimed it; False if it already was.

        Must be atomic: of two concurrent claims of one key, exactly one returns True.
        """

    @abc.abstractmethod
    async def release(self, key: str) -> None:
        """Undo a claim whose run never started (so the answer can be sent again)."""

    @abc.abstractmethod
    async def record_result(self, key: str, result: str) -> None:
        """Keep the tool result (the ``TOOL_CALL_RESULT`` content) of a claimed interrupt."""

    @abc.abstractmethod
    async def get_result(self, key: str) -> str | None:
        """The result kept for ``key``, or ``None`` if there is none (yet)."""
