"""--nkey, --creds and --inbox-prefix: keys read as the TypeScript SDK reads them, and a worker that
connects as an nkey user of a real nats-server (spawned here) and is refused without its key."""

import asyncio
import os
import socket
import subprocess
import tempfile
import time

import pytest

from hookbus.credentials import check_inbox_prefix, creds_signer, nkey_signer
from hookbus.errors import HookbusError
from hookbus.worker import connect
from test_worker import _binary

# Made with @nats-io/nkeys (createUser, sign): the Python side must give the same key and signature.
SEED = "SUAATZRXNXCWQ7CLNFQQPZZRCUESC2XRJ2K4AJBO3RMFKJSWDF6BKXCLB4"
PUBLIC = "UAA3PYPVZJ25GYLUETFX5IV7ZNXXT63WRRYBSI3OFJYS35O7SVFVNMZ6"
NONCE = "abcNONCE123"
SIGNATURE = ("llHp991PX4Rnu6mklAYIu0kVzEhLObxCpk/dISq0vCtYAu+4IQ+kxSUAfPoU0iSKiHpmxbAgjGTI8RnY+8Y4"
             "Bw==")
JWT = "eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ.eyJzdWIiOiJVQUEifQ.c2lnbmF0dXJl"


def test_a_seed_gives_the_public_key_and_signature_of_the_typescript_nkeys(tmp_path):
    seed_file = tmp_path / "worker.nk"
    seed_file.write_text(f"# written by hookbus auth\n{SEED}\n")
    for signer in (nkey_signer(str(seed_file), None), nkey_signer(None, SEED)):
        assert signer.public_key == PUBLIC and signer.jwt is None
        assert signer.sign_nonce(NONCE).decode() == SIGNATURE


def test_a_creds_file_gives_its_jwt_and_seed(tmp_path):
    creds = tmp_path / "user.creds"
    creds.write_text(
        "-----BEGIN NATS USER JWT-----\n" + JWT + "\n------END NATS USER JWT------\n\n"
        "************************* IMPORTANT *************************\n\n"
        "-----BEGIN USER NKEY SEED-----\n" + SEED + "\n------END USER NKEY SEED------\n")
    signer = creds_signer(str(creds))
    assert signer.jwt == JWT and signer.public_key == PUBLIC
    assert signer.sign_nonce(NONCE).decode() == SIGNATURE


@pytest.mark.parametrize("text", [
    "nothing here",
    SEED[:-1] + ("A" if SEED[-1] != "A" else "B"),  # checksum does not match
    "SA" + SEED[2:],                                # an account seed, not a user's
])
def test_a_file_without_a_valid_user_seed_is_an_invalid_argument(tmp_path, text):
    bad = tmp_path / "bad.nk"
    bad.write_text(text)
    with pytest.raises(HookbusError) as raised:
        nkey_signer(str(bad), None)
    assert raised.value.code == "HOOKBUS_INVALID_ARGUMENT"


def test_missing_files_name_the_file():
    for read in (lambda: nkey_signer("/nonexistent/x.nk", None),
                 lambda: creds_signer("/nonexistent/x.creds")):
        with pytest.raises(HookbusError) as raised:
            read()
        assert raised.value.code == "HOOKBUS_INVALID_ARGUMENT"
        assert "/nonexistent/x." in raised.value.message


@pytest.mark.parametrize("prefix", ["_INBOX.>", "a b", "a..b", "", "x" * 201, "_INBOX.*"])
def test_an_inbox_prefix_is_literal_tokens(prefix):
    with pytest.raises(HookbusError) as raised:
        check_inbox_prefix(prefix)
    assert raised.value.code == "HOOKBUS_INVALID_ARGUMENT"
    assert check_inbox_prefix("_INBOX_hookbus.worker.p1") == "_INBOX_hookbus.worker.p1"


@pytest.fixture(scope="module")
def nkey_server():
    """A nats-server whose only user is the nkey above, allowed replies only under its prefix."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    folder = tempfile.mkdtemp(prefix="hookbus-py-auth-")
    conf = os.path.join(folder, "server.conf")
    with open(conf, "w") as file:
        file.write(f'authorization {{ users = [ {{ nkey: "{PUBLIC}", permissions: {{\n'
                   '  publish: { allow: ["ping.>"] },\n'
                   '  subscribe: { allow: ["ping.>", "_INBOX_py.>"] }, allow_responses: true } } ] }\n')
    proc = subprocess.Popen([_binary(), "-a", "127.0.0.1", "-p", str(port), "-c", conf],
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


def test_connects_as_the_nkey_user_and_gets_replies_on_its_own_prefix(nkey_server):
    async def run():
        nc = await connect(nkey_server, "t", signer=nkey_signer(None, SEED),
                           inbox_prefix="_INBOX_py", wait_seconds=5)
        try:
            async def pong(msg):
                await msg.respond(b"pong")

            await nc.subscribe("ping.x", cb=pong)
            reply = await nc.request("ping.x", b"", timeout=5)
            return reply.data, nc.new_inbox()
        finally:
            await nc.close()

    data, inbox = asyncio.run(run())
    assert data == b"pong" and inbox.startswith("_INBOX_py.")


@pytest.mark.parametrize("signer", [None, "other"])
def test_without_the_right_key_the_server_refuses_at_once(nkey_server, signer):
    other = None
    if signer == "other":
        # A valid user seed that the server does not know.
        from nacl.signing import SigningKey
        from hookbus.credentials import _PREFIX_SEED, _PREFIX_USER, _crc16
        import base64
        body = bytes([_PREFIX_SEED | (_PREFIX_USER >> 5), (_PREFIX_USER & 31) << 3])
        body += bytes(SigningKey.generate())
        seed = base64.b32encode(body + _crc16(body).to_bytes(2, "little")).decode().rstrip("=")
        other = nkey_signer(None, seed)

    async def run():
        return await connect(nkey_server, "t", signer=other, wait_seconds=20)

    started = time.monotonic()
    with pytest.raises(HookbusError) as raised:
        asyncio.run(run())
    assert raised.value.code == "HOOKBUS_NATS_AUTH"
    assert time.monotonic() - started < 10  # not retried for the whole wait


def test_an_unreachable_server_is_a_coded_error_after_the_wait():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    started = time.monotonic()
    with pytest.raises(HookbusError) as raised:
        asyncio.run(connect(f"nats://127.0.0.1:{port}", "t", wait_seconds=1.0))
    assert raised.value.code == "HOOKBUS_NATS_UNREACHABLE"
    assert 0.9 < time.monotonic() - started < 5
