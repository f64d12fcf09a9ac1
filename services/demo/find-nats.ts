/**
 * Where the demo finds NATS: NATS_URL; else a server answering on 127.0.0.1:4222; else a private
 * nats-server (the binary, or Docker through testcontainers) that the demo stops when done; else
 * an error that says exactly what to install.
 */
import { findNatsServer, natsAnswers } from "../../src/testing/nats.js";

export interface DemoNats {
  url: string;
  how: string;
  stop(): Promise<void>;
}

export async function findDemoNats(): Promise<DemoNats> {
  const fromEnv = process.env.NATS_URL;
  if (fromEnv !== undefined && fromEnv !== "")
    return { url: fromEnv, how: "from NATS_URL", stop: async () => {} };
  if (await natsAnswers("127.0.0.1", 4222)) {
    return {
      url: "nats://127.0.0.1:4222",
      how: "the server already running on 127.0.0.1:4222",
      stop: async () => {},
    };
  }
  const server = await findNatsServer({ own: true });
  return {
    url: server.url,
    how:
      server.source === "binary"
        ? "a private nats-server started for the demo"
        : "a private NATS container",
    stop: () => server.stop(),
  };
}
