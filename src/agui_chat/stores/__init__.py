"""Approval stores: where a server records the approvals it consumed, so that an answer sent
again (to another worker, or after a restart) runs nothing twice."""

from __future__ import annotations

from ._base import ApprovalStore
from ._memory import InMemoryApprovalStore

__all__ = ["ApprovalStore", "InMemoryApprovalStore"]
