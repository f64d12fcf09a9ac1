/**
 * The audit load of `npm run bench:audit`, in a process of its own (as an auditor's would be):
 * one client with no think time, back to back: a session timeline, an agent+outcome query over
 * the last hour, and every 10th round what the UI's search page asks for its charts (records per
 * minute and stats over the last hour) and `audit stats` over a day; until killed. That is more
 * than a person clicking (a page every few seconds) and the UI polling: a worst case for one
 * auditor. Prints `running` once the first round is done.
 */
import { indexStats, openIndexPool, queryIndex, queryIndexAll } from "../src/indexer/index.js";
import { countsPerMinute } from "../src/audit/pg/query.js";
import { syntheticAgent, syntheticSession } from "../test/support/synthetic-log.js";

const url = process.env.BENCH_INDEX_URL!;
const namespace = process.env.BENCH_NAMESPACE!;
const sessions = Number(process.env.BENCH_SESSIONS);
const pool = openIndexPool(url, { max: 2 });
let round = 0;
for (;;) {
  const s = Math.floor(Math.random() * sessions);
  for await (const _ of queryIndexAll(pool, namespace, { sessionKey: syntheticSession(s) }));
  await queryIndex(pool, namespace, {
    agentId: syntheticAgent(s % 20),
    outcome: "block",
    since: new Date(Date.now() - 3_600_000),
    limit: 100,
  });
  if (round % 10 === 0) {
    const hour = { since: new Date(Date.now() - 3_600_000), until: new Date() };
    await Promise.all([countsPerMinute(pool, namespace, hour), indexStats(pool, namespace, hour)]);
    await indexStats(pool, namespace, { since: new Date(Date.now() - 86_400_000) });
  }
  if (round++ === 0) console.log("running");
}
