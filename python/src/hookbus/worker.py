"""Running policies: one NATS connection, bounded concurrency, drain on SIGTERM/SIGINT.

``await run([egress], servers="nats://127.0.0.1:4222")`` serves until a signal; ``Worker`` is
the same as an object (``start()`` / ``stop()``) for tests and embedding.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from typing import Iterable, Sequence

import nats
from nats.aio.client import Client

from .codec import Codec
from .errors import HookbusError
from .observer import Observer
from .policy import Policy
from .requests import RequestServer, Slots
from .state import KvStateStore
from .tokens import NAMESPACE

log = logging.getLogger("hookbus.worker")

DEFAULT_CONCURRENCY = 64
DEFAULT_MAX_QUEUED = 1024
#: How long stop() waits for handlers before cancelling them (each request has its own deadline).
DEFAULT_DRAIN_SECONDS = 30.0


class Worker:
    def __init__(self, policies: Sequence[Policy], *, nc: Client, namespace: str = "hookbus",
                 concurrency: int = DEFAULT_CONCURRENCY, max_queued: int = DEFAULT_MAX_QUEUED,
                 drain_seconds: float = DEFAULT_DRAIN_SECONDS) -> None:
        _check(policies, namespace)
        self.policies = tuple(policies)
        self.nc = nc
        self.namespace = namespace
        self.slots = Slots(concurrency, max_queued)
        self.drain_seconds = drain_seconds
        js = nc.jetstream()
        self.codec = Codec(js, namespace)
        self.state = KvStateStore(js, namespace)
        self.servers = [RequestServer(nc, namespace, p, self.codec, self.state, self.slots)
                        for p in self.policies]
        self.observers = [Observer(js, namespace, p, hook, self.codec, self.state, self.slots)
                          for p in self.policies for hook in p.observed_hooks]
        self._stopping: asyncio.Future[None] | None = None

    async def start(self) -> None:
        for server in self.servers:
            await server.start()
        await self.nc.flush()  # subscriptions are registered at the server before start returns
        for observer in self.observers:
            observer.start()
        log.info("policy worker serving %s",
                 [{"name": p.name, "version": p.version, "hooks": p.hooks} for p in self.policies])

    def stop(self) -> "asyncio.Future[None]":
        """Take no new work, let in-flight handlers answer (or reach their deadline). Idempotent."""
        if self._stopping is None:
            self._stopping = asyncio.ensure_future(self._drain())
        return self._stopping

    async def _drain(self) -> None:
        for server in self.servers:
            await server.drain()
        await asyncio.gather(*(o.stop() for o in self.observers))
        try:
            await asyncio.wait_for(self.slots.idle(), self.drain_seconds)
        except asyncio.TimeoutError:
            log.warning("handlers still running after %ss; cancelled", self.drain_seconds)
            for task in list(self.slots.tasks):
                task.cancel()
        if not self.nc.is_closed:
            try:
                await self.nc.flush(timeout=2)
            except Exception:  # noqa: BLE001 - the answers were handed over; nothing more to do
                pass
        log.info("policy worker stopped")

    def abort(self) -> None:
        for task in list(self.slots.tasks):
            task.cancel()


async def connect(servers: str, name: str) -> Client:
    """One connection for everything; it reconnects forever and resubscribes by itself."""
    return await nats.connect(servers=servers.split(","), name=name, max_reconnect_attempts=-1,
                              reconnect_time_wait=0.25, connect_timeout=5,
                              allow_reconnect=True)


async def run(policies: Iterable[Policy], *, servers: str = "nats://127.0.0.1:4222",
              namespace: str = "hookbus", concurrency: int = DEFAULT_CONCURRENCY,
              max_queued: int = DEFAULT_MAX_QUEUED) -> None:
    """Serve until SIGTERM/SIGINT, then drain; a second signal cancels the handlers."""
    listed = list(policies)
    nc = await connect(servers, "hookbus-worker " + ",".join(p.name for p in listed))
    worker = Worker(listed, nc=nc, namespace=namespace, concurrency=concurrency,
                    max_queued=max_queued)
    loop = asyncio.get_running_loop()
    stop_requested = asyncio.Event()
    signals = 0

    def on_signal() -> None:
        nonlocal signals
        signals += 1
        if signals == 1:
            log.info("signal received: draining")
            stop_requested.set()
        else:
            log.warning("second signal: cancelling handlers")
            worker.abort()

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, on_signal)
    try:
        await worker.start()
        await stop_requested.wait()
        await worker.stop()
    finally:
        if not nc.is_closed:
            await nc.drain()


def _check(policies: Sequence[Policy], namespace: str) -> None:
    if not NAMESPACE.match(namespace):
        raise HookbusError("HOOKBUS_INVALID_ARGUMENT", f"invalid namespace {namespace!r}")
    if not policies:
        raise HookbusError("HOOKBUS_INVALID_POLICY", "a worker needs at least one policy")
    names = [p.name for p in policies]
    if len(set(names)) != len(names):
        raise HookbusError("HOOKBUS_INVALID_POLICY", f"a policy is given twice: {names}")
    for p in policies:
        if not isinstance(p, Policy):
            raise HookbusError("HOOKBUS_INVALID_POLICY", "serve policies made with @policy()")
