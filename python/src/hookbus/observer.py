"""Observational hooks from the log, at least once: one durable pull consumer per (policy, hook).

The consumer ``<ns>_<policy>_<hook>`` is shared with every worker of the policy (TypeScript ones
too), filtered on ``<ns>.audit.*.*.<hook>.*``: observations (``observed``) and refusals filed as
``block``; the hook's error records share those subjects and are acked unhandled. A record is acked only after its handler
succeeded; a failed handler gets it again after a growing delay; a record that can never succeed
(undecodable, wrong hook, invalid event) is terminated. An existing consumer is used as it is.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from nats.js import JetStreamContext, api
from nats.js.errors import NotFoundError
from nats.aio.msg import Msg

from .codec import Codec, Limits
from .errors import HookbusError
from .policy import Call, Policy, invoke
from .requests import Slots
from .state import KvStateStore

log = logging.getLogger("hookbus.worker")

TERMINAL = {"HOOKBUS_BAD_MESSAGE", "HOOKBUS_BLOB_MISSING", "HOOKBUS_INVALID_EVENT",
            "HOOKBUS_INVALID_CONTEXT"}
ACK_WAIT_SECONDS = 30.0
RETRY_SECONDS = 1.0
MAX_RETRY_SECONDS = 60.0
STREAM_RETRY_SECONDS = 5.0


class Observer:
    def __init__(self, js: JetStreamContext, namespace: str, p: Policy, hook: str, codec: Codec,
                 state: KvStateStore, slots: Slots) -> None:
        self.js, self.namespace, self.policy, self.hook = js, namespace, p, hook
        # Records are larger and deeper than any one message they were made from.
        limits = codec.limits
        self.codec = Codec(codec.js, namespace, Limits(
            limits.max_encoded_bytes * 4, limits.max_inflated_bytes * 4, limits.max_depth + 8,
            limits.max_blob_chunks * 4))
        self.state, self.slots = state, slots
        self.durable = f"{namespace.replace('.', '_')}_{p.name}_{hook}"
        self.stream = f"{namespace.upper()}_LOG"
        self.stopped = asyncio.Event()
        self.loop: asyncio.Task[None] | None = None
        self.ack_wait = ACK_WAIT_SECONDS

    def start(self) -> None:
        self.loop = asyncio.ensure_future(self._run())

    async def stop(self) -> None:
        self.stopped.set()
        if self.loop is not None:
            await asyncio.gather(self.loop, return_exceptions=True)

    async def _run(self) -> None:
        subscription = None
        while not self.stopped.is_set():
            try:
                if subscription is None:
                    subscription = await self._subscribe()
                messages = await subscription.fetch(
                    batch=min(self.slots.concurrency, 256), timeout=1.0)
            except asyncio.TimeoutError:
                continue
            except NotFoundError:
                log.warning("log stream %s not found yet; observations start once it exists",
                            self.stream)
                await self._pause(STREAM_RETRY_SECONDS)
                continue
            except HookbusError as error:
                # Never consume someone else's idea of this durable; look again later.
                log.error("%s: %s", error.code, error.message)
                subscription = None
                await self._pause(STREAM_RETRY_SECONDS)
                continue
            except Exception as error:  # noqa: BLE001 - keep consuming after a reconnect
                if not self.stopped.is_set():
                    log.warning("observation fetch failed: %s", error)
                    await self._pause(1.0)
                continue
            for msg in messages:
                if self.stopped.is_set():
                    break  # left unacked: the server redelivers it
                self.slots.waiting += 1
                try:
                    await self.slots.semaphore.acquire()
                finally:
                    self.slots.waiting -= 1
                self.slots.spawn(self._handle_released(msg))
        if subscription is not None:
            try:
                await subscription.unsubscribe()
            except Exception:  # noqa: BLE001
                pass

    async def _pause(self, seconds: float) -> None:
        try:
            await asyncio.wait_for(self.stopped.wait(), seconds)
        except asyncio.TimeoutError:
            pass

    async def _subscribe(self) -> Any:
        try:
            await self.js.consumer_info(self.stream, self.durable)
        except NotFoundError:
            # Created by name with its filter in the subject (CONSUMER.CREATE.<log>.<durable>.
            # <filter>): the one form a worker's permissions allow (src/auth/permissions.ts);
            # it may not read the log stream's info. NotFoundError when there is no log yet.
            config = api.ConsumerConfig(
                name=self.durable,
                durable_name=self.durable,
                description=f"hookbus: {self.hook} observations for policy {self.policy.name}",
                filter_subject=f"{self.namespace}.audit.*.*.{self.hook}.*",
                ack_policy=api.AckPolicy.EXPLICIT,
                deliver_policy=api.DeliverPolicy.NEW,
                ack_wait=ACK_WAIT_SECONDS,
                max_deliver=-1,
                max_ack_pending=1000,
            )
            try:
                await self.js.add_consumer(self.stream, config)
            except NotFoundError:
                raise
            except Exception:  # noqa: BLE001 - another worker created it first
                await self.js.consumer_info(self.stream, self.durable)
        info = await self.js.consumer_info(self.stream, self.durable)
        self._check_shape(info.config)
        self.ack_wait = float(info.config.ack_wait or ACK_WAIT_SECONDS)
        return await self.js.pull_subscribe_bind(self.durable, self.stream)

    def _check_shape(self, config: api.ConsumerConfig) -> None:
        """Someone else's consumer under our name (another filter, push, no explicit ack) is refused."""
        found = []
        prefix = f"{self.namespace}.audit.*.*.{self.hook}."
        # ``….observed``: a consumer made before refusals were filed as ``block`` (still ours).
        legacy = config.filter_subject == prefix + "observed"
        expected = {
            "filter_subject": prefix + ("observed" if legacy else "*"),
            "ack_policy": api.AckPolicy.EXPLICIT,
            "deliver_policy": api.DeliverPolicy.NEW,
            "deliver_subject": None,
        }
        for name, want in expected.items():
            got = getattr(config, name, None) or None
            if got != want:
                found.append(f"{name}: {got!r} (expected {want!r})")
        if getattr(config, "filter_subjects", None):
            found.append("filter_subjects: set (expected none)")
        if found:
            raise HookbusError(
                "HOOKBUS_CONSUMER_MISMATCH",
                f"consumer {self.durable} on {self.stream} is not configured as its owner creates "
                f"it ({'; '.join(found)}): delete it (nats consumer rm {self.stream} "
                f"{self.durable}) and restart",
                {"stream": self.stream, "consumer": self.durable, "fields": found})

    async def _handle_released(self, msg: Msg) -> None:
        try:
            await self._handle(msg)
        finally:
            self.slots.semaphore.release()

    async def _handle(self, msg: Msg) -> None:
        keep_alive = asyncio.ensure_future(self._keep_alive(msg))
        try:
            if msg.subject.rsplit(".", 1)[-1] not in ("observed", "block"):
                await msg.ack()  # the hook's error records share its subjects: nothing to deliver
                return
            try:
                record = await self.codec.decode(
                    msg.data, (msg.headers or {}).get("Hookbus-Encoding"), 10.0)
                if not isinstance(record, dict) or record.get("kind") != "observation":
                    raise HookbusError("HOOKBUS_BAD_MESSAGE", "not an observation record")
            except HookbusError as error:
                log.error("unreadable observation record; dropped: %s", error.message)
                await msg.term()
                return
            if record.get("hook") != self.hook:
                log.error("observation record on the wrong subject; dropped")
                await msg.term()
                return
            call = Call(hook=self.hook, event=record.get("event"), context=record.get("context"),
                        call_id=str(record.get("eventId")), policy=self.policy.name,
                        _store=self.state)
            try:
                await invoke(self.policy, call)
            except HookbusError as error:
                if error.code in TERMINAL:
                    log.error("observation can never be handled; dropped: %s", error.message)
                    await msg.term()
                    return
                deliveries = msg.metadata.num_delivered or 1
                delay = min(MAX_RETRY_SECONDS, RETRY_SECONDS * 2 ** max(0, deliveries - 1))
                log.warning("observation handler failed (%s); retry in %ss", error.code, delay)
                await msg.nak(delay=delay)
                return
            await msg.ack_sync(timeout=5.0)
        except Exception as error:  # noqa: BLE001 - never leave a record without an answer
            log.error("observation handling failed: %s", error)
        finally:
            keep_alive.cancel()

    async def _keep_alive(self, msg: Msg) -> None:
        # A slow handler must not look like a dead one.
        while True:
            await asyncio.sleep(max(0.1, self.ack_wait / 2))
            await msg.in_progress()
