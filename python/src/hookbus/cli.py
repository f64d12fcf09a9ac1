"""``hookbus-worker module:policy [...]``: serve Python policies until SIGTERM/SIGINT, then drain."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import importlib.util
import logging
import os
import sys
from pathlib import Path
from types import ModuleType

from .errors import HookbusError
from .policy import Policy
from .worker import DEFAULT_CONCURRENCY, DEFAULT_MAX_QUEUED, run


def load(spec: str) -> list[Policy]:
    """``package.module:attr``, ``path/to/file.py:attr``, or either without ``:attr`` (every policy)."""
    target, _, attr = spec.partition(":")
    module = _import(target)
    if attr:
        found = getattr(module, attr, None)
        items = found if isinstance(found, (list, tuple)) else [found]
    else:
        items = [v for v in vars(module).values() if isinstance(v, Policy)]
    policies = [p for p in items if isinstance(p, Policy)]
    if not policies or len(policies) != len(items):
        raise HookbusError("HOOKBUS_INVALID_POLICY",
                           f"{spec}: no policy made with @policy() found there")
    return policies


def _import(target: str) -> ModuleType:
    if target.endswith(".py") or os.sep in target:
        path = Path(target).resolve()
        spec = importlib.util.spec_from_file_location(path.stem, path)
        if spec is None or spec.loader is None:
            raise HookbusError("HOOKBUS_INVALID_ARGUMENT", f"cannot load {target}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        spec.loader.exec_module(module)
        return module
    sys.path.insert(0, os.getcwd())
    return importlib.import_module(target)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="hookbus-worker",
        description="Serve hookbus policies written in Python (drains on SIGTERM/SIGINT).")
    parser.add_argument("policies", nargs="+", help="module:policy or file.py[:policy]")
    parser.add_argument("--nats", default=os.environ.get("NATS_URL", "nats://127.0.0.1:4222"),
                        help="NATS server URL(s), comma-separated (env NATS_URL)")
    parser.add_argument("--namespace", default=os.environ.get("HOOKBUS_NAMESPACE", "hookbus"),
                        help="hookbus namespace (env HOOKBUS_NAMESPACE, default hookbus)")
    parser.add_argument("--concurrency", type=int, default=DEFAULT_CONCURRENCY)
    parser.add_argument("--max-queued", type=int, default=DEFAULT_MAX_QUEUED)
    parser.add_argument("--log-level", default=os.environ.get("LOG_LEVEL", "info"))
    args = parser.parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s %(message)s")
    try:
        policies = [p for spec in args.policies for p in load(spec)]
        asyncio.run(run(policies, servers=args.nats, namespace=args.namespace,
                        concurrency=args.concurrency, max_queued=args.max_queued))
    except HookbusError as error:
        print(f"hookbus-worker: {error.code}: {error.message}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
