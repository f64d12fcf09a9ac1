"""Typed verdicts, one class per modifying hook, with the fields the hook allows and no others.

A handler returns one of these (or a plain dict, or None for "no opinion"); every verdict is
validated against ``schemas/hooks/<hook>.verdict.schema.json`` before it is sent, so a field the
hook does not allow is HOOKBUS_INVALID_VERDICT, never silently dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar, Union

from .errors import HookbusError


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


@dataclass(frozen=True)
class _Verdict:
    hook: ClassVar[str]

    def to_wire(self) -> dict[str, Any]:
        """The JSON form: camelCase names, unset (None) fields left out ("no change")."""
        return {
            _camel(f.name): getattr(self, f.name)
            for f in fields(self)
            if getattr(self, f.name) is not None
        }


@dataclass(frozen=True)
class BeforeAgentReplyVerdict(_Verdict):
    hook: ClassVar[str] = "before_agent_reply"
    reply: dict[str, Any] | None = None
    reason: str | None = None


@dataclass(frozen=True)
class BeforeLlmCallVerdict(_Verdict):
    hook: ClassVar[str] = "before_llm_call"
    messages: list[dict[str, Any]] | None = None
    system_prompt: str | None = None
    tools: list[dict[str, Any]] | None = None
    block: bool | None = None
    block_reason: str | None = None


@dataclass(frozen=True)
class AfterLlmCallVerdict(_Verdict):
    hook: ClassVar[str] = "after_llm_call"
    tool_calls: list[dict[str, Any]] | None = None
    block: bool | None = None
    block_reason: str | None = None


@dataclass(frozen=True)
class BeforeToolCallVerdict(_Verdict):
    hook: ClassVar[str] = "before_tool_call"
    params: dict[str, Any] | None = None
    require_approval: dict[str, Any] | None = None
    block: bool | None = None
    block_reason: str | None = None


@dataclass(frozen=True)
class BeforeToolResultVerdict(_Verdict):
    hook: ClassVar[str] = "before_tool_result"
    content: list[dict[str, Any]] | None = None
    block: bool | None = None
    block_reason: str | None = None


@dataclass(frozen=True)
class BeforeResponseEmitVerdict(_Verdict):
    hook: ClassVar[str] = "before_response_emit"
    content: str | None = None
    all_content: list[str] | None = None
    block: bool | None = None
    block_reason: str | None = None


Verdict = Union[
    BeforeAgentReplyVerdict,
    BeforeLlmCallVerdict,
    AfterLlmCallVerdict,
    BeforeToolCallVerdict,
    BeforeToolResultVerdict,
    BeforeResponseEmitVerdict,
]


def block(reason: str) -> dict[str, Any]:
    """A block verdict for any hook that can block (all but before_agent_reply)."""
    return {"block": True, "blockReason": reason}


def verdict_to_wire(hook: str, verdict: object) -> dict[str, Any] | None:
    """None (no opinion), a typed verdict of this hook, or a dict: the JSON to validate and send."""
    if verdict is None:
        return None
    if isinstance(verdict, _Verdict):
        if verdict.hook != hook:
            raise HookbusError(
                "HOOKBUS_INVALID_VERDICT",
                f"a {type(verdict).__name__} answered a {hook} call",
                {"hook": hook},
            )
        return verdict.to_wire()
    if isinstance(verdict, dict):
        return verdict
    raise HookbusError(
        "HOOKBUS_INVALID_VERDICT",
        f"a handler returned {type(verdict).__name__}; return a verdict, a dict or None",
        {"hook": hook},
    )
