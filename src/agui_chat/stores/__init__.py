"""Approval stores: where a server records the approvals it consumed, so that an answer sent
again (to another worker, or after a restart) runs nothing twice.

- :class:`InMemoryApprovalStore` — this process only (tests, an ephemeral signing key);
- :class:`SQLiteApprovalStore` — a file shared by the workers of one host, kept across
  restarts (stdlib ``sqlite3``);
- :class:`RedisApprovalStore` — shared by every machine (the ``[redis]`` extra);
- :class:`PostgresApprovalStore` — a table shared by every machine (the ``[postgres]`` extra);
- :func:`store_from_url` — one of them from ``memory://``, ``sqlite:///path``,
  ``redis://host:port/db`` or ``postgresql://user@host:port/dbname``.

Each also keeps the governance records: the hash-chained audit trail (:class:`AuditRecord`,
``ApprovalStore.audit()`` / ``verify_audit()``) and remembered approvals (:class:`Grant`,
``ApprovalStore.grants()`` / ``revoke_grant()``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..consent._audit import AuditRecord
from ..consent._grants import Grant
from ._base import ApprovalStore, Claim, ClaimRecord
from ._memory import InMemoryApprovalStore
from ._sqlite import SQLiteApprovalStore
from ._url import store_from_url

if TYPE_CHECKING:
    from ._postgres import PostgresApprovalStore
    from ._redis import RedisApprovalStore

__all__ = [
    "ApprovalStore",
    "AuditRecord",
    "Claim",
    "ClaimRecord",
    "Grant",
    "InMemoryApprovalStore",
    "PostgresApprovalStore",
    "RedisApprovalStore",
    "SQLiteApprovalStore",
    "store_from_url",
]


def __getattr__(name: str) -> Any:
    # redis-py and psycopg are extras: imported only when their store is asked for.
    if name == "RedisApprovalStore":
        from ._redis import RedisApprovalStore

        return RedisApprovalStore
    if name == "PostgresApprovalStore":
        from ._postgres import PostgresApprovalStore

        return PostgresApprovalStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
