/**
 * `npm run demo`: hookbus end to end on one machine, in about ten seconds.
 *   1. finds NATS (NATS_URL, or a server on 127.0.0.1:4222, or starts a private nats-server);
 *   2. applies the example registry, starts two coordinators and two workers of each example policy;
 *   3. runs the scripted agent's session, printing each decision as it happens;
 *   4. prints the session's audit timeline from the log;
 *   5. replays the session against a stricter policy set and prints the diff;
 *   6. when PostgreSQL is reachable, indexes the log into a database of its own and queries the
 *      index (else says how to enable that);
 * then stops everything it started, deletes its namespace's streams and buckets, and exits 0.
 * `npm run demo -- --keep` keeps everything running after step 5 and prints commands to look
 * around with, until Ctrl-C (then it cleans up the same way).
 */
import "./runtime-check.js";
import { existsSync, realpathSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { pino } from "pino";
import { formatTimeline, sessionTimeline } from "../src/audit/index.js";
import { verifyLog } from "../src/audit/verify.js";
import { createSealKey, sealKeyFromSeed } from "../src/log/seal/keys.js";
import { startSealer, type Sealer } from "../src/sealer/sealer.js";
import { connectionOptions } from "../src/bus/connect.js";
import { Bus, HookbusClient, definePolicy, runPolicy, type PolicyRunner } from "../src/index.js";
import { readSelection, replay, summarizeReplay } from "../src/replay/index.js";
import { sleep } from "../src/foundation/time.js";
import { deleteNamespace } from "./demo/cleanup.js";
import { showIndexedQuery, type DemoIndex } from "./demo/indexed-query.js";
import { findDemoNats } from "./demo/find-nats.js";
import { examplePolicies } from "./policies/index.js";
import { runScriptedSession } from "./scripted-agent/session.js";
import { formatStep } from "./scripted-agent/format.js";
import { RegistryStore } from "../src/registry/store.js";
import { Subjects } from "../src/bus/subjects.js";
import { startCoordinator, type Coordinator } from "../src/coordinator/coordinator.js";
import { formatResultLine, formatSummary } from "../src/replay/report.js";

/** The demo's own namespace: deleted when the demo ends, so nothing is left on the server. */
const NAMESPACE = "hookbus-demo";
const keep = process.argv.includes("--keep");
/**
 * The CLI as the user can run it from here: the built package, else the sources; on the Node that
 * scripts/setup.sh put in .tools/bin when this demo runs on it (another terminal's PATH lacks it).
 */
const toolsDir = fileURLToPath(new URL("../.tools", import.meta.url));
const onToolsNode =
  existsSync(toolsDir) &&
  realpathSync(process.execPath).startsWith(`${realpathSync.native(toolsDir)}/`);
const cli =
  (onToolsNode ? 'PATH="$PWD/.tools/bin:$PATH" ' : "") +
  (existsSync(fileURLToPath(new URL("../dist/cli/main.js", import.meta.url)))
    ? "npx hookbus"
    : "npm run hookbus --");
const registryFile = fileURLToPath(new URL("./policies/registry.example.json", import.meta.url));

/** The stricter candidate set: a policy that forbids web access altogether. */
const noWeb = definePolicy({
  name: "no-web",
  version: "1.0.0",
  hooks: {
    before_tool_call: (event) =>
      event.toolName === "web_fetch"
        ? { block: true, blockReason: "web access is not allowed" }
        : undefined,
  },
});

async function main(): Promise<void> {
  const nats = await findDemoNats();
  console.log(`NATS: ${nats.url} (${nats.how})`);
  const open = async (name: string): Promise<NatsConnection> =>
    connect({ ...connectionOptions({ server: nats.url }), name, maxReconnectAttempts: 3 });
  const connections: NatsConnection[] = [];
  const coordinators: Coordinator[] = [];
  const runners: PolicyRunner[] = [];
  const sealers: Sealer[] = [];
  let index: DemoIndex | undefined;
  // A fresh signing key for the demo's seals; a deployment keeps its key (hookbus sealer keygen).
  const sealKey = createSealKey();
  const logger = pino({ level: process.env.LOG_LEVEL ?? "silent" });
  try {
    const admin = await open("demo-admin");
    connections.push(admin);
    const registryDoc = JSON.parse(await readFile(registryFile, "utf8")) as { policies: object[] };
    const registry = await RegistryStore.open(admin, new Subjects(NAMESPACE));

    for (const id of ["coordinator-1", "coordinator-2"]) {
      const nc = await open(id);
      connections.push(nc);
      coordinators.push(await startCoordinator({ nc, namespace: NAMESPACE, id, logger }));
    }
    const sealerNc = await open("sealer-1");
    connections.push(sealerNc);
    sealers.push(
      await startSealer({
        nc: sealerNc,
        namespace: NAMESPACE,
        id: "sealer-1",
        key: sealKeyFromSeed(sealKey.seed),
        logger,
      }),
    );
    const applied = await registry.apply(registryDoc, "services/policies/registry.example.json");
    console.log(
      `registry: ${applied.document.policies.length} policies, revision ${applied.revision}`,
    );
    for (const n of [1, 2]) {
      const nc = await open(`workers-${n}`);
      connections.push(nc);
      runners.push(await runPolicy(examplePolicies, { nc, namespace: NAMESPACE, logger }));
    }
    console.log(
      `workers: 2 × ${examplePolicies.map((p) => p.name).join(", ")}; coordinators: 2; sealer: 1\n`,
    );

    const agentNc = await open("scripted-agent");
    connections.push(agentNc);
    const client = await HookbusClient.connect({ nc: agentNc, namespace: NAMESPACE });
    const until = Date.now() + 5000;
    while ((client.registryRevision ?? 0) < applied.revision && Date.now() < until) await sleep(20);
    while (coordinators.some((c) => c.registry().revision < applied.revision) && Date.now() < until)
      await sleep(20);

    const sessionKey = `demo-${new Date().toISOString().replace(/[:.]/g, "-")}`;
    console.log(`— the session (${sessionKey}) —`);
    console.log(
      `${"hook".padEnd(22)} ${"outcome".padEnd(8)} ${"latency".padStart(9)}  decided by / reason`,
    );
    await runScriptedSession(client, {
      agentId: "demo-agent",
      sessionKey,
      onStep: (s) => console.log(formatStep(s)),
    });
    await client.close();

    const bus = await Bus.open(admin, { namespace: NAMESPACE });
    console.log(`\n— the audit timeline, read back from the log —`);
    const timeline = await sessionTimeline(bus, sessionKey, { agentId: "demo-agent" });
    for (const line of formatTimeline(sessionKey, timeline)) console.log(line);

    // The sealer works after the fact, off the decision path: wait (bounded) until it caught up.
    const last = (await bus.jsm.streams.info(bus.subjects.logStream)).state.last_seq;
    const sealedBy = Date.now() + 10_000;
    while (sealers[0]!.lag().sealedSeq < last && Date.now() < sealedBy) await sleep(20);
    const verified = await verifyLog(bus, { keys: [sealKey.publicKey] });
    console.log(
      `\n— tamper evidence: ${verified.sealed} of ${verified.records} records sealed in ` +
        `${verified.batches} signed batches; audit verify: ${verified.ok ? "intact" : "FINDINGS"} —`,
    );

    console.log(`\n— replay against a stricter policy set: the examples plus "no-web" —`);
    const stricter = {
      ...registryDoc,
      policies: [
        ...registryDoc.policies,
        { name: "no-web", hooks: ["before_tool_call"], priority: 200, failMode: "fail-closed" },
      ],
    };
    const results = [];
    for await (const result of replay({
      records: readSelection(bus, { sessions: [sessionKey] }),
      policies: [...examplePolicies, noWeb],
      registry: stricter,
    })) {
      results.push(result);
      if (result.status === "changed" || result.counterfactual)
        console.log(formatResultLine(result));
    }
    console.log(formatSummary(summarizeReplay(results)));

    console.log(`\n— the audit index: the log projected into PostgreSQL —`);
    index = await showIndexedQuery(bus, "demo-agent", sessionKey);
    if (keep) await lookAround(nats.url, sessionKey, sealKey.publicKey, index?.url);
    else console.log(`\nto keep the services running and look around: npm run demo -- --keep`);
  } finally {
    await index
      ?.close()
      .catch((error: unknown) =>
        console.error(`could not drop the demo's index: ${String(error)}`),
      );
    for (const sealer of sealers) await sealer.stop();
    for (const runner of runners) await runner.stop();
    for (const coordinator of coordinators) await coordinator.stop();
    const admin = connections[0];
    if (admin !== undefined && !admin.isClosed()) {
      const deleted = await deleteNamespace(admin, NAMESPACE).catch(() => []);
      if (deleted.length > 0) console.log(`removed namespace ${NAMESPACE}: ${deleted.join(", ")}`);
    }
    for (const nc of connections) await nc.drain().catch(() => {});
    await nats.stop();
  }
}

/** --keep: print commands that work as printed, then wait for Ctrl-C (or SIGTERM). */
async function lookAround(
  url: string,
  sessionKey: string,
  sealPublicKey: string,
  indexUrl: string | undefined,
): Promise<void> {
  const flags = `--namespace ${NAMESPACE} --server ${url}`;
  console.log(`\nthe services keep running; in another terminal, in this directory:`);
  console.log(`  ${cli} audit session ${sessionKey} ${flags}`);
  console.log(`  ${cli} audit query --agent demo-agent ${flags}`);
  console.log(`  ${cli} registry show ${flags}`);
  console.log(`  ${cli} audit verify --key ${sealPublicKey} ${flags}`);
  console.log(`  ${cli} status ${flags}`);
  if (indexUrl !== undefined) {
    console.log(`  ${cli} audit query --index ${indexUrl} --agent demo-agent ${flags}`);
    console.log(
      `  ${cli} ui --index ${indexUrl} ${flags}   # the audit UI: prints the address to open`,
    );
  } else {
    console.log(
      `  (the audit UI, ${cli} ui, reads the PostgreSQL index: start PostgreSQL or set HOOKBUS_INDEX_URL and run the demo again)`,
    );
  }
  console.log(
    `Ctrl-C stops them and removes namespace ${NAMESPACE}` +
      (indexUrl === undefined ? "." : " and the demo's index database."),
  );
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
}

await main();
