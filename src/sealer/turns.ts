/**
 * The sealer's turns: take the lease and seal while it holds it; without it, stand by and try
 * again every quarter of its time to live, until the sealer stops.
 */
import type { Logger } from "pino";
import { backoffMs } from "../foundation/backoff.js";
import { HookbusError } from "../foundation/errors.js";
import { sleep } from "../foundation/time.js";
import type { SealerLease } from "./lease.js";

/** What stop() and the running sealer share. */
export interface SealerControl {
  stopped: boolean;
  /** Whether this sealer took the lease and seals (or is about to). */
  active: boolean;
  /** Ends a standby's wait at once (set while it waits). */
  wake?: () => void;
  /** Ends the current round at once (set while one reads). */
  stopCurrent?: () => void;
}

export interface TurnOptions {
  control: SealerControl;
  lease: SealerLease;
  leaseTtlMs: number;
  logger: Logger;
  /** One round of sealing while the lease is held (it throws what ended it). */
  seal(): Promise<void>;
}

/** Resolves once the sealer stopped. */
export async function takeTurns(options: TurnOptions): Promise<void> {
  const { control, lease, leaseTtlMs, logger } = options;
  for (let attempt = 0; !control.stopped;) {
    try {
      control.active = await lease.acquire();
      if (!control.active) {
        await standBy(control, leaseTtlMs / 4);
        continue;
      }
      logger.info("sealer active");
      await options.seal();
      attempt = 0;
    } catch (error) {
      control.active = false;
      const conflict = error instanceof HookbusError && error.code === "HOOKBUS_SEAL_CONFLICT";
      logger[conflict ? "info" : "error"]({ err: error }, "sealer standing by");
      await sleep(conflict ? leaseTtlMs / 4 : backoffMs(attempt++, { firstMs: 100, capMs: 5000 }));
    }
  }
}

function standBy(control: SealerControl, ms: number): Promise<void> {
  return sleep(ms, { unref: true, onWake: (wake) => (control.wake = wake) });
}
