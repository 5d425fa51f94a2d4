"""``RedisApprovalStore``: consumed approvals in Redis (or Valkey), shared by every server that
holds the signing key, on any machine. Needs the ``[redis]`` extra (``redis-py``'s asyncio
client); works with Redis 6 and later and with Valkey.

One key per claimed interrupt, its value the record's state:

- ``p:<lease_until>:<owner>`` — claimed, the tool not started yet;
- ``s:<lease_until>:<owner>`` — the tool started (never run again; released only by its
  owner's ``release(started=True)``, when its tool never began);
- ``d:<result>`` — done, with the result a replay re-emits.

A claim is one Lua script: it checks the store's epoch (the key ``<prefix>epoch``, made on
first use and never expiring), then sets the record with the expiry that sweeps it, or takes
over a pending claim whose lease ran out. Moving a record on (started, renewed, released,
done) is a script or a ``SET ... XX KEEPTTL``, so the kept result lives exactly as long as
the claim. On a cluster, give a ``prefix`` with a hash tag (``"{agui_chat}:approval:"``), so
the epoch and the records share a slot.

The governance records live under the same prefix. The audit trail, which never expires:
its entries in the sorted set ``<prefix>audit:entries`` (score the seq, member
``<prev_hash>:<hash>:<body>``, the body byte for byte as sealed) and its head, apart from
them, in ``<prefix>audit:head`` (``<seq>:<hash>``). Redis's Lua cannot compute SHA-256, so
the base class seals each entry in Python and the store only compares and sets: each step
that appends is one Lua script that checks the head is still the one the entry follows
(else ``HeadMoved``, nothing written), then adds the entry and moves the head; the
"started" mark and the kept result are set in that same script, so the claim's use and its
record are written together or not at all. Entries already kept past the head (a head moved
back or removed by hand, or evicted) refuse every append (``AuditChainError``) instead of
starting a second chain beside them.

A remembered approval is the key ``<prefix>grant:<id>`` (its JSON, expiring when it does),
indexed in the sorted sets ``<prefix>grants:all``, ``<prefix>grants:thread:<thread_id>``
and ``<prefix>grants:principal:<principal_id>`` (score its expiry; each index expires with
its longest-lived grant and drops the expired ones as grants are added to it), all set by
one script. A revocation deletes the key, so no worker lists it after; a listing reads the
grants an index names and keeps only those that apply. Every script needs scripting
(``EVALSHA``): a Redis without it refuses the store (``ApprovalStoreMisconfiguredError``),
as it refuses its claims; values longer than Redis's ``proto-max-bulk-len`` (a result, an
audit record, a grant) are refused before they are sent (``ApprovalStoreValueError``).

The records are only as safe as Redis keeps them: a Redis without the append-only file, or
one that may evict keys, can lose used approvals. The store checks both on first use
(``CONFIG GET appendonly`` and ``maxmemory-policy``), logs a warning, or refuses to work
under ``strict=True`` (see docs/stores.md).
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Awaitable, Callable, Collection
from typing import Any, TypeVar

from .._exceptions import (
    ApprovalStoreError,
    ApprovalStoreMisconfiguredError,
    ApprovalStoreResetError,
    ApprovalStoreUnavailableError,
    ApprovalStoreValueError,
    AuditChainError,
    ConfigurationError,
)
from .._extras import needs_extra
from .._url_secrets import redact_url, without_url_secrets
from ..consent._audit import EMPTY_HEAD, AuditEntry
from ..consent._grants import Grant
from ._base import (
    ApprovalStore,
    Claim,
    ClaimRecord,
    HeadMoved,
    check_release,
    new_epoch,
    result_from_text,
    result_to_text,
)

with needs_extra("redis", by="RedisApprovalStore", package="redis-py"):
    import redis.asyncio as _redis
    from redis.asyncio.retry import Retry as _Retry
    from redis.backoff import NoBackoff as _NoBackoff
    from redis.exceptions import AuthenticationError as _RedisAuthenticationError
    from redis.exceptions import ClusterCrossSlotError as _RedisCrossSlot
    from redis.exceptions import ConnectionError as _RedisConnectionError
    from redis.exceptions import NoPermissionError as _RedisNoPermission
    from redis.exceptions import ReadOnlyError as _RedisReadOnly
    from redis.exceptions import RedisClusterException as _RedisClusterError
    from redis.exceptions import RedisError as _RedisError
    from redis.exceptions import ResponseError as _ResponseError

__all__ = ["RedisApprovalStore"]

_T = TypeVar("_T")

_log = logging.getLogger("agui_chat.stores")

_CLAIM = """
if ARGV[4] == '1' and redis.call('GET', KEYS[2]) ~= ARGV[5] then return -1 end
local v = redis.call('GET', KEYS[1])
if v then
  if string.sub(v, 1, 2) ~= 'p:' then return 0 end
  local lease = string.match(v, '^p:([^:]*):')
  if lease == '' or tonumber(lease) >= tonumber(ARGV[2]) then return 0 end
end
if ARGV[3] == '' then
  redis.call('SET', KEYS[1], ARGV[1])
else
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
end
return 1
"""
# The audit chain, for the scripts that append to it: ``moved`` checks that the head (key
# ``hk``, absent for an empty chain) is ``want`` and answers what stops the append of entry
# ``seq``: ``{-2, head}`` (another worker appended first) or ``{-3, seq}`` (entries at or
# past ``seq`` are already in ``ek``: the head was moved back or removed by hand); ``put``
# adds the entry and makes it the head. A script calls ``moved`` before it writes anything,
# so a refused append writes nothing at all.
_CHAIN = """
local function moved(hk, ek, want, seq)
  local h = redis.call('GET', hk) or ('0:' .. string.rep('0', 64))
  if h ~= want then return {-2, h} end
  if redis.call('ZCOUNT', ek, seq, '+inf') > 0 then return {-3, seq} end
  return nil
end
local function put(hk, ek, seq, member, head)
  redis.call('ZADD', ek, seq, member)
  redis.call('SET', hk, head)
end
"""
# KEYS: the record, the chain's head, its entries. ARGV[1] the owner, ARGV[2] the new lease
# ('' keeps it), ARGV[3] '1' to append the entry ARGV[4..7] (see _chain_args) with the mark.
_START = (
    _CHAIN
    + """
local v = redis.call('GET', KEYS[1])
if not v or string.sub(v, 1, 2) ~= 'p:' then return 0 end
local lease, owner = string.match(v, '^p:([^:]*):(.*)$')
if owner ~= ARGV[1] then return 0 end
if ARGV[2] ~= '' then lease = ARGV[2] end
if ARGV[3] == '1' then
  local refused = moved(KEYS[2], KEYS[3], ARGV[4], ARGV[5])
  if refused then return refused end
  put(KEYS[2], KEYS[3], ARGV[5], ARGV[6], ARGV[7])
end
redis.call('SET', KEYS[1], 's:' .. lease .. ':' .. owner, 'KEEPTTL')
return 1
"""
)
# KEYS: the record, the chain's head, its entries. ARGV[1] the record's new value ('d:' and
# the result); the entry ARGV[2..5] is appended only if the record held no result yet.
# 0: no record, nothing written; 1: kept and appended; 2: kept (it held a result already).
_RESULT = (
    _CHAIN
    + """
local v = redis.call('GET', KEYS[1])
if not v then return 0 end
if string.sub(v, 1, 2) ~= 'd:' then
  local refused = moved(KEYS[2], KEYS[3], ARGV[2], ARGV[3])
  if refused then return refused end
  put(KEYS[2], KEYS[3], ARGV[3], ARGV[4], ARGV[5])
  redis.call('SET', KEYS[1], ARGV[1], 'KEEPTTL')
  return 1
end
redis.call('SET', KEYS[1], ARGV[1], 'KEEPTTL')
return 2
"""
)
# KEYS: the chain's head, its entries; ARGV the entry (see _chain_args).
_APPEND = (
    _CHAIN
    + """
local refused = moved(KEYS[1], KEYS[2], ARGV[1], ARGV[2])
if refused then return refused end
put(KEYS[1], KEYS[2], ARGV[2], ARGV[3], ARGV[4])
return 1
"""
)
# KEYS[1] the grant, KEYS[2..] its indexes (sorted sets of grant ids, scored by expiry).
# ARGV: its JSON, its time to live (ms), its expiry (the score), its id, now. Each index
# drops what expired before now and lives as long as its longest-lived grant.
_PUT_GRANT = """
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
for i = 2, #KEYS do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', '(' .. ARGV[5])
  redis.call('ZADD', KEYS[i], ARGV[3], ARGV[4])
  if redis.call('PTTL', KEYS[i]) < tonumber(ARGV[2]) then
    redis.call('PEXPIRE', KEYS[i], ARGV[2])
  end
end
return 1
"""
# KEYS[1] the grant, KEYS[2] the index of all grants; ARGV[1] its id. The grant's JSON (nil:
# none), deleted: no worker lists it after this. Its scope's index drops it as it expires.
_REVOKE_GRANT = """
local v = redis.call('GET', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
if not v then return false end
redis.call('DEL', KEYS[1])
return v
"""
_RENEW = """
local v = redis.call('GET', KEYS[1])
if not v then return 0 end
local state, owner = string.match(v, '^([ps]):[^:]*:(.*)$')
if not state or owner ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], state .. ':' .. ARGV[2] .. ':' .. owner, 'KEEPTTL')
return 1
"""
_MAKE_EPOCH = """
redis.call('SET', KEYS[1], ARGV[1], 'NX')
return redis.call('GET', KEYS[1])
"""
# ARGV[1] the owner ('' for any), ARGV[2] '1' to release a started record too (its owner's:
# the caller checks that ARGV[1] is given). A done record ('d:') is never released.
_RELEASE = """
local v = redis.call('GET', KEYS[1])
if not v then return 0 end
local state, owner = string.match(v, '^([ps]):[^:]*:(.*)$')
if not state or (state == 's' and ARGV[2] ~= '1') then return 0 end
if ARGV[1] ~= '' and owner ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])
"""


def _client_address(client: Any) -> str:
    """How a lent client is named in errors: the URL it connects to (never a password)."""
    nodes = getattr(getattr(client, "nodes_manager", None), "startup_nodes", None)
    if nodes:  # a cluster client: its first startup node
        return f"redis://{next(iter(nodes))}"
    kwargs = getattr(getattr(client, "connection_pool", None), "connection_kwargs", None) or {}
    db = kwargs.get("db", 0)
    if kwargs.get("path"):
        return f"unix://{kwargs['path']}?db={db}"
    return f"redis://{kwargs.get('host', '?')}:{kwargs.get('port', '?')}/{db}"


class RedisApprovalStore(ApprovalStore):
    """Consumed approvals in Redis: ``url_or_client`` is a ``redis://`` / ``rediss://`` /
    ``unix://`` URL or a ``redis.asyncio.Redis`` client (yours to close).

    Every server that holds the signing key must use the same Redis database. ``prefix``
    namespaces the keys. An unreachable server makes every call raise
    ``ApprovalStoreUnavailableError`` naming the URL (never its password): the server then
    refuses the resume with ``APPROVAL_STORE_UNAVAILABLE`` and runs nothing, and the same
    answer succeeds once Redis is back. ``clock`` gives the time in epoch seconds. With
    ``strict=True`` a Redis that does not keep its keys (no append-only file, or an
    eviction policy that may drop them) is refused (``ApprovalStoreMisconfiguredError``)
    instead of warned about. A Redis that refuses this client (a wrong password, an ACL, a
    read-only replica) raises ``ApprovalStoreMisconfiguredError``, a value it cannot hold
    ``ApprovalStoreValueError``; only an outage is ``ApprovalStoreUnavailableError``.
    """

    def __init__(
        self,
        url_or_client: str | Any,
        *,
        prefix: str = "agui_chat:approval:",
        timeout: float = 2.0,
        strict: bool = False,
        clock: Callable[[], float] = time.time,
        audit_arguments: bool = True,
    ) -> None:
        super().__init__(clock=clock, audit_arguments=audit_arguments)
        self.strict = strict
        self._checked = False
        #: The longest value Redis takes (its ``proto-max-bulk-len``, read with the checks
        #: below): a longer one is refused here, since Redis answers it by closing the
        #: connection, which would read as an outage.
        self._max_value = _DEFAULT_MAX_VALUE
        self._owns_client = isinstance(url_or_client, str)  # a client lent is yours to close
        if isinstance(url_or_client, str):
            self.url = redact_url(url_or_client)
            try:
                # One retry on a fresh connection: after a Redis restart the pooled one is
                # dead. Every command here is safe to send twice (a claim sent twice is held
                # by its own owner: refused as held, never run twice).
                client = _redis.Redis.from_url(
                    url_or_client,
                    socket_timeout=timeout,
                    socket_connect_timeout=timeout,
                    retry=_Retry(_NoBackoff(), 1),
                    retry_on_error=[_RedisConnectionError],
                )
            except ValueError as exc:
                why = without_url_secrets(str(exc), url_or_client)  # redis-py may quote it
                raise ConfigurationError(f"cannot read the Redis URL {self.url}: {why}") from None
        else:
            client = url_or_client
            self.url = _client_address(client)
        self._client: Any = client
        self._prefix = prefix
        self._claim_script = client.register_script(_CLAIM)
        self._start = client.register_script(_START)
        self._renew = client.register_script(_RENEW)
        self._release = client.register_script(_RELEASE)
        self._make_epoch = client.register_script(_MAKE_EPOCH)
        self._keep_result = client.register_script(_RESULT)
        self._append_script = client.register_script(_APPEND)
        self._put_grant_script = client.register_script(_PUT_GRANT)
        self._revoke_grant = client.register_script(_REVOKE_GRANT)
        self._head_key = prefix + "audit:head"
        self._entries_key = prefix + "audit:entries"

    def __repr__(self) -> str:
        return f"RedisApprovalStore({self.url!r})"

    async def _call(self, work: Awaitable[_T]) -> _T:
        try:
            return await work
        # A cluster client's connection failures are not RedisErrors (redis-py).
        except (_RedisError, _RedisClusterError, OSError) as exc:
            kind = _error(exc)
            what = "is unavailable" if kind is ApprovalStoreUnavailableError else "refused"
            raise kind(
                f"the approval store {self.url} {what}: {type(exc).__name__}: {exc}"
            ) from exc

    async def _epoch(self) -> str:
        if not self._checked:
            await self._check_keeps_keys()
        keys = [self._prefix + "epoch"]
        return _text(await self._call(self._make_epoch(keys=keys, args=[new_epoch(self._clock())])))

    async def _check_keeps_keys(self) -> None:
        """Warn (refuse under ``strict``) unless Redis keeps every key: the append-only file
        on, and nothing evicted (``noeviction``, or no memory limit)."""
        try:
            config: dict[Any, Any] = {}
            for name in ("appendonly", "maxmemory-policy", "maxmemory", "proto-max-bulk-len"):
                config.update(await self._call(self._client.config_get(name)))
            found = {_text(k): _text(v) for k, v in config.items()}
            limit = found.get("proto-max-bulk-len", "")
            self._max_value = int(limit) if limit.isdigit() else self._max_value
        except ApprovalStoreError as exc:
            if not isinstance(exc.__cause__, _ResponseError):
                raise
            # CONFIG is disabled (a managed Redis, an ACL): say so, once
            problems = [f"its configuration could not be read ({exc.__cause__})"]
        else:
            problems = []
            if found.get("appendonly") != "yes":
                problems.append(
                    "appendonly is not yes (a restart loses the claims since the "
                    "last snapshot, or all of them)"
                )
            if found.get("maxmemory", "0") != "0" and found.get("maxmemory-policy") != "noeviction":
                problems.append(
                    f"maxmemory-policy is {found.get('maxmemory-policy')!r}, not "
                    "'noeviction' (evicted claims make used approvals new)"
                )
        self._checked = True
        if problems:
            message = (
                f"the approval store {self.url} may lose used approvals: "
                + "; ".join(problems)
                + " (see docs/stores.md)"
            )
            if self.strict:
                self._checked = False
                raise ApprovalStoreMisconfiguredError(message)
            _log.warning("%s", message)

    async def _claim(self, claim: Claim) -> bool:
        lease, expires_at, now = claim.lease_until, claim.expires_at, claim.now
        value = f"p:{'' if lease is None else repr(float(lease))}:{claim.owner}"
        ttl_ms = None if expires_at is None else max(1, math.ceil((expires_at - now) * 1000))
        keys = [self._prefix + claim.key, self._prefix + "epoch"]
        args = [value, repr(now), "" if ttl_ms is None else str(ttl_ms)]
        args += ["0", ""] if claim.epoch is None else ["1", claim.epoch]
        claimed = await self._call(self._claim_script(keys=keys, args=args))
        if claimed == -1:
            raise ApprovalStoreResetError(
                f"the approval store {self.url} lost its records since the interrupt was "
                "issued (its epoch is another, or gone)"
            )
        return bool(claimed)

    async def _mark_started(
        self, key: str, owner: str, lease_until: float | None, entry: AuditEntry | None
    ) -> bool:
        args: list[str | bytes] = [owner, "" if lease_until is None else repr(float(lease_until))]
        args += ["0"] if entry is None else ["1", *self._chain_args(entry)]
        keys = [self._prefix + key, self._head_key, self._entries_key]
        return self._appended(await self._call(self._start(keys=keys, args=args)))

    async def renew(self, keys: Collection[str], *, owner: str, lease_until: float | None) -> None:
        args = [owner, "" if lease_until is None else repr(float(lease_until))]
        for key in keys:
            await self._call(self._renew(keys=[self._prefix + key], args=args))

    async def release(self, key: str, *, owner: str = "", started: bool = False) -> None:
        check_release(owner, started)
        args = [owner, "1" if started else "0"]
        await self._call(self._release(keys=[self._prefix + key], args=args))

    async def _record_result(self, key: str, result: str, entry: AuditEntry | None) -> bool:
        """Keep ``result``; whether ``entry`` was appended with it (``False``: the record is
        absent, or held a result already)."""
        name = self._prefix + key
        value = ("d:" + result_to_text(result)).encode("utf-8")
        self._check_size(value, "a result")
        if entry is None:
            await self._call(self._client.set(name, value, xx=True, keepttl=True))
            return False
        keys = [name, self._head_key, self._entries_key]
        args = [value, *self._chain_args(entry)]
        reply = await self._call(self._keep_result(keys=keys, args=args))
        return self._appended(reply) and reply == 1

    def _check_size(self, value: bytes, what: str) -> None:
        """Refuse a value longer than Redis takes (``ApprovalStoreValueError``) before it is
        sent: Redis would answer it by closing the connection, which reads as an outage."""
        if len(value) > self._max_value:
            raise ApprovalStoreValueError(
                f"the approval store {self.url} cannot hold {what} of {len(value)} bytes: "
                f"Redis takes at most {self._max_value} (proto-max-bulk-len)"
            )

    # -- the audit trail -------------------------------------------------------------------------

    def _chain_args(self, entry: AuditEntry) -> list[str | bytes]:
        """What the scripts append ``entry`` with: the head it follows, its seq, the member
        kept (``<prev_hash>:<hash>:<body>``) and the head it makes."""
        member = f"{entry.prev_hash}:{entry.hash}:{entry.body}".encode()
        self._check_size(member, "an audit record")
        follows = f"{entry.seq - 1}:{entry.prev_hash}"
        return [follows, str(entry.seq), member, f"{entry.seq}:{entry.hash}"]

    def _appended(self, reply: Any) -> bool:
        """What a script that appends answered: whether it wrote (``False``: the record is
        not the owner's, or absent); ``HeadMoved`` or ``AuditChainError`` when the chain
        refused the entry (then it wrote nothing)."""
        if not isinstance(reply, list):
            return bool(reply)
        code, at = int(reply[0]), _text(reply[1])
        if code == -2:
            raise HeadMoved(_head(at))
        seq = int(at)
        raise AuditChainError(
            f"the audit trail in {self.url} already holds records from {seq} on, past its "
            f"head ({seq - 1}): the head was moved back or removed (by hand, or evicted). "
            "Nothing was appended, so no second chain is started beside the first",
            seq=seq,
        )

    async def _append(self, entry: AuditEntry) -> None:
        keys = [self._head_key, self._entries_key]
        args = self._chain_args(entry)
        self._appended(await self._call(self._append_script(keys=keys, args=args)))

    async def _audit_head(self) -> tuple[int, str] | None:
        raw = await self._call(self._client.get(self._head_key))
        return None if raw is None else _head(_text(raw))

    async def _audit_entries(self, after: int, limit: int) -> list[AuditEntry]:
        rows = await self._call(
            self._client.zrangebyscore(
                self._entries_key, f"({after}", "+inf", start=0, num=limit, withscores=True
            )
        )
        entries = []
        for member, score in rows:
            prev_hash, _, rest = _text(member).partition(":")
            sealed, _, body = rest.partition(":")
            entries.append(AuditEntry(int(float(score)), body, prev_hash, sealed))
        return entries

    # -- remembered approvals --------------------------------------------------------------------

    def _grant_key(self, grant_id: str) -> str:
        return f"{self._prefix}grant:{grant_id}"

    def _grant_indexes(self, thread_id: str | None, principal_id: str | None) -> list[str]:
        """The indexes of the grants scoped to ``thread_id`` or ``principal_id`` (neither:
        the index of all)."""
        if thread_id is None and principal_id is None:
            return [self._prefix + "grants:all"]
        indexes = [] if thread_id is None else [f"{self._prefix}grants:thread:{thread_id}"]
        if principal_id is not None:
            indexes.append(f"{self._prefix}grants:principal:{principal_id}")
        return indexes

    async def _put_grant(self, grant: Grant) -> None:
        text = json.dumps(grant.to_dict()).encode("utf-8")
        self._check_size(text, "a grant")
        now, expires = self._clock(), grant.expires.timestamp()
        ttl_ms = max(1, math.ceil((expires - now) * 1000))
        keys = [self._grant_key(grant.id), *self._grant_indexes(None, None)]
        if grant.scope == "thread" and grant.thread_id is not None:
            keys += self._grant_indexes(grant.thread_id, None)
        elif grant.scope == "principal" and grant.principal_id is not None:
            keys += self._grant_indexes(None, grant.principal_id)
        args: list[str | bytes] = [text, str(ttl_ms), repr(expires), grant.id, repr(now)]
        await self._call(self._put_grant_script(keys=keys, args=args))

    async def _grants(self, thread_id: str | None, principal_id: str | None) -> list[Grant]:
        found: dict[str, Grant] = {}
        for index in self._grant_indexes(thread_id, principal_id):
            ids = [_text(i) for i in await self._call(self._client.zrange(index, 0, -1))]
            if not ids:
                continue
            texts = await self._call(self._client.mget([self._grant_key(i) for i in ids]))
            for grant_id, text in zip(ids, texts, strict=True):
                grant = None if text is None else self._read_grant(_text(text))
                # The index only finds candidates: each grant is checked against its key and
                # what was asked, so an entry out of place never lists a grant where it is not.
                if grant is not None and _applies(grant, grant_id, thread_id, principal_id):
                    found[grant.id] = grant
        return list(found.values())

    def _read_grant(self, text: str) -> Grant | None:
        """The grant kept as ``text``; ``None`` (and a warning) if it cannot be read: a grant
        nobody can read lets nothing run without asking."""
        try:
            return Grant.from_dict(json.loads(text))
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            _log.warning("the approval store %s holds a grant it cannot read: %r", self.url, exc)
            return None

    async def revoke_grant(self, grant_id: str) -> bool:
        keys = [self._grant_key(grant_id), *self._grant_indexes(None, None)]
        text = await self._call(self._revoke_grant(keys=keys, args=[grant_id]))
        grant = None if text is None else self._read_grant(_text(text))
        return grant is not None and grant.expires.timestamp() > self._clock()

    async def record(self, key: str) -> ClaimRecord | None:
        raw = await self._call(self._client.get(self._prefix + key))
        if raw is None:
            return None
        text = _text(raw)
        if text.startswith("d:"):
            return ClaimRecord("", True, None, result_from_text(text[2:]))
        state, *rest = text.split(":", 2)
        lease, owner = rest if len(rest) == 2 else ("", rest[0] if rest else "")
        return ClaimRecord(owner, state == "s", float(lease) if lease else None)

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()


#: Redis's default ``proto-max-bulk-len`` (512 MiB), when its configuration cannot be read.
_DEFAULT_MAX_VALUE = 512 * 1024 * 1024


def _error(exc: BaseException) -> type[ApprovalStoreError]:
    """What a redis-py error means for a caller: a refusal of this client, which an operator
    must fix and retrying does not (a wrong password, an ACL without the permission, a
    read-only replica, keys in several cluster slots, scripting or ``CONFIG`` turned off); or
    an outage (no connection, a timeout, Redis loading its data, out of memory, a failing
    disk): the same call may succeed later. A value too large for Redis is refused before it
    is sent (``RedisApprovalStore._check_size``): Redis would close the connection."""
    refusals = (_RedisAuthenticationError, _RedisNoPermission, _RedisReadOnly, _RedisCrossSlot)
    if isinstance(exc, refusals):
        return ApprovalStoreMisconfiguredError
    # redis-py strips Redis's "ERR " from the message
    if isinstance(exc, _ResponseError) and str(exc).startswith("unknown command"):
        return ApprovalStoreMisconfiguredError
    return ApprovalStoreUnavailableError


def _text(raw: Any) -> str:
    return raw.decode("utf-8") if isinstance(raw, bytes) else str(raw)


def _applies(grant: Grant, grant_id: str, thread_id: str | None, principal_id: str | None) -> bool:
    """Whether ``grant``, kept under ``grant_id``'s key, is its own and one of those scoped
    to ``thread_id`` or ``principal_id`` (neither given: every grant is)."""
    if grant.id != grant_id:
        return False
    if thread_id is None and principal_id is None:
        return True
    if grant.scope == "thread":
        return thread_id is not None and grant.thread_id == thread_id
    return (
        grant.scope == "principal"
        and principal_id is not None
        and grant.principal_id == principal_id
    )


def _head(text: str) -> tuple[int, str] | None:
    """The chain's head kept as ``<seq>:<hash>`` (``None``: the empty chain's); a value that
    is not one gives a head no chain ends at, so ``verify_audit`` fails and nothing appends."""
    seq, _, sealed = text.partition(":")
    head = (int(seq) if seq.isdigit() else -1, sealed)
    return None if head == EMPTY_HEAD else head
