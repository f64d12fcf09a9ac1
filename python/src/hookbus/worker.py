"""Running policies: one NATS connection, bounded concurrency, drain on SIGTERM/SIGINT.

``await run([egress], servers="nats://127.0.0.1:4222")`` serves until a signal; ``Worker`` is
the same as an object (``start()`` / ``stop()``) for tests and embedding.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from typing import Any, Iterable, Sequence

from nats import errors as nats_errors
from nats.aio.client import Client

from .codec import Codec
from .discovery import Discovery
from .credentials import Signer, check_inbox_prefix
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
#: How long the first connection is retried (NATS may start after the worker), as in TypeScript.
DEFAULT_CONNECT_WAIT_SECONDS = 30.0


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
        self.discovery = Discovery(namespace, self.policies, lambda: len(self.slots.tasks))
        self.servers = [RequestServer(nc, namespace, p, self.codec, self.state, self.slots,
                                      self.discovery.answered)
                        for p in self.policies]
        self.observers = [Observer(js, namespace, p, hook, self.codec, self.state, self.slots)
                          for p in self.policies for hook in p.observed_hooks]
        self._stopping: asyncio.Future[None] | None = None

    async def start(self) -> None:
        for server in self.servers:
            await server.start()
        await self.discovery.start(self.nc)
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
        await self.discovery.stop()  # a draining worker is no longer a live one
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


async def connect(servers: str, name: str, *, signer: Signer | None = None,
                  inbox_prefix: str | None = None, user: str | None = None,
                  password: str | None = None, token: str | None = None,
                  wait_seconds: float = DEFAULT_CONNECT_WAIT_SECONDS) -> Client:
    """One connection for everything; once up it reconnects forever and resubscribes by itself.

    The first connection is retried for ``wait_seconds`` (NATS may start after the worker; 0: one
    attempt), except a refusal of the credentials, which no retry mends: both end in a coded
    error (HOOKBUS_NATS_AUTH, HOOKBUS_NATS_UNREACHABLE) that says what to check.
    """
    urls = [s.strip() for s in servers.split(",") if s.strip()]
    nc = _SignedClient(signer)
    refused: asyncio.Future[Exception] = asyncio.get_running_loop().create_future()
    last: list[BaseException | None] = []

    async def on_error(error: Exception) -> None:
        last[:] = [error]
        if _is_auth_failure(error) and not refused.done():
            refused.set_result(error)
        log.warning("nats: %s", error)

    options: dict[str, Any] = dict(
        servers=urls, name=name, max_reconnect_attempts=-1, reconnect_time_wait=0.25,
        connect_timeout=5, allow_reconnect=True, error_cb=on_error, user=user,
        password=password, token=token)
    if inbox_prefix:
        options["inbox_prefix"] = check_inbox_prefix(inbox_prefix)
    if signer is not None:
        options["signature_cb"] = signer.sign_nonce
        if signer.jwt is not None:
            jwt = signer.jwt.encode("ascii")
            options["user_jwt_cb"] = lambda: jwt
    attempt = asyncio.ensure_future(nc.connect(**options))
    timeout = wait_seconds if wait_seconds > 0 else ONE_ATTEMPT_SECONDS
    await asyncio.wait({attempt, refused}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    if attempt.done() and attempt.exception() is None:
        return nc
    if attempt.done():
        last[:] = [attempt.exception()]  # the client gave up by itself (a malformed URL, …)
    attempt.cancel()
    await asyncio.gather(attempt, return_exceptions=True)
    try:
        await nc.close()
    except Exception:  # noqa: BLE001 - never connected: nothing to close
        pass
    raise _connect_failure(refused.result() if refused.done() else (last or [None])[0], urls)


#: One attempt's budget when the caller asked for no retries (``--connect-wait 0``).
ONE_ATTEMPT_SECONDS = 6.0


def _is_auth_failure(error: BaseException) -> bool:
    text = str(error).lower()
    return isinstance(error, nats_errors.AuthorizationError) or any(
        words in text for words in ("authorization violation", "authentication expired",
                                    "authentication revoked"))


def _connect_failure(error: BaseException | None, urls: list[str]) -> HookbusError:
    where = ",".join(urls)
    if error is not None and _is_auth_failure(error):
        return HookbusError(
            "HOOKBUS_NATS_AUTH",
            f"NATS at {where} refused the credentials ({error}): check --nkey/HOOKBUS_NKEY_FILE, "
            "--creds/NATS_CREDS, NATS_USER/NATS_PASSWORD or NATS_TOKEN",
            {"server": where})
    reason = "timed out" if error is None else f"{type(error).__name__}: {error}"
    return HookbusError(
        "HOOKBUS_NATS_UNREACHABLE",
        f"cannot reach NATS at {where} ({reason}): start nats-server (or check --nats/NATS_URL), "
        "or wait longer with --connect-wait",
        {"server": where, "reason": reason})


class _SignedClient(Client):
    """nats-py's client, told the public nkey it signs the server's nonce for.

    nats-py fills ``_public_nkey`` only from its own optional ``nkeys`` package; hookbus signs
    with PyNaCl (credentials.py) and sets the key here, the one private field it writes
    (nats-py is pinned in constraints.txt; test_auth.py proves it against a real server).
    """

    def __init__(self, signer: Signer | None) -> None:
        super().__init__()
        if signer is not None and signer.jwt is None:
            self._public_nkey = signer.public_key


async def run(policies: Iterable[Policy], *, servers: str = "nats://127.0.0.1:4222",
              namespace: str = "hookbus", concurrency: int = DEFAULT_CONCURRENCY,
              max_queued: int = DEFAULT_MAX_QUEUED, **connection: Any) -> None:
    """Serve until SIGTERM/SIGINT, then drain; a second signal cancels the handlers.

    ``connection``: ``signer``, ``inbox_prefix``, ``user``, ``password``, ``token`` and
    ``wait_seconds``, as ``connect`` takes them.
    """
    listed = list(policies)
    _check(listed, namespace)
    nc = await connect(servers, "hookbus-worker " + ",".join(p.name for p in listed),
                       **connection)
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
