"""The worker on a real nats-server (spawned here on a free port; NATS_SERVER_BIN or PATH)."""

import asyncio
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time

import nats
import pytest

from hookbus import BeforeToolCallVerdict, Call, Worker, policy


def _binary():
    found = os.environ.get("NATS_SERVER_BIN") or shutil.which("nats-server")
    for candidate in [found, "/usr/sbin/nats-server", "/usr/bin/nats-server"]:
        if candidate and os.path.exists(candidate):
            return candidate
    raise RuntimeError("nats-server not found: install it (apt-get install nats-server)")


@pytest.fixture(scope="module")
def nats_url():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    store = tempfile.mkdtemp(prefix="hookbus-py-nats-")
    proc = subprocess.Popen([_binary(), "-a", "127.0.0.1", "-p", str(port), "-js", "-sd", store],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    yield f"nats://127.0.0.1:{port}"
    proc.terminate()
    proc.wait(10)
    shutil.rmtree(store, ignore_errors=True)


@policy("slowpoke", "2.0.0", hooks=["before_tool_call"])
async def slowpoke(call: Call):
    await asyncio.sleep(call.event["params"].get("ms", 0) / 1000)
    count = await call.state.update("n", lambda n: (n or 0) + 1)
    return BeforeToolCallVerdict(params={"n": count})


def _request(tool_ms: int, session: str = "s1", timeout_ms: object = None):
    """A policy request; with ``timeout_ms``, its deadline leads the body (protocol 2)."""
    deadline = {} if timeout_ms is None else {"timeoutMs": timeout_ms}
    return json.dumps({
        **deadline,
        "callId": f"c-{time.monotonic_ns()}", "hook": "before_tool_call",
        "context": {"agentId": "a", "sessionKey": session},
        "event": {"toolName": "t", "params": {"ms": tool_ms}},
    }).encode()


#: A deadline as a coordinator of protocol 2 sends it (the body, no headers) and as an older one
#: did (the header): (request body, headers) for a request of ``tool_ms`` due in ``timeout_ms``.
DEADLINE_WAYS = {
    "body": lambda tool_ms, session, timeout_ms: (_request(tool_ms, session, timeout_ms), None),
    "header": lambda tool_ms, session, timeout_ms: (
        _request(tool_ms, session), {"Hookbus-Timeout-Ms": str(timeout_ms)}),
}


async def _with_worker(url, body):
    nc = await nats.connect(url)
    worker = Worker([slowpoke], nc=nc, namespace="pytest", concurrency=2, max_queued=4)
    await worker.start()
    try:
        return await body(nc)
    finally:
        await worker.stop()
        await nc.close()


async def _collect(nc, decode=False):
    """An inbox, the list of what arrives on it (bodies decoded when asked) and its subscription."""
    inbox = nc.new_inbox()
    got = []

    async def keep(msg):
        got.append(json.loads(msg.data) if decode else msg)

    return inbox, got, await nc.subscribe(inbox, cb=keep)


def test_answers_with_a_verdict_and_kv_state(nats_url):
    async def body(nc):
        replies = []
        for _ in range(2):
            msg = await nc.request("pytest.policy.slowpoke.before_tool_call", _request(0),
                                   timeout=5, headers={"Hookbus-Timeout-Ms": "5000"})
            replies.append(json.loads(msg.data))
        return replies

    replies = asyncio.run(_with_worker(nats_url, body))
    assert replies == [
        {"policy": "slowpoke", "version": "2.0.0", "verdict": {"params": {"n": 1}}},
        {"policy": "slowpoke", "version": "2.0.0", "verdict": {"params": {"n": 2}}},
    ]


@pytest.mark.parametrize("way", sorted(DEADLINE_WAYS))
def test_no_answer_after_the_deadline(nats_url, way):
    data, headers = DEADLINE_WAYS[way](500, f"s2-{way}", 100)

    async def body(nc):
        inbox, got, sub = await _collect(nc)
        await nc.publish("pytest.policy.slowpoke.before_tool_call", data, reply=inbox,
                         headers=headers)
        await asyncio.sleep(1.0)
        await sub.unsubscribe()
        return got

    assert asyncio.run(_with_worker(nats_url, body)) == []


@pytest.mark.parametrize("way", sorted(DEADLINE_WAYS))
def test_a_request_expired_while_queued_never_runs(nats_url, way):
    """Two slow requests hold both handlers; one due in 100 ms waits behind them and is dropped
    unrun: the session's count after it is 1, not 2."""
    session = f"s-queued-{way}"
    data, headers = DEADLINE_WAYS[way](0, session, 100)

    async def body(nc):
        subject = "pytest.policy.slowpoke.before_tool_call"
        slow = [asyncio.ensure_future(nc.request(subject, _request(400, f"s-slow-{way}"),
                                                 timeout=5)) for _ in range(2)]
        await asyncio.sleep(0.1)  # both slow ones are in their handlers
        inbox, got, sub = await _collect(nc)
        await nc.publish(subject, data, reply=inbox, headers=headers)
        await asyncio.gather(*slow)
        after = await nc.request(subject, _request(0, session), timeout=5)
        await sub.unsubscribe()
        return got, json.loads(after.data)

    got, after = asyncio.run(_with_worker(nats_url, body))
    assert got == []
    assert after["verdict"] == {"params": {"n": 1}}


def test_the_body_deadline_wins_over_the_header(nats_url):
    """A coordinator sends one of the two; a request with both is read by its body: a bad body
    value names no deadline (the header is not read for it), a good one replaces the header's."""
    subject = "pytest.policy.slowpoke.before_tool_call"

    async def body(nc):
        inbox, got, sub = await _collect(nc, decode=True)
        # Due in 100 ms by the body, in 60 s by the header: dropped.
        await nc.publish(subject, _request(500, "s-both-1", 100), reply=inbox,
                         headers={"Hookbus-Timeout-Ms": "60000"})
        # A string in the body names no deadline, though the header says 100 ms: answered.
        late = await nc.request(subject, _request(300, "s-both-2", "soon"), timeout=5,
                                headers={"Hookbus-Timeout-Ms": "100"})
        await asyncio.sleep(0.5)
        await sub.unsubscribe()
        return got, json.loads(late.data)

    got, late = asyncio.run(_with_worker(nats_url, body))
    assert got == []
    assert late["verdict"] == {"params": {"n": 1}}


@pytest.mark.parametrize("value", [-1, 0, 1e12, 1e30, 1.5e3, "soon", "300", None, True])
def test_a_hostile_body_deadline_is_read_as_the_header_would_be(nats_url, value):
    """No deadline, or a far one (1.5 s is enough for a handler that takes none): answered."""
    async def body(nc):
        msg = await nc.request("pytest.policy.slowpoke.before_tool_call",
                               _request(0, f"s-hostile-{value!r}", value), timeout=5)
        return json.loads(msg.data)

    assert asyncio.run(_with_worker(nats_url, body))["verdict"] == {"params": {"n": 1}}


def test_an_ask_asked_again_while_held_is_dropped(nats_url):
    """The coordinator asks again at half the timeout with the same reply subject: the worker
    holding the first ask drops the second, so the handler runs once (the state counts one)."""
    async def body(nc):
        inbox, got, sub = await _collect(nc, decode=True)
        request = _request(300, "s-again")
        for _ in range(2):
            await nc.publish("pytest.policy.slowpoke.before_tool_call", request, reply=inbox,
                             headers={"Hookbus-Timeout-Ms": "5000"})
        deadline = time.monotonic() + 5
        while not got and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        after = await nc.request("pytest.policy.slowpoke.before_tool_call", _request(0, "s-again"),
                                 timeout=5, headers={"Hookbus-Timeout-Ms": "5000"})
        await sub.unsubscribe()
        return got, json.loads(after.data)

    got, after = asyncio.run(_with_worker(nats_url, body))
    assert got == [{"policy": "slowpoke", "version": "2.0.0", "verdict": {"params": {"n": 1}}}]
    assert after["verdict"] == {"params": {"n": 2}}


def test_errors_carry_their_code_in_the_header(nats_url):
    async def body(nc):
        return await nc.request("pytest.policy.slowpoke.before_tool_call", b"{not json",
                                timeout=5)

    msg = asyncio.run(_with_worker(nats_url, body))
    assert msg.headers["Hookbus-Error-Code"] == "HOOKBUS_BAD_MESSAGE"
    assert json.loads(msg.data)["error"]["code"] == "HOOKBUS_BAD_MESSAGE"


@policy("echo", hooks=["before_tool_call"])
def echo(call: Call):
    if call.event["toolName"] == "nan":
        return BeforeToolCallVerdict(params={"score": float("nan")})
    return BeforeToolCallVerdict(params=call.event["params"])


def _ask_echo(url, data: bytes):
    async def run():
        nc = await nats.connect(url)
        worker = Worker([echo], nc=nc, namespace="pytest-echo")
        await worker.start()
        try:
            return await nc.request("pytest-echo.policy.echo.before_tool_call", data, timeout=5)
        finally:
            await worker.stop()
            await nc.close()

    msg = asyncio.run(run())
    # Strict: what JSON.parse in a TypeScript coordinator accepts, nothing more.
    body = json.loads(msg.data.decode("utf-8"), parse_constant=pytest.fail)
    code = (msg.headers or {}).get("Hookbus-Error-Code")
    assert code == (body.get("error") or {}).get("code")
    return body


def _echo_request(params_json: str, tool: str = "t") -> bytes:
    return ('{"callId":"c1","hook":"before_tool_call","context":{"agentId":"a","sessionKey":"s"},'
            f'"event":{{"toolName":"{tool}","params":{params_json}}}}}').encode()


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999", "-1e999"])
def test_a_non_finite_number_is_refused_never_echoed(nats_url, number):
    body = _ask_echo(nats_url, _echo_request(f'{{"n":{number}}}'))
    assert body["error"]["code"] == "HOOKBUS_BAD_MESSAGE"
    assert "verdict" not in body


def test_a_lone_surrogate_is_echoed_as_an_escape(nats_url):
    body = _ask_echo(nats_url, _echo_request('{"s":"a\\ud800b"}'))
    assert body["verdict"] == {"params": {"s": "a\ud800b"}}


def test_a_verdict_holding_nan_is_an_invalid_verdict(nats_url):
    body = _ask_echo(nats_url, _echo_request("{}", tool="nan"))
    assert body["error"]["code"] == "HOOKBUS_INVALID_VERDICT"
    assert "no JSON form" in body["error"]["message"]


def test_answers_discovery_with_a_valid_description_and_recent_stats(nats_url):
    from hookbus.schemas import first_error

    async def body(nc):
        await nc.request("pytest.policy.slowpoke.before_tool_call", _request(0, "s-disc"),
                         timeout=5)
        await nc.request("pytest.policy.slowpoke.before_tool_call", b"{not json", timeout=5)
        found = []
        for subject in ("pytest.discover", "pytest.discover.worker", "pytest.discover.coordinator"):
            inbox = nc.new_inbox()
            replies = []

            async def keep(msg):
                replies.append(json.loads(msg.data))

            sub = await nc.subscribe(inbox, cb=keep)
            await nc.publish(subject, b"{}", reply=inbox)
            await asyncio.sleep(0.5)
            await sub.unsubscribe()
            found.append(replies)
        return found

    everyone, workers, coordinators = asyncio.run(_with_worker(nats_url, body))
    assert coordinators == []
    assert len(everyone) == 1 and workers == everyone
    described = workers[0]
    assert first_error("discovery/reply.schema.json", described) is None
    assert described["role"] == "worker" and described["namespace"] == "pytest"
    assert described["pid"] == os.getpid()
    (served,) = described["policies"]
    assert (served["name"], served["version"], served["hooks"]) == (
        "slowpoke", "2.0.0", ["before_tool_call"])
    stats = served["stats"]["before_tool_call"]
    assert stats["count"] == 2 and stats["errorRate"] == 0.5
    assert 0 <= stats["p50Ms"] <= stats["p99Ms"]


def test_the_recent_window_keeps_the_last_answers_of_the_last_minutes():
    from hookbus.discovery import RecentWindow

    window = RecentWindow(capacity=4, max_age=60)
    assert window.stats(now=0) == {"count": 0, "errorRate": 0}
    for i, ok in enumerate([True, False, True, True, True, False]):
        window.add(float(i + 1), ok, now=float(i))
    # Capacity 4: answers 3..6 (latencies 3, 4, 5, 6; one failed).
    assert window.stats(now=10) == {"count": 4, "p50Ms": 4.0, "p99Ms": 6.0, "errorRate": 0.25}
    assert window.stats(now=64.5) == {"count": 1, "p50Ms": 6.0, "p99Ms": 6.0, "errorRate": 1.0}


def test_a_stopped_worker_no_longer_answers_discovery(nats_url):
    async def run():
        nc = await nats.connect(nats_url)
        worker = Worker([echo], nc=nc, namespace="pytest-gone")
        await worker.start()
        asked = await nc.request("pytest-gone.discover.worker", b"{}", timeout=5)
        await worker.stop()
        try:
            await nc.request("pytest-gone.discover.worker", b"{}", timeout=1)
            answered_after = True
        except Exception:  # noqa: BLE001 - no responders or a timeout: nobody answered
            answered_after = False
        await nc.close()
        return json.loads(asked.data), answered_after

    described, answered_after = asyncio.run(run())
    assert described["policies"][0]["name"] == "echo" and "version" not in described["policies"][0]
    assert answered_after is False
