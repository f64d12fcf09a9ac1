"""The wire contract: the JSON Schemas of schemas/, shipped inside the package at build time."""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from .errors import HookbusError

MODIFYING_HOOKS = (
    "before_agent_reply",
    "before_llm_call",
    "after_llm_call",
    "before_tool_call",
    "before_tool_result",
    "before_response_emit",
)
OBSERVATIONAL_HOOKS = (
    "after_tool_call",
    "llm_input",
    "llm_output",
    "session_start",
    "session_end",
    "agent_end",
)
HOOKS = MODIFYING_HOOKS + OBSERVATIONAL_HOOKS


def _schema_root() -> Path:
    shipped = resources.files("hookbus").joinpath("schemas")
    if shipped.is_dir():
        return Path(str(shipped))
    # A source checkout (editable install): the repository's schemas/, the one source.
    return Path(__file__).resolve().parents[3] / "schemas"


@lru_cache(maxsize=None)
def validator(path: str) -> Draft202012Validator:
    """A compiled validator of ``schemas/<path>``, e.g. ``hooks/before_tool_call.event.schema.json``."""
    with (_schema_root() / path).open(encoding="utf-8") as file:
        schema = json.load(file)
    return Draft202012Validator(schema)


def first_error(path: str, value: Any) -> str | None:
    """The first schema violation of ``value`` (None when it is valid)."""
    error = next(iter(validator(path).iter_errors(value)), None)
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path) or "(root)"
    return f"{where}: {error.message}"


def check(path: str, value: Any, code: str, what: str, details: dict[str, Any]) -> None:
    problem = first_error(path, value)
    if problem is not None:
        raise HookbusError(code, f"{what} does not match schemas/{path}: {problem}", details)
