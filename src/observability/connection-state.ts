/** Whether a NATS connection is up right now, followed through its status events (for /readyz). */
import type { NatsConnection } from "@nats-io/transport-node";

export interface ConnectionState {
  connected(): boolean;
}

export function followConnection(nc: NatsConnection): ConnectionState {
  let up = !nc.isClosed();
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === "disconnect" || status.type === "reconnecting") up = false;
      else if (status.type === "reconnect") up = true;
      else if (status.type === "close") break;
    }
  })().finally(() => (up = false));
  return { connected: () => up && !nc.isClosed() && !nc.isDraining() };
}
