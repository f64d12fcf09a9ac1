import asyncio

import pytest

from hookbus import BeforeToolCallVerdict, Call, HookbusError, PolicyError, invoke, policy
from hookbus.verdicts import BeforeLlmCallVerdict

CONTEXT = {"agentId": "a", "sessionKey": "s"}
EVENT = {"toolName": "shell", "params": {"cmd": "ls"}}


def call(event=EVENT, context=CONTEXT, hook="before_tool_call"):
    return Call(hook=hook, event=event, context=context, call_id="c1", policy="p")


def run(p, c):
    return asyncio.run(invoke(p, c))


def test_a_typed_verdict_is_sent_in_camel_case_without_unset_fields():
    @policy("p", "1.0.0", hooks=["before_tool_call"])
    def handler(c: Call):
        return BeforeToolCallVerdict(block=True, block_reason="no shell")

    assert run(handler, call()) == {"block": True, "blockReason": "no shell"}


def test_async_handlers_and_no_opinion():
    @policy("p", hooks=["before_tool_call"])
    async def handler(c: Call):
        await asyncio.sleep(0)
        return None

    assert run(handler, call()) is None


def test_the_handler_never_sees_an_invalid_event_or_context():
    seen = []

    @policy("p", hooks=["before_tool_call"])
    def handler(c: Call):
        seen.append(c)

    for bad, code in [({"params": {}}, "HOOKBUS_INVALID_EVENT")]:
        with pytest.raises(HookbusError) as raised:
            run(handler, call(event=bad))
        assert raised.value.code == code
    with pytest.raises(HookbusError) as raised:
        run(handler, call(context={"agentId": "a"}))
    assert raised.value.code == "HOOKBUS_INVALID_CONTEXT"
    assert seen == []


@pytest.mark.parametrize(
    "verdict",
    [{"block": "yes"}, {"params": {}, "extra": 1}, BeforeLlmCallVerdict(block=True), "allow"],
)
def test_a_verdict_the_hook_does_not_allow_is_invalid(verdict):
    @policy("p", hooks=["before_tool_call"])
    def handler(c: Call):
        return verdict

    with pytest.raises(HookbusError) as raised:
        run(handler, call())
    assert raised.value.code == "HOOKBUS_INVALID_VERDICT"


def test_a_failing_handler_is_a_policy_error_with_its_message():
    @policy("p", hooks=["before_tool_call"])
    def handler(c: Call):
        raise ValueError("boom")

    with pytest.raises(HookbusError) as raised:
        run(handler, call())
    assert raised.value.code == "HOOKBUS_POLICY_ERROR"
    assert "boom" in raised.value.message

    @policy("q", hooks=["before_tool_call"])
    def explicit(c: Call):
        raise PolicyError("said no", {"why": "test"})

    with pytest.raises(HookbusError) as raised:
        run(explicit, call())
    assert raised.value.to_wire()["details"] == {"why": "test"}


def test_policy_definitions_are_checked():
    with pytest.raises(HookbusError):
        policy("bad name", hooks=["before_tool_call"])
    with pytest.raises(HookbusError):
        policy("p", hooks=["before_everything"])
    with pytest.raises(HookbusError):
        policy("p", hooks=[])


def test_schemas_ship_with_the_package():
    from hookbus.schemas import validator

    assert validator("hooks/before_tool_call.verdict.schema.json").schema["title"]
