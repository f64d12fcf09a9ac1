"""Coded errors, as they cross the wire: ``{"code", "message", "details"?}`` (docs/errors.md)."""

from __future__ import annotations

from typing import Any


class HookbusError(Exception):
    """An error with a stable code from docs/errors.md; the worker replies with it as is."""

    def __init__(self, code: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details or {}

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details:
            wire["details"] = self.details
        return wire


class PolicyError(HookbusError):
    """Raise it from a handler to fail with a message (code HOOKBUS_POLICY_ERROR)."""

    def __init__(self, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__("HOOKBUS_POLICY_ERROR", message, details)


def limit_exceeded(limit: str, message: str, **details: Any) -> HookbusError:
    return HookbusError("HOOKBUS_LIMIT_EXCEEDED", message, {"limit": limit, **details})
