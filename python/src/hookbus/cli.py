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
from typing import Any

from .credentials import creds_signer, nkey_signer
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


def _positive_int(text: str) -> int:
    value = int(text) if text.strip().isdigit() else 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return value


def _milliseconds(text: str) -> int:
    if not text.strip().isdigit():
        raise argparse.ArgumentTypeError(f"must be a whole number of milliseconds, got {text!r}")
    return int(text)


def _parser() -> argparse.ArgumentParser:
    env = os.environ.get
    parser = argparse.ArgumentParser(
        prog="hookbus-worker",
        description="Serve hookbus policies written in Python (drains on SIGTERM/SIGINT).")
    parser.add_argument("policies", nargs="+", help="module:policy or file.py[:policy]")
    parser.add_argument("--nats", "--server", dest="nats",
                        default=env("NATS_URL", "nats://127.0.0.1:4222"),
                        help="NATS server URL(s), comma-separated (env NATS_URL)")
    parser.add_argument("--namespace", default=env("HOOKBUS_NAMESPACE", "hookbus"),
                        help="hookbus namespace (env HOOKBUS_NAMESPACE, default hookbus)")
    parser.add_argument("--nkey", default=env("HOOKBUS_NKEY_FILE"), metavar="FILE",
                        help="the user's nkey seed file, as `hookbus auth` writes it "
                             "(env HOOKBUS_NKEY_FILE; or the seed itself in HOOKBUS_NKEY_SEED)")
    parser.add_argument("--creds", default=env("NATS_CREDS"), metavar="FILE",
                        help="a NATS creds file: user JWT and seed (env NATS_CREDS)")
    parser.add_argument("--inbox-prefix", default=env("HOOKBUS_INBOX_PREFIX"), metavar="PREFIX",
                        help="where replies arrive; `hookbus auth` gives each user its own "
                             "(env HOOKBUS_INBOX_PREFIX)")
    parser.add_argument("--connect-wait", type=_milliseconds, metavar="MS",
                        default=env("HOOKBUS_CONNECT_WAIT_MS") or "30000",
                        help="keep retrying an unreachable NATS server this long at start "
                             "(env HOOKBUS_CONNECT_WAIT_MS, default 30000; 0 = try once)")
    parser.add_argument("--concurrency", type=_positive_int, default=DEFAULT_CONCURRENCY)
    parser.add_argument("--max-queued", type=_positive_int, default=DEFAULT_MAX_QUEUED)
    parser.add_argument("--log-level", default=env("LOG_LEVEL", "info"))
    return parser


def _connection(args: argparse.Namespace) -> dict[str, Any]:
    """How to reach NATS and as whom: the TypeScript CLI's flags and environment (src/bus/connect.ts)."""
    env = os.environ.get
    # As in TypeScript, an nkey wins over a creds file when both are given.
    signer = nkey_signer(args.nkey, env("HOOKBUS_NKEY_SEED")) or creds_signer(args.creds)
    return {"signer": signer, "inbox_prefix": args.inbox_prefix or None,
            "user": env("NATS_USER"), "password": env("NATS_PASSWORD"),
            "token": env("NATS_TOKEN"), "wait_seconds": args.connect_wait / 1000}


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s %(message)s")
    try:
        policies = [p for spec in args.policies for p in load(spec)]
        asyncio.run(run(policies, servers=args.nats, namespace=args.namespace,
                        concurrency=args.concurrency, max_queued=args.max_queued,
                        **_connection(args)))
    except HookbusError as error:
        print(f"hookbus-worker: {error.code}: {error.message}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
