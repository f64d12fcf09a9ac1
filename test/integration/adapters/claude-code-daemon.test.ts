/**
 * The hook daemon's socket side (src/adapters/claude-code/daemon.ts) on real Unix sockets, with an
 * answer function the test controls: its bounds (connections, request size and time), its refusal
 * of a path that is not its user's socket, and its exit when another daemon takes its path.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import {
  startHookDaemon,
  type DaemonRequest,
  type HookDaemon,
  type HookDaemonOptions,
} from "../../../src/adapters/claude-code/daemon.js";
import { MAX_HOOK_INPUT_BYTES } from "../../../src/adapters/claude-code/input.js";
import { isHookbusError } from "../../../src/foundation/errors.js";
import { gate, rejection, until } from "../../support/wait.js";

const dirs: string[] = [];
const daemons: HookDaemon[] = [];

afterEach(async () => {
  for (const daemon of daemons.splice(0)) await daemon.stop();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function socketPath(): string {
  const dir = mkdtempSync(join(tmpdir(), "hookbus-ccd-"));
  dirs.push(dir);
  return join(dir, "cc-test.sock");
}

const echo: HookDaemonOptions["answer"] = (request) =>
  Promise.resolve({ exitCode: 0, stdout: `${request.agentId}:${request.text}\n`, stderr: "" });

async function start(path: string, options: Partial<HookDaemonOptions> = {}): Promise<HookDaemon> {
  const daemon = await startHookDaemon({
    socketPath: path,
    logger: pino({ level: "silent" }),
    maxConnections: 4,
    maxRequestMs: 120_000,
    receiveTimeoutMs: 5_000,
    idleExitMs: 60_000,
    answer: echo,
    ...options,
  });
  if (daemon === "running") throw new Error("a daemon already runs there");
  daemons.push(daemon);
  return daemon;
}

/** What the client does: a header line and the body; resolves with the one reply line, parsed. */
function ask(
  path: string,
  text: string,
  header: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(path);
    let reply = "";
    socket.on("data", (d: Buffer) => (reply += d.toString()));
    socket.on("error", reject);
    socket.on("close", () =>
      reply.includes("\n")
        ? resolve(JSON.parse(reply.slice(0, reply.indexOf("\n"))) as Record<string, unknown>)
        : reject(new Error("closed without a reply")),
    );
    const fields = { v: 1, agentId: "a", rewrite: "allow", timeoutMs: 5000, ...header };
    socket.write(`${JSON.stringify({ bytes: Buffer.byteLength(text), ...fields })}\n${text}`);
  });
}

describe("the Claude Code hook daemon's socket", () => {
  it("answers each request with its agent, text and a deadline bounded by the daemon's maximum", async () => {
    const path = socketPath();
    const seen: DaemonRequest[] = [];
    await start(path, {
      maxRequestMs: 1_000,
      answer: (request) => {
        seen.push(request);
        return echo(request);
      },
    });
    const before = Date.now();
    expect(await ask(path, '{"x":"é"}', { agentId: "laptop", timeoutMs: 60_000 })).toEqual({
      reply: { exitCode: 0, stdout: 'laptop:{"x":"é"}\n', stderr: "" },
    });
    expect(seen[0]!.deadline - before).toBeLessThanOrEqual(1_000 + 50);
  });

  it("answers HOOKBUS_OVERLOADED past its connection bound, and serves again once one ends", async () => {
    const path = socketPath();
    const held = gate();
    let arrived = 0;
    await start(path, {
      maxConnections: 1,
      answer: async (request) => {
        arrived++;
        await held.promise;
        return echo(request);
      },
    });
    const first = ask(path, "one");
    await until(() => arrived === 1, 5_000, "the first request being served");
    expect(await ask(path, "two")).toMatchObject({ error: { code: "HOOKBUS_OVERLOADED" } });
    held.open();
    expect(await first).toMatchObject({ reply: { stdout: "a:one\n" } });
    expect(await ask(path, "three")).toMatchObject({ reply: { stdout: "a:three\n" } });
  });

  it("refuses an input over the hook's limit, a malformed header and another protocol version", async () => {
    const path = socketPath();
    await start(path);
    expect(await ask(path, "", { bytes: MAX_HOOK_INPUT_BYTES + 1 })).toMatchObject({
      error: { code: "HOOKBUS_LIMIT_EXCEEDED" },
    });
    expect(await ask(path, "x", { v: 2 })).toMatchObject({
      error: { code: "HOOKBUS_BAD_MESSAGE" },
    });
    expect(await ask(path, "longer than announced", { bytes: 3 })).toMatchObject({
      error: { code: "HOOKBUS_BAD_MESSAGE" },
    });
  });

  it("gives up on a request that does not arrive in time", async () => {
    const path = socketPath();
    await start(path, { receiveTimeoutMs: 200 });
    expect(await ask(path, "short", { bytes: 100 })).toMatchObject({
      error: { code: "HOOKBUS_BAD_MESSAGE", message: expect.stringContaining("in time") as string },
    });
  });

  it("leaves a live daemon be, and refuses a path that is not a socket or a folder open to others", async () => {
    const path = socketPath();
    await start(path);
    expect(
      await startHookDaemon({
        socketPath: path,
        logger: pino({ level: "silent" }),
        maxConnections: 1,
        maxRequestMs: 1000,
        receiveTimeoutMs: 1000,
        idleExitMs: 1000,
        answer: echo,
      }),
    ).toBe("running");

    const file = socketPath();
    writeFileSync(file, "not a socket");
    const refused = await rejection(start(file));
    expect(isHookbusError(refused, "HOOKBUS_DAEMON_SOCKET_UNSAFE")).toBe(true);

    const open = socketPath();
    chmodSync(join(open, ".."), 0o777);
    expect(isHookbusError(await rejection(start(open)), "HOOKBUS_DAEMON_SOCKET_UNSAFE")).toBe(true);
  });

  it("stops when another daemon took over its path, leaving that one's socket", async () => {
    const path = socketPath();
    const first = await start(path);
    rmSync(path); // as if stale: a second daemon binds the path anew
    await start(path, {
      answer: (r) => Promise.resolve({ exitCode: 0, stdout: `second:${r.text}\n`, stderr: "" }),
    });
    expect(await first.stopped).toBe("replaced");
    expect(await ask(path, "x")).toMatchObject({ reply: { stdout: "second:x\n" } });
  });
});
