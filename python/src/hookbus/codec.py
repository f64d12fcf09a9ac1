"""How a JSON body travels (docs/protocol.md, "Large bodies"): inline, gzipped, or as a blob reference.

Every decode is bounded: the encoded size, the inflated size (the gunzip stops there), the JSON
nesting depth (scanned before parsing) and the number of blob chunks (checked before a fetch).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import gzip
import hashlib
import json
import os
import re
import zlib
from dataclasses import dataclass
from typing import Any

from nacl.bindings import (
    crypto_aead_chacha20poly1305_ietf_decrypt,
    crypto_aead_chacha20poly1305_ietf_encrypt,
)
from nacl.exceptions import CryptoError
from nats.js import JetStreamContext

from . import jsontext
from .errors import HookbusError, limit_exceeded

COMPRESS_ABOVE = 64 * 1024
MAX_INLINE_BYTES = 1024 * 1024 - 64 * 1024
CHUNK_BYTES = 512 * 1024
SHARED_OWNER = "=shared"
_BLOB_REF_KEYS = {"blob", "size", "chunks", "gzip", "owner"}
# A sealed blob's reference also carries its own key and nonce (docs/privacy.md, "Blobs").
_SEALED_REF_KEYS = _BLOB_REF_KEYS | {"key", "iv"}
_KEY_BYTES = 32
_NONCE_BYTES = 12
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_OWNER = re.compile(r"^[A-Za-z0-9_=-]{1,1024}$")


@dataclass(frozen=True)
class Limits:
    max_encoded_bytes: int = 1024 * 1024
    max_inflated_bytes: int = 16 * 1024 * 1024
    max_depth: int = 64
    max_blob_chunks: int = 64


def depth_exceeds(data: bytes, max_depth: int) -> bool:
    """Whether JSON text nests deeper than ``max_depth`` (strings skipped; no recursion)."""
    depth = 0
    in_string = False
    escaped = False
    for byte in data:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:
                escaped = True
            elif byte == 0x22:
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):
            depth += 1
            if depth > max_depth:
                return True
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return False


def _parse(data: bytes, limits: Limits) -> Any:
    if depth_exceeds(data, limits.max_depth):
        raise limit_exceeded(
            "maxDepth", f"a body nests deeper than the limit of {limits.max_depth} levels",
            max=limits.max_depth,
        )
    return jsontext.loads(data)


def inflate(data: bytes, max_bytes: int) -> bytes:
    """Gunzip, stopping with HOOKBUS_LIMIT_EXCEEDED as soon as the output passes ``max_bytes``."""
    decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = decompressor.decompress(data, max_bytes + 1)
    except zlib.error as error:
        raise HookbusError("HOOKBUS_BAD_MESSAGE", f"cannot gunzip body: {error}") from None
    if len(out) > max_bytes or decompressor.unconsumed_tail:
        raise limit_exceeded(
            "maxInflatedBytes", f"a body inflates past the limit of {max_bytes} bytes",
            max=max_bytes,
        )
    if not decompressor.eof:
        raise HookbusError("HOOKBUS_BAD_MESSAGE", "truncated gzip body")
    return out


class Codec:
    """Decodes requests and encodes replies of one namespace; blobs through the JetStream context."""

    def __init__(self, js: JetStreamContext, namespace: str, limits: Limits | None = None) -> None:
        self.js = js
        self.namespace = namespace
        self.stream = namespace.upper() + "_BLOBS"
        self.limits = limits or Limits()

    async def decode(self, data: bytes, encoding: str | None, timeout: float | None) -> Any:
        limits = self.limits
        if len(data) > limits.max_encoded_bytes:
            raise limit_exceeded(
                "maxEncodedBytes",
                f"a body of {len(data)} bytes is over the limit of {limits.max_encoded_bytes}",
                bytes=len(data), max=limits.max_encoded_bytes,
            )
        if encoding in (None, "", "json"):
            return _parse(data, limits)
        if encoding == "gzip":
            return _parse(inflate(data, limits.max_inflated_bytes), limits)
        if encoding == "blob":
            ref = self._blob_reference(_parse(data, Limits(max_depth=2)))
            stored = _open_blob(ref, await self._read_blob(ref, timeout))
            raw = inflate(stored, limits.max_inflated_bytes) if ref["gzip"] else stored
            return _parse(raw, limits)
        raise HookbusError("HOOKBUS_BAD_MESSAGE", f"unknown body encoding {encoding!r}")

    def _blob_reference(self, ref: Any) -> dict[str, Any]:
        if (
            not isinstance(ref, dict)
            or (set(ref) != _BLOB_REF_KEYS and set(ref) != _SEALED_REF_KEYS)
            or not isinstance(ref["blob"], str) or not _SHA256.match(ref["blob"])
            or not isinstance(ref["owner"], str) or not _OWNER.match(ref["owner"])
            or not isinstance(ref["gzip"], bool)
            or type(ref["size"]) is not int or ref["size"] < 0
            or type(ref["chunks"]) is not int or ref["chunks"] < 1
        ):
            raise HookbusError("HOOKBUS_BAD_MESSAGE", "not a blob reference")
        if ref["chunks"] > self.limits.max_blob_chunks:
            raise limit_exceeded(
                "maxBlobChunks",
                f"a blob reference names {ref['chunks']} chunks; at most "
                f"{self.limits.max_blob_chunks} are allowed",
                chunks=ref["chunks"], max=self.limits.max_blob_chunks,
            )
        if ref["size"] > self.limits.max_inflated_bytes:
            raise limit_exceeded(
                "maxInflatedBytes",
                f"a blob of {ref['size']} bytes is over the limit of {self.limits.max_inflated_bytes}",
                bytes=ref["size"], max=self.limits.max_inflated_bytes,
            )
        return ref

    async def _read_blob(self, ref: dict[str, Any], timeout: float | None) -> bytes:
        prefix = f"{self.namespace}.blob.{ref['owner']}.{ref['blob']}"

        async def read_all() -> bytes:
            parts: list[bytes] = []
            total = 0
            for index in range(ref["chunks"]):
                try:
                    msg = await self.js.get_last_msg(self.stream, f"{prefix}.{index}", direct=True)
                except Exception as error:  # noqa: BLE001 - any failure means the chunk is not there
                    raise HookbusError(
                        "HOOKBUS_BLOB_MISSING",
                        f"blob {ref['blob']} chunk {index} cannot be read: {error}",
                        {"blob": ref["blob"], "chunk": index},
                    ) from None
                chunk = msg.data or b""
                total += len(chunk)
                if total > ref["size"]:
                    break
                parts.append(chunk)
            stored = b"".join(parts)
            if len(stored) != ref["size"] or hashlib.sha256(stored).hexdigest() != ref["blob"]:
                raise HookbusError(
                    "HOOKBUS_BAD_MESSAGE", f"blob {ref['blob']} does not match its size or sha256"
                )
            return stored

        if timeout is None:
            return await read_all()
        try:
            return await asyncio.wait_for(read_all(), timeout)
        except asyncio.TimeoutError:
            raise HookbusError(
                "HOOKBUS_CALL_TIMEOUT", f"blob {ref['blob']} not read before the deadline"
            ) from None

    async def encode(self, value: Any, code: str = "HOOKBUS_INTERNAL",
                     what: str = "a reply") -> tuple[bytes, str | None]:
        """The bytes to send and the ``Hookbus-Encoding`` header (None: plain JSON).

        A value with no JSON form is ``code``; a body too large even for the blob store is
        HOOKBUS_PAYLOAD_TOO_LARGE.
        """
        data = jsontext.dumps(value, code, what)
        if len(data) <= COMPRESS_ABOVE:
            return data, None
        zipped = gzip.compress(data, compresslevel=6)
        if len(zipped) <= MAX_INLINE_BYTES:
            return zipped, "gzip"
        return await self._store_blob(zipped), "blob"

    async def _store_blob(self, body: bytes) -> bytes:
        key, nonce = os.urandom(_KEY_BYTES), os.urandom(_NONCE_BYTES)
        stored = crypto_aead_chacha20poly1305_ietf_encrypt(body, None, nonce, key)
        digest = hashlib.sha256(stored).hexdigest()
        chunks = max(1, -(-len(stored) // CHUNK_BYTES))
        for index in range(chunks):
            chunk = stored[index * CHUNK_BYTES : (index + 1) * CHUNK_BYTES]
            try:
                await self.js.publish(
                    f"{self.namespace}.blob.{SHARED_OWNER}.{digest}.{index}",
                    chunk,
                    stream=self.stream,
                    headers={"Nats-Msg-Id": f"{SHARED_OWNER}.{digest}.{index}"},
                )
            except Exception as error:  # noqa: BLE001 - no stream, no permission, no space
                raise HookbusError(
                    "HOOKBUS_PAYLOAD_TOO_LARGE",
                    f"a body of {len(stored)} gzipped bytes needs the blob store "
                    f"({self.stream}), which refused it: {error}",
                    {"bytes": len(stored)},
                ) from None
        ref = {"blob": digest, "size": len(stored), "chunks": chunks, "gzip": True,
               "owner": SHARED_OWNER, "key": base64.b64encode(key).decode("ascii"),
               "iv": base64.b64encode(nonce).decode("ascii")}
        return json.dumps(ref, separators=(",", ":")).encode("utf-8")


def _open_blob(ref: dict[str, Any], stored: bytes) -> bytes:
    """A sealed blob's body, opened with the key its reference carries; a plain one as it is."""
    if "key" not in ref:
        return stored
    try:
        key = base64.b64decode(ref["key"], validate=True)
        nonce = base64.b64decode(ref["iv"], validate=True)
        if len(key) != _KEY_BYTES or len(nonce) != _NONCE_BYTES:
            raise ValueError("wrong key or nonce length")
        return crypto_aead_chacha20poly1305_ietf_decrypt(stored, None, nonce, key)
    except (TypeError, ValueError, binascii.Error, CryptoError):
        raise HookbusError(
            "HOOKBUS_BLOB_MISSING",
            f"blob {ref['blob']} does not open with the key its reference carries",
            {"blob": ref["blob"]},
        ) from None
