"""Session state on JetStream KV (``<ns>_state``), shared with TypeScript workers of the same policy.

Keys are ``<policy>.<token(sessionKey)>.<token(key)>`` and values JSON, exactly as the TypeScript
SDK stores them. ``update`` is compare-and-set with bounded, jittered retries; after the last lost
race it fails with HOOKBUS_STATE_CONFLICT instead of dropping the write. Every operation gives up
at the call's deadline (HOOKBUS_POLICY_TIMEOUT).
"""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any, Awaitable, Callable, TypeVar

from nats.js import JetStreamContext
from nats.js.errors import BucketNotFoundError, KeyNotFoundError, KeyWrongLastSequenceError
from nats.js.errors import APIError
from nats.js.kv import KeyValue

from . import jsontext
from .errors import HookbusError
from .tokens import encode_token

T = TypeVar("T")
STATE_TTL_SECONDS = 30 * 24 * 60 * 60
MAX_ATTEMPTS = 12


class KvStateStore:
    """One bucket per namespace, opened (or created) once per worker."""

    def __init__(self, js: JetStreamContext, namespace: str) -> None:
        self.js = js
        self.bucket_name = f"{namespace}_state"
        self._kv: asyncio.Future[KeyValue] | None = None

    async def kv(self) -> KeyValue:
        if self._kv is None:
            self._kv = asyncio.ensure_future(self._open())
        try:
            return await asyncio.shield(self._kv)
        except Exception:
            self._kv = None  # a failed open is retried on the next use
            raise

    async def _open(self) -> KeyValue:
        try:
            return await self.js.key_value(self.bucket_name)
        except BucketNotFoundError:
            pass
        try:
            return await self.js.create_key_value(
                bucket=self.bucket_name, history=1, ttl=STATE_TTL_SECONDS,
                description="hookbus policy session state",
            )
        except APIError:
            # Another worker created it first.
            return await self.js.key_value(self.bucket_name)


class SessionState:
    """One policy's memory of one session; values are JSON."""

    def __init__(self, store: KvStateStore, policy: str, session_key: str,
                 deadline: float | None) -> None:
        self._store = store
        self.policy = policy
        self.session_key = session_key
        self._deadline = deadline

    def _key(self, key: str) -> str:
        if not isinstance(key, str) or key == "":
            raise TypeError(f"state keys are non-empty strings, got {key!r}")
        return f"{self.policy}.{encode_token(self.session_key)}.{encode_token(key)}"

    async def _within(self, work: Awaitable[T], key: str, what: str) -> T:
        if self._deadline is None:
            return await work
        remaining = self._deadline - time.monotonic()
        try:
            if remaining <= 0:
                raise asyncio.TimeoutError
            return await asyncio.wait_for(work, remaining)
        except asyncio.TimeoutError:
            if asyncio.iscoroutine(work):
                work.close()
            raise HookbusError(
                "HOOKBUS_POLICY_TIMEOUT",
                f'state "{key}" of policy "{self.policy}": the deadline passed during {what}',
                {"policy": self.policy, "key": key},
            ) from None

    async def get(self, key: str) -> Any:
        kv = await self._within(self._store.kv(), key, "opening the bucket")
        try:
            entry = await self._within(kv.get(self._key(key)), key, "a read")
        except KeyNotFoundError:
            return None
        return None if entry.value is None else jsontext.loads(entry.value)

    async def set(self, key: str, value: Any) -> None:
        kv = await self._within(self._store.kv(), key, "opening the bucket")
        await self._within(kv.put(self._key(key), _serialize(key, value)), key, "a write")

    async def delete(self, key: str) -> None:
        kv = await self._within(self._store.kv(), key, "opening the bucket")
        await self._within(kv.delete(self._key(key)), key, "a delete")

    async def update(self, key: str, fn: Callable[[Any], Any]) -> Any:
        """Read-modify-write without lost updates across workers; ``fn`` may run more than once."""
        kv = await self._within(self._store.kv(), key, "opening the bucket")
        address = self._key(key)
        for attempt in range(1, MAX_ATTEMPTS + 1):
            revision: int | None
            try:
                entry = await self._within(kv.get(address), key, "a read")
                previous = None if entry.value is None else jsontext.loads(entry.value)
                revision = entry.revision
            except KeyNotFoundError as deleted:
                # A delete marker still has a revision: updating against it stays a CAS.
                entry_rev = getattr(getattr(deleted, "entry", None), "revision", None)
                previous, revision = None, entry_rev
            data = _serialize(key, fn(previous))
            try:
                write = kv.create(address, data) if revision is None else kv.update(
                    address, data, last=revision)
                await self._within(write, key, "a compare-and-set write")
                return jsontext.loads(data)
            except (KeyWrongLastSequenceError, APIError) as error:
                if not _lost_race(error):
                    raise
            pause = min(0.25, 0.002 * 2 ** (attempt - 1)) * (0.5 + random.random() / 2)
            if self._deadline is not None and time.monotonic() + pause >= self._deadline:
                break
            await asyncio.sleep(pause)
        raise HookbusError(
            "HOOKBUS_STATE_CONFLICT",
            f'state "{key}" of policy "{self.policy}" changed under every attempt to update it',
            {"policy": self.policy, "key": key},
        )


def _lost_race(error: Exception) -> bool:
    if isinstance(error, KeyWrongLastSequenceError):
        return True
    return getattr(error, "err_code", None) in (10071, 10164)


def _serialize(key: str, value: Any) -> bytes:
    if value is None:
        raise TypeError(f'state "{key}": None has no stored form; use delete()')
    # NaN, inf or a set have no JSON form: a TypeScript worker of the same policy could not read
    # them back (HOOKBUS_POLICY_ERROR for the handler that tried).
    return jsontext.dumps(value, "HOOKBUS_POLICY_ERROR", f'state "{key}"')
