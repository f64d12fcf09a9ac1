"""hookbus policy workers in Python: ``@policy``, typed verdicts, ``run`` / ``hookbus-worker``."""

from .errors import HookbusError, PolicyError
from .facts import ActionFacts, ShellFacts, ToolFacts
from .policy import Call, Policy, invoke, policy
from .state import SessionState
from .verdicts import (
    AfterLlmCallVerdict,
    BeforeAgentReplyVerdict,
    BeforeLlmCallVerdict,
    BeforeResponseEmitVerdict,
    BeforeToolCallVerdict,
    BeforeToolResultVerdict,
    Verdict,
    block,
)
from .worker import Worker, connect, run

__all__ = [
    "ActionFacts",
    "ShellFacts",
    "ToolFacts",
    "AfterLlmCallVerdict",
    "BeforeAgentReplyVerdict",
    "BeforeLlmCallVerdict",
    "BeforeResponseEmitVerdict",
    "BeforeToolCallVerdict",
    "BeforeToolResultVerdict",
    "Call",
    "HookbusError",
    "Policy",
    "PolicyError",
    "SessionState",
    "Verdict",
    "Worker",
    "block",
    "connect",
    "invoke",
    "policy",
    "run",
]
