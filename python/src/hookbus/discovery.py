"""Discovery (docs/protocol.md, "Discovery"): every worker answers ``<ns>.discover`` and
``<ns>.discover.worker`` (no queue group) with a description of itself, so ``hookbus status`` and
the coordinators' liveness checks see Python workers as they see TypeScript ones. The reply is
``schemas/discovery/reply.schema.json``; per modifying hook it carries the handler's recent
latency and error rate over the last 1,024 answers of the last 5 minutes.
"""

from __future__ import annotations

import logging
import math
import os
import secrets
import socket
import time
from collections import deque
from datetime import datetime, timezone
from importlib import metadata
from typing import Any, Callable, Sequence

from nats.aio.client import Client
from nats.aio.msg import Msg

from . import jsontext
from .policy import Policy

log = logging.getLogger("hookbus.worker")

WINDOW_SAMPLES = 1024
WINDOW_MAX_AGE_SECONDS = 5 * 60.0
#: A process serving more policies lists the first ones (the schema's bound).
MAX_DESCRIBED_POLICIES = 256


def _sdk_version() -> str:
    try:
        return metadata.version("hookbus")[:64]
    except metadata.PackageNotFoundError:  # pragma: no cover - a source tree without install
        return "unknown"


class RecentWindow:
    """The last ``capacity`` answers younger than ``max_age``: latency (ms) and whether it was ok."""

    def __init__(self, capacity: int = WINDOW_SAMPLES,
                 max_age: float = WINDOW_MAX_AGE_SECONDS) -> None:
        self.samples: deque[tuple[float, float, bool]] = deque(maxlen=capacity)
        self.max_age = max_age

    def add(self, latency_ms: float, ok: bool, now: float | None = None) -> None:
        self.samples.append((time.monotonic() if now is None else now, latency_ms, ok))

    def stats(self, now: float | None = None) -> dict[str, Any]:
        at = time.monotonic() if now is None else now
        recent = [(ms, ok) for when, ms, ok in self.samples if at - when <= self.max_age]
        if not recent:
            return {"count": 0, "errorRate": 0}
        latencies = sorted(ms for ms, _ in recent)
        failures = sum(1 for _, ok in recent if not ok)
        return {"count": len(recent), "p50Ms": _round(_quantile(latencies, 0.5)),
                "p99Ms": _round(_quantile(latencies, 0.99)),
                "errorRate": _round(failures / len(recent))}


def _quantile(ordered: list[float], q: float) -> float:
    """Nearest rank, as the TypeScript SDK computes it."""
    rank = min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))
    return ordered[rank]


def _round(n: float) -> float:
    return round(n * 1000) / 1000


class Discovery:
    """This process's description and the windows behind its stats; answers while started."""

    def __init__(self, namespace: str, policies: Sequence[Policy],
                 in_flight: Callable[[], int]) -> None:
        self.namespace = namespace
        self.policies = tuple(policies)[:MAX_DESCRIBED_POLICIES]
        self.in_flight = in_flight
        self.id = f"py-worker-{secrets.token_hex(4)}"
        self.identity = {
            "namespace": namespace, "host": socket.gethostname()[:256], "pid": os.getpid(),
            "startedAt": datetime.now(timezone.utc).isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
        }
        # One window per policy and modifying hook it handles: bounded by the policies served.
        self.windows = {(p.name, hook): RecentWindow() for p in policies
                        for hook in p.modifying_hooks}
        self.subscriptions: list[Any] = []

    def answered(self, policy: str, hook: str, latency_ms: float, ok: bool) -> None:
        window = self.windows.get((policy, hook))
        if window is not None:  # a request for a hook the policy does not handle is no new key
            window.add(latency_ms, ok)

    def describe(self) -> dict[str, Any]:
        return {
            "role": "worker", "id": self.id, "hookbus": _sdk_version(), **self.identity,
            "inFlight": self.in_flight(),
            "policies": [{
                "name": p.name,
                **({} if p.version is None else {"version": p.version}),
                "hooks": list(p.hooks),
                "stats": {hook: self.windows[(p.name, hook)].stats() for hook in p.modifying_hooks},
            } for p in self.policies],
        }

    async def start(self, nc: Client) -> None:
        async def answer(msg: Msg) -> None:
            if not msg.reply:
                return
            try:
                await nc.publish(msg.reply, jsontext.dumps(self.describe(), "HOOKBUS_INTERNAL",
                                                           "the description"))
            except Exception as error:  # noqa: BLE001 - a closed connection: nobody to tell
                log.debug("cannot answer discovery: %s", error)

        for subject in (f"{self.namespace}.discover", f"{self.namespace}.discover.worker"):
            self.subscriptions.append(await nc.subscribe(subject, cb=answer))

    async def stop(self) -> None:
        for subscription in self.subscriptions:
            try:
                await subscription.unsubscribe()
            except Exception:  # noqa: BLE001 - a closed connection has nothing to unsubscribe
                pass
        self.subscriptions.clear()
