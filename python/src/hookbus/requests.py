"""Serving one policy's modifying hooks: ``<ns>.policy.<policy>.*`` in queue group ``<ns>-policy-<policy>``.

Each request is stamped on arrival; it is dropped unanswered once its deadline has passed (while
queued, or while its handler runs: the handler is cancelled), because the
coordinator has stopped waiting and records a timeout anyway. Every other request gets exactly one
reply: a verdict (or none), or an error with its code in the body and the ``Hookbus-Error-Code``
header. The deadline is the body's ``timeoutMs`` (protocol 2) when the body has one, else the
``Hookbus-Timeout-Ms`` header (gzip and blob bodies, coordinators before protocol 2).
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from typing import Any, Callable

from nats.aio.client import Client
from nats.aio.msg import Msg

from .codec import Codec
from .errors import HookbusError
from .facts import facts_of
from .policy import Call, Policy, invoke
from .schemas import HOOKS, MODIFYING_HOOKS
from .state import KvStateStore

log = logging.getLogger("hookbus.worker")


#: Told of every answer: policy, hook, latency in ms, and whether it was not an error (discovery).
Answered = Callable[[str, str, float, bool], None]


class Expired(Exception):
    """The caller's deadline passed: nothing is sent."""


class Slots:
    """Bounded concurrency with a bounded wait list, shared by every policy of one worker."""

    def __init__(self, concurrency: int, max_queued: int) -> None:
        if concurrency < 1 or max_queued < 1:
            raise ValueError("concurrency and max_queued must be positive")
        self.semaphore = asyncio.Semaphore(concurrency)
        self.concurrency = concurrency
        self.max_queued = max_queued
        self.waiting = 0
        self.tasks: set[asyncio.Task[None]] = set()

    def full(self) -> bool:
        return self.waiting >= self.max_queued

    def spawn(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def idle(self) -> None:
        while self.tasks:
            await asyncio.gather(*list(self.tasks), return_exceptions=True)


class RequestServer:
    def __init__(self, nc: Client, namespace: str, p: Policy, codec: Codec, state: KvStateStore,
                 slots: Slots, answered: Answered | None = None) -> None:
        self.nc, self.namespace, self.policy = nc, namespace, p
        self.codec, self.state, self.slots = codec, state, slots
        self.answered = answered
        self.prefix = f"{namespace}.policy.{p.name}."
        self.subscription: Any = None
        # Reply subjects of the requests held (queued or running): the coordinator asks again,
        # with the same reply subject, at half the timeout; an ask again that lands here while
        # the first is held is dropped, so a slow handler never runs twice for one ask.
        self.holding: set[str] = set()

    async def start(self) -> None:
        self.subscription = await self.nc.subscribe(
            f"{self.prefix}*", queue=f"{self.namespace}-policy-{self.policy.name}", cb=self._on_msg,
            pending_msgs_limit=self.slots.max_queued * 4,
        )

    async def drain(self) -> None:
        if self.subscription is not None:
            try:
                await self.subscription.unsubscribe()
            except Exception:  # noqa: BLE001 - a closed connection has nothing to drain
                pass

    async def _on_msg(self, msg: Msg) -> None:
        arrived = time.monotonic()  # the caller's deadline runs from now, not from a free slot
        if msg.reply and msg.reply in self.holding:
            return  # asked again while this worker holds the first ask: that one answers
        if self.slots.full():
            self.slots.spawn(self._respond(msg, self._error_reply(HookbusError(
                "HOOKBUS_WORKER_OVERLOADED",
                f'worker of "{self.policy.name}" refused the request: its queue is full',
                {"policy": self.policy.name}))))
            return
        if msg.reply:
            self.holding.add(msg.reply)
        self.slots.spawn(self._serve_held(msg, arrived))

    async def _serve_held(self, msg: Msg, arrived: float) -> None:
        try:
            await self._serve(msg, arrived)
        finally:
            if msg.reply:
                self.holding.discard(msg.reply)

    async def _serve(self, msg: Msg, arrived: float) -> None:
        deadline = _deadline(msg, arrived)
        self.slots.waiting += 1
        try:
            await self.slots.semaphore.acquire()
        finally:
            self.slots.waiting -= 1
        try:
            if _expired(deadline, msg):
                return
            try:
                reply, deadline = await self._answer(msg, arrived, deadline)
            except Expired:
                log.debug("deadline passed while handling %s; no answer", msg.subject)
                return
            if deadline is not None and time.monotonic() >= deadline:
                return  # the caller gave up: an answer now would only be a late verdict
            ok = await self._respond(msg, reply)
            if self.answered is not None:
                hook = msg.subject[len(self.prefix):]
                self.answered(self.policy.name, hook, (time.monotonic() - arrived) * 1000, ok)
        finally:
            self.slots.semaphore.release()

    async def _answer(self, msg: Msg, arrived: float,
                      deadline: float | None) -> tuple[dict[str, Any], float | None]:
        """The reply, and the deadline it is due by (the body's once read, else the header's)."""
        try:
            call = await self._read(msg, arrived, deadline)
            deadline = call.deadline
            if _expired(deadline, msg):
                raise Expired()  # the body's deadline passed while the request was queued
            work = invoke(self.policy, call)
            if deadline is None:
                verdict = await work
            else:
                try:
                    verdict = await asyncio.wait_for(work, max(0.0, deadline - time.monotonic()))
                except asyncio.TimeoutError:
                    raise Expired() from None
        except HookbusError as error:
            if error.code == "HOOKBUS_CALL_TIMEOUT":
                raise Expired() from None
            log.warning("cannot serve %s: %s %s", msg.subject, error.code, error.message)
            return self._error_reply(error), deadline
        reply = self._base_reply()
        if verdict is not None:
            reply["verdict"] = verdict
        return reply, deadline

    async def _read(self, msg: Msg, arrived: float, deadline: float | None) -> Call:
        headers = msg.headers or {}
        timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
        body = await self.codec.decode(msg.data, headers.get("Hookbus-Encoding"), timeout)
        name = self.policy.name
        if (
            not isinstance(body, dict)
            or not isinstance(body.get("callId"), str) or body["callId"] == ""
            or not isinstance(body.get("hook"), str)
            or not isinstance(body.get("context"), dict)
            or not isinstance(body.get("event"), dict)
            or not isinstance(body.get("policy", name), str)
        ):
            raise HookbusError("HOOKBUS_BAD_MESSAGE", "not a PolicyRequest", {"policy": name})
        hook = body["hook"]
        subject_hook = msg.subject[len(self.prefix):] if msg.subject.startswith(self.prefix) else ""
        if body.get("policy", name) != name or hook != subject_hook:
            raise HookbusError(
                "HOOKBUS_BAD_MESSAGE",
                f'request for policy "{body.get("policy", name)}" hook "{hook}" arrived on {msg.subject}',
                {"policy": name, "hook": hook})
        if hook not in HOOKS:
            raise HookbusError("HOOKBUS_UNKNOWN_HOOK", f"unknown hook {hook!r}",
                               {"hook": hook, "policy": name})
        if hook not in MODIFYING_HOOKS:
            raise HookbusError(
                "HOOKBUS_NOT_MODIFYING_HOOK",
                f"{hook} is observational: it is delivered from the log, not asked",
                {"hook": hook, "policy": name})
        if "timeoutMs" in body:  # the body's deadline wins over the header's (protocol 2)
            deadline = _deadline_after(arrived, body["timeoutMs"])
        return Call(hook=hook, event=body["event"], context=body["context"],
                    call_id=body["callId"], policy=name, deadline=deadline,
                    facts=facts_of(body.get("facts")), _store=self.state)

    def _base_reply(self) -> dict[str, Any]:
        reply: dict[str, Any] = {"policy": self.policy.name}
        if self.policy.version is not None:
            reply["version"] = self.policy.version
        return reply

    def _error_reply(self, error: HookbusError) -> dict[str, Any]:
        return {**self._base_reply(), "error": error.to_wire()}

    async def _respond(self, msg: Msg, reply: dict[str, Any]) -> bool:
        """Send the reply; whether it was a verdict (or none) rather than an error."""
        if not msg.reply:
            log.warning("request on %s had no reply subject; answer dropped", msg.subject)
            return "error" not in reply
        headers: dict[str, str] = {}
        if "error" in reply:
            headers["Hookbus-Error-Code"] = reply["error"]["code"]
        try:
            # Only a handler's verdict can hold a value JSON has no form for (NaN, inf, a set).
            data, encoding = await self.codec.encode(
                reply, "HOOKBUS_INVALID_VERDICT", f'the verdict of "{self.policy.name}"')
        except Exception as error:  # noqa: BLE001 - a reply that cannot be sent: say why instead
            failure = error if isinstance(error, HookbusError) else HookbusError(
                "HOOKBUS_INTERNAL", f"cannot encode reply: {type(error).__name__}: {error}")
            failure.details = {**failure.details, "policy": self.policy.name}
            reply = self._error_reply(failure)
            headers["Hookbus-Error-Code"] = failure.code
            data, encoding = await self.codec.encode(reply)
        if encoding is not None:
            headers["Hookbus-Encoding"] = encoding
        try:
            await self.nc.publish(msg.reply, data, headers=headers or None)
        except Exception as error:  # noqa: BLE001 - only a closed connection refuses a publish
            log.error("cannot send reply: %s", error)
        return "error" not in reply


def _deadline(msg: Msg, arrived: float) -> float | None:
    """The header's deadline: gzip and blob bodies, and coordinators before protocol 2."""
    raw = (msg.headers or {}).get("Hookbus-Timeout-Ms")
    try:
        ms = float(raw) if raw is not None else 0.0
    except ValueError:
        return None
    return _deadline_after(arrived, ms)


def _deadline_after(arrived: float, ms: Any) -> float | None:
    """As the TypeScript SDK reads a deadline: a finite positive number of ms, or none at all
    (``-1``, ``0``, ``NaN``; in a body also a string, ``null`` or ``true``)."""
    if isinstance(ms, bool) or not isinstance(ms, (int, float)):
        return None
    return arrived + ms / 1000.0 if math.isfinite(ms) and ms > 0 else None


def _expired(deadline: float | None, msg: Msg) -> bool:
    """The caller stopped waiting while the request was queued: it is dropped unanswered."""
    if deadline is None or time.monotonic() < deadline:
        return False
    log.debug("request expired in the queue; dropped (%s)", msg.subject)
    return True
