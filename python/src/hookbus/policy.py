"""``@policy``: a Python function answering one or more hooks, as ``definePolicy`` does in TypeScript."""

from __future__ import annotations

import asyncio
import inspect
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Iterable, Union

from .errors import HookbusError
from .facts import ActionFacts
from .schemas import HOOKS, MODIFYING_HOOKS, check
from .state import KvStateStore, SessionState
from .tokens import POLICY_NAME
from .verdicts import Verdict, verdict_to_wire

HandlerResult = Union[Verdict, dict, None]
Handler = Callable[["Call"], Union[HandlerResult, Awaitable[HandlerResult]]]

# Codes a handler may raise on purpose that keep their meaning on the wire (as in TypeScript).
_PASS_THROUGH = {"HOOKBUS_POLICY_ERROR", "HOOKBUS_STATE_CONFLICT", "HOOKBUS_POLICY_TIMEOUT"}


@dataclass
class Call:
    """What a handler gets: the validated event and context, the call id, state and the deadline."""

    hook: str
    event: dict[str, Any]
    context: dict[str, Any]
    call_id: str
    policy: str
    deadline: float | None = None
    """``time.monotonic()`` at which the caller stops waiting (None: no deadline)."""
    facts: ActionFacts | None = None
    """What the call does, computed once by the coordinator (``hookbus.facts``, docs/facts.md).
    Sent only to a policy whose registry entry declares ``facts: true``: None otherwise, for
    observations and from a coordinator that sends none (treat None as unknown, not harmless)."""
    _store: KvStateStore | None = field(default=None, repr=False)
    _state: SessionState | None = field(default=None, repr=False)

    @property
    def remaining(self) -> float | None:
        """Seconds left before the deadline (None without one)."""
        return None if self.deadline is None else max(0.0, self.deadline - time.monotonic())

    @property
    def state(self) -> SessionState:
        """This policy's state of this call's session (JetStream KV, shared by all its workers)."""
        if self._store is None:
            raise HookbusError("HOOKBUS_INTERNAL", "no session state store in this worker")
        if self._state is None:
            self._state = SessionState(
                self._store, self.policy, str(self.context["sessionKey"]), self.deadline)
        return self._state


@dataclass(frozen=True)
class Policy:
    name: str
    version: str | None
    hooks: tuple[str, ...]
    handler: Handler

    @property
    def modifying_hooks(self) -> tuple[str, ...]:
        return tuple(h for h in self.hooks if h in MODIFYING_HOOKS)

    @property
    def observed_hooks(self) -> tuple[str, ...]:
        return tuple(h for h in self.hooks if h not in MODIFYING_HOOKS)


def policy(name: str, version: str | None = None, *, hooks: Iterable[str]) -> Callable[[Handler], Policy]:
    """Make a handler a policy: ``@policy("egress", "1.0.0", hooks=["before_tool_call"])``."""
    hook_list = tuple(hooks)
    if not POLICY_NAME.match(name):
        raise HookbusError("HOOKBUS_INVALID_POLICY",
                           f"policy names are 1-64 of [A-Za-z0-9_-], got {name!r}")
    unknown = [h for h in hook_list if h not in HOOKS]
    if not hook_list or unknown:
        raise HookbusError("HOOKBUS_INVALID_POLICY",
                           f"policy {name!r}: unknown or no hooks {unknown or hook_list!r}")

    def wrap(handler: Handler) -> Policy:
        return Policy(name=name, version=version, hooks=hook_list, handler=handler)

    return wrap


async def invoke(p: Policy, call: Call) -> dict[str, Any] | None:
    """Validate the input, run the handler, validate its verdict. Raises HookbusError only."""
    details = {"policy": p.name, "hook": call.hook}
    if call.hook not in p.hooks:
        raise HookbusError("HOOKBUS_POLICY_ERROR", f"policy {p.name!r} does not handle {call.hook}",
                           details)
    check(f"hooks/{call.hook}.event.schema.json", call.event, "HOOKBUS_INVALID_EVENT",
          "the event", details)
    check(f"hooks/{call.hook}.context.schema.json", call.context, "HOOKBUS_INVALID_CONTEXT",
          "the context", details)
    try:
        result = p.handler(call)
        if inspect.isawaitable(result):
            result = await result
    except asyncio.CancelledError:
        raise
    except HookbusError as error:
        if error.code in _PASS_THROUGH:
            raise
        raise HookbusError("HOOKBUS_POLICY_ERROR", f"{error.code}: {error.message}", details) from error
    except Exception as error:  # noqa: BLE001 - a handler failure is answered, never fatal
        raise HookbusError("HOOKBUS_POLICY_ERROR",
                           f"policy {p.name!r} failed: {type(error).__name__}: {error}",
                           details) from error
    if call.hook not in MODIFYING_HOOKS:
        return None
    wire = verdict_to_wire(call.hook, result)
    if wire is not None:
        check(f"hooks/{call.hook}.verdict.schema.json", wire, "HOOKBUS_INVALID_VERDICT",
              "the verdict", details)
    return wire
