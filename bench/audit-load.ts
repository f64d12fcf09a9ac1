/**
 * The audit load of `npm run bench:audit`, in a process of its own (as an auditor's would be):
 * session timelines, agent+outcome queries and stats over the index, in a loop, until killed.
 * Prints `running` once the first round is done.
 */
import { indexStats, openIndexPool, queryIndex, queryIndexAll } from "../src/indexer/index.js";
import { syntheticAgent, syntheticSession } from "../src/testing/synthetic-log.js";

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
  if (round % 10 === 0)
    await indexStats(pool, namespace, { since: new Date(Date.now() - 86_400_000) });
  if (round++ === 0) console.log("running");
}
