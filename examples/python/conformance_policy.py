"""The conformance policy in Python: the behaviour `hookbus conformance worker` drives (docs/conformance.md).

Run the kit against it:
    hookbus conformance worker --policy conformance -- .tools/python/bin/hookbus-worker examples/python/conformance_policy.py:conformance
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from typing import Any

from hookbus import BeforeToolCallVerdict, Call, PolicyError, policy

MODIFYING = ["before_agent_reply", "before_llm_call", "after_llm_call", "before_tool_call",
             "before_tool_result", "before_response_emit"]


@policy("conformance", "1.0.0", hooks=[*MODIFYING, "after_tool_call"])
async def conformance(call: Call) -> Any:
    if call.hook == "after_tool_call":
        return await observe(call)
    if call.hook != "before_tool_call":
        return None
    tool, params = call.event["toolName"], call.event["params"]
    if tool == "conformance_sleep":
        await asyncio.sleep(params["ms"] / 1000)  # cancelled by the SDK at the deadline
        return None
    if tool == "conformance_verdict":
        return params["verdict"]
    if tool == "conformance_fail":
        raise PolicyError(str(params.get("message", "asked to fail")))
    if tool == "conformance_digest":
        text = params["text"].encode("utf-8")
        return BeforeToolCallVerdict(
            params={"sha256": hashlib.sha256(text).hexdigest(), "bytes": len(text)})
    if tool == "conformance_facts":
        # The call's facts as the SDK handed them over (docs/facts.md), echoed for the kit.
        return BeforeToolCallVerdict(params={"facts": call.facts})
    if tool == "conformance_whoami":
        return BeforeToolCallVerdict(params={"pid": os.getpid()})
    if tool == "conformance_count":
        count = await call.state.update("count", lambda n: (n or 0) + 1)
        return BeforeToolCallVerdict(params={"count": count})
    return None


async def observe(call: Call) -> None:
    if call.event["toolName"] == "conformance_sleep":
        await asyncio.sleep(call.event["params"]["ms"] / 1000)
    await call.state.update("observed", lambda seen: [*(seen or []), call.call_id])
