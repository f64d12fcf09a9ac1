/**
 * The gateway's hookbus connection, made in the background: an MCP host starts the gateway with
 * its own session and shows nothing but "Connection closed" when it exits, so the gateway starts
 * even when NATS is away, answers each tool call with the coded reason it cannot decide (fail
 * closed), and keeps trying until NATS is back. Once connected, the NATS client reconnects by
 * itself (`maxReconnectAttempts: -1`) and each decision fails with its own code meanwhile.
 */
import type { Logger } from "pino";
import type { HookbusClient } from "../../agent/client.js";
import { backoffMs } from "../../foundation/backoff.js";
import { HookbusError, isHookbusError } from "../../foundation/errors.js";
import { sleep } from "../../foundation/time.js";

export interface OpenedHookbus {
  hookbus: HookbusClient;
  close(): Promise<void>;
}

const FIRST_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 2_000;

export class HookbusConnection {
  private opened: OpenedHookbus | undefined;
  private lastError: HookbusError = new HookbusError(
    "HOOKBUS_NATS_UNREACHABLE",
    "the gateway is still connecting to NATS: retry in a moment",
  );
  private stopped = false;
  private wake: (() => void) | undefined;
  private readonly loop: Promise<void>;

  constructor(
    private readonly open: () => Promise<OpenedHookbus>,
    private readonly logger: Logger,
  ) {
    this.loop = this.connectUntilOpen();
  }

  /** The connected client; throws the coded reason there is none yet. */
  readonly current = (): HookbusClient => {
    if (this.opened !== undefined) return this.opened.hookbus;
    throw new HookbusError(
      this.lastError.code,
      `${this.lastError.message} (the gateway keeps retrying; the call is refused meanwhile)`,
      this.lastError.details,
    );
  };

  /** Resolves once connected (or closed): for tests and logs. */
  async ready(): Promise<boolean> {
    await this.loop;
    return this.opened !== undefined;
  }

  async close(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
    await this.opened?.close().catch(() => undefined);
  }

  private async connectUntilOpen(): Promise<void> {
    let backoff = backoffMs(0, { firstMs: FIRST_BACKOFF_MS, capMs: MAX_BACKOFF_MS });
    for (let attempt = 1; !this.stopped; attempt++) {
      try {
        const opened = await this.open();
        if (this.stopped) await opened.close().catch(() => undefined);
        else this.opened = opened;
        if (attempt > 1) this.logger.info({ attempt }, "connected to hookbus");
        return;
      } catch (error) {
        this.lastError = isHookbusError(error)
          ? error
          : new HookbusError("HOOKBUS_NATS_UNREACHABLE", String(error));
        this.logger.warn(
          { attempt, retryInMs: backoff, code: this.lastError.code },
          this.lastError.message,
        );
      }
      await sleep(backoff, { unref: true, onWake: (wake) => (this.wake = wake) });
      backoff = backoffMs(attempt, { firstMs: FIRST_BACKOFF_MS, capMs: MAX_BACKOFF_MS });
    }
  }
}
