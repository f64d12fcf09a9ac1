"""Ids as subject tokens (docs/protocol.md): every byte outside ``[A-Za-z0-9_-]`` becomes ``=XX``."""

from __future__ import annotations

import re

_SAFE = re.compile(r"[A-Za-z0-9_-]")
POLICY_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
NAMESPACE = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")


def encode_token(value: str) -> str:
    if value == "":
        raise ValueError("an id used as a subject token must not be empty")
    out: list[str] = []
    for char in value:
        if _SAFE.fullmatch(char):
            out.append(char)
        else:
            out.extend(f"={byte:02X}" for byte in char.encode("utf-8"))
    return "".join(out)
