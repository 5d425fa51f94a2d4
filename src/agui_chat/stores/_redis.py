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

The records are only as safe as Redis keeps them: a Redis without the append-only file, or
one that may evict keys, can lose used approvals. The store checks both on first use
(``CONFIG GET appendonly`` and ``maxmemory-policy``), logs a warning, or refuses to work
under ``strict=True`` (see docs/stores.md).
"""

from __future__ import annotations

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
    ConfigurationError,
)
from .._extras import needs_extra
from .._url_secrets import redact_url, without_url_secrets
from ._base import (
    ApprovalStore,
    Claim,
    ClaimRecord,
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
    from redis.exceptions import BusyLoadingError as _RedisBusyLoadingError
    from redis.exceptions import ClusterCrossSlotError as _RedisCrossSlot
    from redis.exceptions import ConnectionError as _RedisConnectionError
    from redis.exceptions import DataError as _RedisDataError
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
_START = """
local v = redis.call('GET', KEYS[1])
if not v or string.sub(v, 1, 2) ~= 'p:' then return 0 end
local lease, owner = string.match(v, '^p:([^:]*):(.*)$')
if owner ~= ARGV[1] then return 0 end
if ARGV[2] ~= '' then lease = ARGV[2] end
redis.call('SET', KEYS[1], 's:' .. lease .. ':' .. owner, 'KEEPTTL')
return 1
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
    ) -> None:
        super().__init__(clock=clock)
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

    async def mark_started(
        self, key: str, *, owner: str = "", lease_until: float | None = None
    ) -> bool:
        args = [owner, "" if lease_until is None else repr(float(lease_until))]
        return bool(await self._call(self._start(keys=[self._prefix + key], args=args)))

    async def renew(self, keys: Collection[str], *, owner: str, lease_until: float | None) -> None:
        args = [owner, "" if lease_until is None else repr(float(lease_until))]
        for key in keys:
            await self._call(self._renew(keys=[self._prefix + key], args=args))

    async def release(self, key: str, *, owner: str = "", started: bool = False) -> None:
        check_release(owner, started)
        args = [owner, "1" if started else "0"]
        await self._call(self._release(keys=[self._prefix + key], args=args))

    async def record_result(self, key: str, result: str) -> None:
        name = self._prefix + key
        value = ("d:" + result_to_text(result)).encode("utf-8")
        if len(value) > self._max_value:
            raise ApprovalStoreValueError(
                f"the approval store {self.url} cannot hold a result of {len(value)} bytes: "
                f"Redis takes at most {self._max_value} (proto-max-bulk-len)"
            )
        await self._call(self._client.set(name, value, xx=True, keepttl=True))

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
    """What a redis-py error means for a caller: a value Redis cannot hold (a string over its
    size limit); a refusal of this client, which an operator must fix and retrying does not
    (a wrong password, an ACL without the permission, a read-only replica, keys in several
    cluster slots, scripting or ``CONFIG`` turned off); or an outage (no connection, a timeout,
    Redis loading its data, out of memory, a failing disk): the same call may succeed later."""
    if isinstance(exc, _RedisDataError):
        return ApprovalStoreValueError
    refusals = (_RedisAuthenticationError, _RedisNoPermission, _RedisReadOnly, _RedisCrossSlot)
    if isinstance(exc, refusals):
        return ApprovalStoreMisconfiguredError
    if isinstance(exc, _ResponseError) and not isinstance(exc, _RedisBusyLoadingError):
        text = str(exc)
        if any(mark in text for mark in ("exceeds maximum", "too large", "invalid bulk length")):
            return ApprovalStoreValueError
        if text.startswith(("unknown command", "ERR unknown command")):
            return ApprovalStoreMisconfiguredError
    return ApprovalStoreUnavailableError


def _text(raw: Any) -> str:
    return raw.decode("utf-8") if isinstance(raw, bytes) else str(raw)
