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


def _key(prefix: int, raw: bytes) -> str:
    import base64

    from hookbus.credentials import _crc16
    body = bytes([prefix]) + raw
    return base64.b32encode(body + _crc16(body).to_bytes(2, "little")).decode().rstrip("=")


def _user_seed(raw: bytes) -> str:
    import base64

    from hookbus.credentials import _PREFIX_SEED, _PREFIX_USER, _crc16
    body = bytes([_PREFIX_SEED | (_PREFIX_USER >> 5), (_PREFIX_USER & 31) << 3]) + raw
    return base64.b32encode(body + _crc16(body).to_bytes(2, "little")).decode().rstrip("=")


def _jwt(signer, issuer: str, subject: str, nats_claims: dict) -> str:
    """A NATS JWT (ed25519-nkey), as nsc writes them, signed by ``signer`` (a PyNaCl key)."""
    import base64
    import json as _json

    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).decode().rstrip("=")

    claims = {"jti": b64(os.urandom(16)), "iat": int(time.time()), "iss": issuer, "sub": subject,
              "name": subject[:8], "nats": {**nats_claims, "version": 2}}
    head = b64(_json.dumps({"typ": "JWT", "alg": "ed25519-nkey"}).encode())
    body = b64(_json.dumps(claims).encode())
    signature = signer.sign(f"{head}.{body}".encode()).signature
    return f"{head}.{body}.{b64(signature)}"


@pytest.fixture(scope="module")
def operator_server(tmp_path_factory):
    """A nats-server in operator mode with one account and a creds file for one of its users."""
    from nacl.signing import SigningKey

    operator, account, user = SigningKey.generate(), SigningKey.generate(), SigningKey.generate()
    op_pub = _key(14 << 3, bytes(operator.verify_key))
    acct_pub = _key(0, bytes(account.verify_key))
    user_pub = _key(20 << 3, bytes(user.verify_key))
    unlimited = {"subs": -1, "data": -1, "payload": -1, "imports": -1, "exports": -1,
                 "wildcards": True, "conn": -1, "leaf": -1}
    op_jwt = _jwt(operator, op_pub, op_pub, {"type": "operator"})
    acct_jwt = _jwt(operator, op_pub, acct_pub, {"type": "account", "limits": unlimited})
    user_jwt = _jwt(account, acct_pub, user_pub,
                    {"type": "user", "pub": {}, "sub": {}, "subs": -1, "data": -1, "payload": -1})
    folder = tmp_path_factory.mktemp("operator")
    creds = folder / "user.creds"
    creds.write_text(f"-----BEGIN NATS USER JWT-----\n{user_jwt}\n------END NATS USER JWT------\n\n"
                     f"-----BEGIN USER NKEY SEED-----\n{_user_seed(bytes(user))}\n"
                     "------END USER NKEY SEED------\n")
    conf = folder / "server.conf"
    conf.write_text(f"operator: {op_jwt}\nresolver: MEMORY\n"
                    f"resolver_preload: {{ {acct_pub}: {acct_jwt} }}\n")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([_binary(), "-a", "127.0.0.1", "-p", str(port), "-c", str(conf)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    yield f"nats://127.0.0.1:{port}", str(creds)
    proc.terminate()
    proc.wait(10)


def test_connects_with_a_creds_file_to_an_operator_mode_server(operator_server):
    url, creds = operator_server

    async def run():
        nc = await connect(url, "t", signer=creds_signer(creds), wait_seconds=5)
        try:
            async def pong(msg):
                await msg.respond(b"pong")

            await nc.subscribe("ping", cb=pong)
            return (await nc.request("ping", b"", timeout=5)).data
        finally:
            await nc.close()

    assert asyncio.run(run()) == b"pong"


def test_the_operator_mode_server_refuses_a_connection_without_the_creds(operator_server):
    url, _ = operator_server
    with pytest.raises(HookbusError) as raised:
        asyncio.run(connect(url, "t", wait_seconds=5))
    assert raised.value.code == "HOOKBUS_NATS_AUTH"
