"""Who a worker is to NATS: an nkey seed (``hookbus auth`` writes one per user), a creds file
(a user JWT and its seed, for operator-mode deployments), and the inbox prefix the user's
permissions allow replies on. The same flags and environment as the TypeScript CLI
(src/bus/connect.ts): ``--nkey``/``HOOKBUS_NKEY_FILE``, ``HOOKBUS_NKEY_SEED``,
``--creds``/``NATS_CREDS``, ``--inbox-prefix``/``HOOKBUS_INBOX_PREFIX``.

The server's nonce is signed with Ed25519 (libsodium, through PyNaCl); the nkey text encoding
(base32, a role prefix, a CRC-16) is decoded here, so nats-py's optional ``nkeys`` package is not
needed.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field
from pathlib import Path

from .errors import HookbusError

#: The first user seed in a text (a file may carry comments around it), as the TypeScript CLI reads it.
_USER_SEED = re.compile(r"\bSU[A-Z2-7]{56}\b")
_USER_JWT = re.compile(
    r"-{3,}BEGIN NATS USER JWT-{3,}\s*\n\s*([A-Za-z0-9_=-]+\.[A-Za-z0-9_=-]+\.[A-Za-z0-9_=-]+)\s*\n")
_INBOX_TOKEN = re.compile(r"^[^\s.*>]+$")

_PREFIX_SEED = 18 << 3
_PREFIX_USER = 20 << 3


def _crc16(data: bytes) -> int:
    """CRC-16/XMODEM, the checksum of every nkey."""
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
    return crc


def _invalid(source: str, why: str = "holds no valid nkey user seed (SU…)") -> HookbusError:
    return HookbusError("HOOKBUS_INVALID_ARGUMENT", f"{source} {why}", {"argument": "nkey"})


def _seed_bytes(text: str, source: str) -> bytes:
    """The 32-byte Ed25519 seed of the first user seed in ``text``; checksum and role checked."""
    match = _USER_SEED.search(text)
    if match is None:
        raise _invalid(source)
    raw = base64.b32decode(match.group(0) + "=" * 6)  # 58 characters: 36 bytes
    body, checksum = raw[:-2], int.from_bytes(raw[-2:], "little")
    role = ((body[0] & 0x07) << 5) | ((body[1] & 0xF8) >> 3)
    if _crc16(body) != checksum or body[0] & 0xF8 != _PREFIX_SEED or role != _PREFIX_USER:
        raise _invalid(source)
    return body[2:]


def public_user_key(public: bytes) -> str:
    """The ``U…`` text form of an Ed25519 public key."""
    body = bytes([_PREFIX_USER]) + public
    return base64.b32encode(body + _crc16(body).to_bytes(2, "little")).decode().rstrip("=")


@dataclass(frozen=True)
class Signer:
    """Signs the server's nonce; ``jwt`` is set for a creds file, ``public_key`` always."""

    public_key: str
    jwt: str | None
    _seed: bytes = field(repr=False)

    def sign_nonce(self, nonce: str) -> bytes:
        from nacl.signing import SigningKey

        signed = SigningKey(self._seed).sign(nonce.encode("utf-8")).signature
        return base64.b64encode(signed)


def _signer(seed: bytes, jwt: str | None) -> Signer:
    try:
        from nacl.signing import SigningKey
    except ImportError:  # pragma: no cover - a dependency of the package
        raise HookbusError(
            "HOOKBUS_INVALID_ARGUMENT",
            "--nkey and --creds need PyNaCl (pip install pynacl)", {"argument": "nkey"}) from None
    public = bytes(SigningKey(seed).verify_key)
    return Signer(public_key=public_user_key(public), jwt=jwt, _seed=seed)


def _read(path: str, what: str, argument: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise HookbusError("HOOKBUS_INVALID_ARGUMENT", f"cannot read {what} {path}: {error}",
                           {"argument": argument}) from None


def nkey_signer(file: str | None, seed: str | None) -> Signer | None:
    """From a seed file, else the seed itself (``HOOKBUS_NKEY_SEED``); None when neither is set."""
    if file:
        return _signer(_seed_bytes(_read(file, "nkey seed file", "nkey"), file), None)
    if seed:
        return _signer(_seed_bytes(seed, "HOOKBUS_NKEY_SEED"), None)
    return None


def creds_signer(file: str | None) -> Signer | None:
    """A creds file (``nsc`` writes them): its user JWT and seed; None when not set."""
    if not file:
        return None
    text = _read(file, "creds file", "creds")
    jwt = _USER_JWT.search(text)
    if jwt is None:
        raise HookbusError("HOOKBUS_INVALID_ARGUMENT", f"{file} holds no NATS user JWT",
                           {"argument": "creds"})
    return _signer(_seed_bytes(text, file), jwt.group(1))


def check_inbox_prefix(prefix: str) -> str:
    """One or more literal subject tokens: no wildcard, no whitespace, no empty token."""
    if len(prefix) <= 200 and all(_INBOX_TOKEN.match(t) for t in prefix.split(".")):
        return prefix
    raise HookbusError(
        "HOOKBUS_INVALID_ARGUMENT",
        f"inbox prefix {prefix!r} must be 1-200 characters of literal subject tokens "
        "(no '*', '>', spaces or empty tokens)",
        {"argument": "inbox-prefix"})
