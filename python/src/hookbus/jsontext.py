"""Strict JSON both ways: what a TypeScript peer reads with ``JSON.parse`` and nothing else.

Python's ``json`` module reads and writes ``NaN``, ``Infinity`` and ``-Infinity`` (not JSON), turns
``1e999`` into ``inf`` (which it then writes as ``Infinity``), and accepts bytes in UTF-16 or
UTF-32. A worker that echoed any of these would answer with a reply no other SDK can read, so:

- reading: UTF-8 only; the three constants and any number that overflows a double are
  HOOKBUS_BAD_MESSAGE (the code the TypeScript SDK gives a body that ``JSON.parse`` refuses);
- writing: a non-finite float or a value JSON has no form for is an error with the caller's code;
- a lone UTF-16 surrogate (``"\\ud800"``, valid JSON text) is read as JavaScript reads it, so a
  handler sees every string a TypeScript handler would, and written back as the same ``\\u``
  escape (UTF-8 has no encoding for it). Refusing it instead would let an agent slip any text
  past a fail-open Python policy, since the coordinator accepts and forwards it.
"""

from __future__ import annotations

import json
import math
from typing import Any, NoReturn

from .errors import HookbusError

_COMPACT = (",", ":")


def _refuse_constant(name: str) -> NoReturn:
    raise HookbusError("HOOKBUS_BAD_MESSAGE", f"{name} is not JSON (a number must be finite)")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise HookbusError(
            "HOOKBUS_BAD_MESSAGE",
            f"the number {text[:40]} is out of range for a double (not finite)",
        )
    return value


def loads(data: bytes | str) -> Any:
    """JSON text (UTF-8 bytes, or str) to a value; anything else is HOOKBUS_BAD_MESSAGE."""
    try:
        text = data if isinstance(data, str) else data.decode("utf-8")
        return json.loads(text, parse_constant=_refuse_constant, parse_float=_finite)
    except HookbusError:
        raise
    except UnicodeDecodeError as error:
        raise HookbusError("HOOKBUS_BAD_MESSAGE", f"a body is not UTF-8: {error}") from None
    except (ValueError, RecursionError) as error:
        raise HookbusError("HOOKBUS_BAD_MESSAGE", f"cannot decode JSON body: {error}") from None


def dumps(value: Any, code: str, what: str) -> bytes:
    """A value to compact UTF-8 JSON; no form in JSON (NaN, inf, a set, …) is ``code``."""
    try:
        text = json.dumps(value, separators=_COMPACT, ensure_ascii=False, allow_nan=False)
    except (ValueError, TypeError, RecursionError) as error:
        raise HookbusError(code, f"{what} has no JSON form: {error}") from None
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate: escaped as \\uXXXX, as JSON.stringify writes it (ASCII output).
        return json.dumps(value, separators=_COMPACT, ensure_ascii=True,
                          allow_nan=False).encode("ascii")
