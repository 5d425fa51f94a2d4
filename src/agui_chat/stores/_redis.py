"""``RedisApprovalStore``: consumed approvals in Redis (or Valkey), shared by every server that
holds the signing key, on any machine. Needs the ``[redis]`` extra (``redis-py``'s asyncio
client); works with Redis 6 and later and with Valkey.

One key per claimed interrupt, its value the record's state:

- ``p:<lease_until>:<owner>`` — claimed, the tool not started yet;
- ``s:<owner>`` — the tool started (never released, never run again);
- ``d:<result>`` — done, with the result a replay re-emits.

A claim is one ``SET key value NX PX <ms until the record may go>``: atomic on the server,
with the expiry that sweeps it. Only when the key exists does a short Lua script take over a
claim whose lease ran out. Moving a record on (started, released, done) is a script or a
``SET ... XX KEEPTTL``, so the kept result lives exactly as long as the claim.
"""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from .._exceptions import ApprovalStoreUnavailableError, ConfigurationError
from .._extras import needs_extra
from ._base import ApprovalStore
from ._url_redaction import redact_url

with needs_extra("redis", by="RedisApprovalStore", package="redis-py"):
    import redis.asyncio as _redis
    from redis.exceptions import RedisClusterException as _RedisClusterError
    from redis.exceptions import RedisError as _RedisError

__all__ = ["RedisApprovalStore"]

_T = TypeVar("_T")

_TAKE_OVER = """
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
if string.match(v, '^p:[^:]*:(.*)$') ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], 's:' .. ARGV[1], 'KEEPTTL')
return 1
"""
_RELEASE = """
local v = redis.call('GET', KEYS[1])
if not v or string.sub(v, 1, 2) ~= 'p:' then return 0 end
if ARGV[1] ~= '' and string.match(v, '^p:[^:]*:(.*)$') ~= ARGV[1] then return 0 end
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
    answer succeeds once Redis is back. ``clock`` gives the time in epoch seconds.
    """

    def __init__(
        self,
        url_or_client: str | Any,
        *,
        prefix: str = "agui_chat:approval:",
        timeout: float = 2.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(clock=clock)
        self._owns_client = isinstance(url_or_client, str)  # a client lent is yours to close
        if isinstance(url_or_client, str):
            self.url = redact_url(url_or_client)
            try:
                client = _redis.Redis.from_url(
                    url_or_client, socket_timeout=timeout, socket_connect_timeout=timeout
                )
            except ValueError as exc:
                raise ConfigurationError(f"cannot read the Redis URL {self.url}: {exc}") from None
        else:
            client = url_or_client
            self.url = _client_address(client)
        self._client: Any = client
        self._prefix = prefix
        self._take_over = client.register_script(_TAKE_OVER)
        self._start = client.register_script(_START)
        self._release = client.register_script(_RELEASE)

    def __repr__(self) -> str:
        return f"RedisApprovalStore({self.url!r})"

    async def _call(self, work: Awaitable[_T]) -> _T:
        try:
            return await work
        # A cluster client's connection failures are not RedisErrors (redis-py).
        except (_RedisError, _RedisClusterError, OSError) as exc:
            raise ApprovalStoreUnavailableError(
                f"the approval store {self.url} is unavailable: {type(exc).__name__}: {exc}"
            ) from exc

    async def _claim(
        self, key: str, expires_at: float | None, owner: str, lease_until: float | None, now: float
    ) -> bool:
        value = f"p:{'' if lease_until is None else repr(float(lease_until))}:{owner}"
        ttl_ms = None if expires_at is None else max(1, math.ceil((expires_at - now) * 1000))
        name = self._prefix + key
        if await self._call(self._client.set(name, value, nx=True, px=ttl_ms)):
            return True
        args = [value, repr(now), "" if ttl_ms is None else str(ttl_ms)]
        return bool(await self._call(self._take_over(keys=[name], args=args)))

    async def mark_started(self, key: str, *, owner: str = "") -> bool:
        return bool(await self._call(self._start(keys=[self._prefix + key], args=[owner])))

    async def release(self, key: str, *, owner: str = "") -> None:
        await self._call(self._release(keys=[self._prefix + key], args=[owner]))

    async def record_result(self, key: str, result: str) -> None:
        name = self._prefix + key
        await self._call(self._client.set(name, "d:" + result, xx=True, keepttl=True))

    async def get_result(self, key: str) -> str | None:
        raw = await self._call(self._client.get(self._prefix + key))
        if raw is None:
            return None
        text = raw.decode("utf-8") if isinstance(raw, bytes) else str(raw)
        return text[2:] if text.startswith("d:") else None

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()
