/**
 * `hookbus indexer` started before any coordinator has created the log (a fresh deployment whose
 * supervisor starts every role at once) waits for it instead of exiting 1, then indexes what
 * arrives; a missing database still exits at once, saying how to create it.
 */
import { describe, expect, it } from "vitest";
import { Bus } from "../../../src/bus/bus.js";
import { publishSyntheticLog } from "../../support/synthetic-log.js";
import { startChild } from "../../support/child.js";
import { uniqueNamespace, useNatsServer } from "../../support/nats.js";
import { usePostgres } from "../../support/postgres.js";
import { until } from "../../support/wait.js";

const nats = useNatsServer();
const postgres = usePostgres();

describe("hookbus indexer's start", () => {
  it("waits for a log no coordinator has created yet, then indexes it", async () => {
    const namespace = uniqueNamespace("idxwait");
    const { url: indexUrl, pool } = await postgres.database();
    const child = startChild(["--import", "tsx", "services/indexer.ts", "--batch", "10"], {
      NATS_URL: nats.url(),
      HOOKBUS_NAMESPACE: namespace,
      HOOKBUS_INDEX_URL: indexUrl,
      LOG_LEVEL: "info",
    });
    try {
      // It tried, found no log, and is still running: retrying, not exited.
      await until(
        () => child.output().includes("indexer start: JetStream did not answer, retrying"),
        30_000,
        "a retried start in the log",
      );
      expect(child.child.exitCode).toBeNull();
      const bus = await Bus.open(await nats.connect(), { namespace });
      await publishSyntheticLog(bus, { records: 40, sessions: 4, agents: 1 });
      await until(
        async () => {
          const r = await pool.query<{ n: string }>(
            "SELECT count(*) AS n FROM hookbus_records WHERE ns = $1",
            [namespace],
          );
          return r.rows[0]?.n === "40";
        },
        60_000,
        "the 40 records indexed",
      );
    } finally {
      child.child.kill("SIGTERM");
      await child.exited;
    }
  });

  it("exits at once on a database that does not exist, saying how to create it", async () => {
    const { url } = await postgres.database();
    const missing = url.replace(/\/[^/]+$/, "/hookbus_no_such_db");
    const child = startChild(["--import", "tsx", "services/indexer.ts"], {
      NATS_URL: nats.url(),
      HOOKBUS_NAMESPACE: uniqueNamespace("idxmissing"),
      HOOKBUS_INDEX_URL: missing,
    });
    const code = await child.exited;
    expect(code).toBe(1);
    expect(child.output() + child.errors()).toContain("does not exist");
  });
});
