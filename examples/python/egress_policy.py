"""Egress rules for web tools, where Python's library is the better one: ``idna`` (IDNA 2008 + UTS #46).

Hosts are normalised the way browsers and resolvers see them (case, full-width forms, trailing
dots, punycode ``xn--`` labels decoded), so ``ＥＸＡＭＰＬＥ.com.`` is ``example.com``; a host that
is not on the allowlist but *looks like* one that is (Cyrillic ``а`` for Latin ``a``, a label
mixing scripts) is blocked as a look-alike, and a host that is no valid IDN is blocked too.

    HOOKBUS_EGRESS_ALLOW=example.com,api.github.com \\
      hookbus-worker examples/python/egress_policy.py:egress
"""

from __future__ import annotations

import os
import unicodedata
from urllib.parse import urlsplit

import idna

from hookbus import BeforeToolCallVerdict, Call, policy

WEB_TOOLS = {"web_fetch", "http_request", "browser_open"}

# Letters of other scripts that render like Latin ones (a small part of Unicode's confusables).
CONFUSABLES = str.maketrans({
    "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "і": "i", "ј": "j",
    "ѕ": "s", "ԁ": "d", "һ": "h", "ӏ": "l", "ο": "o", "α": "a", "ν": "v", "ρ": "p", "τ": "t",
    "ι": "i", "κ": "k",
})


def allowed_hosts() -> set[str]:
    raw = os.environ.get("HOOKBUS_EGRESS_ALLOW", "example.com")
    return {normalise(h) for h in raw.split(",") if h.strip()}


def normalise(host: str) -> str:
    """The host as Unicode after UTS #46 mapping (raises idna.IDNAError when it is not valid)."""
    ascii_form = idna.encode(host.strip().rstrip("."), uts46=True)
    return idna.decode(ascii_form)


def scripts(label: str) -> set[str]:
    return {unicodedata.name(ch, "UNKNOWN").split(" ")[0] for ch in label if ch.isalpha()}


def look_alike(host: str, allowed: set[str]) -> str | None:
    skeleton = host.translate(CONFUSABLES)
    for candidate in allowed:
        if skeleton == candidate or skeleton.endswith("." + candidate):
            return candidate
    return None


@policy("egress", "1.0.0", hooks=["before_tool_call"])
def egress(call: Call) -> BeforeToolCallVerdict | None:
    if call.event["toolName"] not in WEB_TOOLS:
        return None
    url = str(call.event["params"].get("url", ""))
    host = urlsplit(url).hostname or ""
    try:
        name = normalise(host)
    except (idna.IDNAError, UnicodeError) as error:
        return BeforeToolCallVerdict(block=True, block_reason=f"not a valid host name: {error}")
    allowed = allowed_hosts()
    if any(name == a or name.endswith("." + a) for a in allowed):
        return None
    mimicked = look_alike(name, allowed)
    if mimicked is not None:
        return BeforeToolCallVerdict(block=True,
                                     block_reason=f"{name} is a look-alike of {mimicked}")
    mixed = [label for label in name.split(".") if len(scripts(label)) > 1]
    if mixed:
        return BeforeToolCallVerdict(block=True,
                                     block_reason=f"{name} mixes scripts in {mixed[0]!r}")
    return BeforeToolCallVerdict(block=True, block_reason=f"{name} is not on the egress allowlist")
