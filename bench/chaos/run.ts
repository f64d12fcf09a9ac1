/**
 * The chaos suite: every role its own process started through the CLI (2 coordinators that sign
 * what they append, 2 workers of a fail-closed policy, a sealer, and with `index` an indexer into
 * a PostgreSQL database of the run's own), a private nats-server, N sessions x M calls at a set
 * concurrency, and a schedule of faults at set points of progress: kill -9 of a worker, of the
 * indexer, of a coordinator, of the sealer, a cut of the indexer's PostgreSQL connections
 * (`pg_terminate_backend`), and kill -9 of the NATS server followed by its restart (killed roles
 * are restarted, as a supervisor would).
 *
 * Checks, from the log and the driver's own account: failed calls (an error, or an answer other
 * than the policy's own) by the phase they ended in; lost (answered, not recorded);
 * duplicates; wrong (answer differs from the record, or `rm` allowed); hung (answered or failed
 * more than 1 s past the deadline) and a watchdog (watchdog.ts) that fails the run as soon as a
 * call is still in flight 1 s past its deadline; per fault, the first clean answer (an allowed
 * `ls`: a fail-closed block is not a recovery) to a call sent after it; tamper evidence: after
 * the calls the sealer is given (bounded) time to seal the whole log, then `hookbus audit verify
 * --key PUB --coordinator-keys FILE --json` runs: verify_findings counts its findings plus the
 * records still unsealed (-1 if verify gave no report), crash_tail the records it named as a
 * killed coordinator's crash tail (docs/security.md, "Crash tails"); with `index`, every log
 * record must be in PostgreSQL exactly once and nothing else (index-check.ts).
 *
 * Every role's stdout and stderr go to `<name>.log` in a run folder (CHAOS_RUN_DIR, or a new one
 * under the temp dir), printed at the start and kept afterwards, so a failed run can be diagnosed.
 * The last line is machine-readable:
 *   chaos: calls=… failed=… failed_by_phase=start:…,worker:…,… lost=… duplicates=… wrong=… hung=…
 *          overdue=… verify_findings=… crash_tail=… clean_after_s=worker:…,… max_recovery_s=…
 * and on the cluster also roll_failed=… roll_p99_ms=… kill_election_s=… kill_first_clean_s=…,
 * with the index index_rows=…/… index_missing=… index_extra=… index_duplicates=…; the process
 * exits 1 when anything was lost, duplicated, wrong, hung or overdue, verify found anything, or
 * the index differs from the log.
 *
 *   CHAOS_SESSIONS=1000 CHAOS_CALLS=10 CHAOS_CONCURRENCY=48 npm run chaos
 *
 * Calls have a 15 s deadline (CHAOS_TIMEOUT_MS), longer than an election after a node's death;
 * CHAOS_INDEX=0 leaves the indexer and PostgreSQL out.
 *
 * CHAOS_CLUSTER=1 runs the same schedule on a three-node JetStream cluster on loopback (R3
 * streams and buckets); the NATS fault is then a kill -9 of the node leading the log stream,
 * restarted after 1 s (servers.ts). Before the schedule, a rolling restart (every node in turn:
 * step-downs, lame duck, SIGTERM, restart, rejoin) runs under load of its own: roll_failed counts
 * its calls that failed or got any answer but the policy's own, roll_p99_ms their latency. For
 * the kill -9, kill_election_s is the time until the log stream's new leader first answered an
 * append (probed every 50 ms, servers.ts) and kill_first_clean_s until the first clean answer to
 * a call sent after the kill (CHAOS_ROLL=0 skips the roll).
 */
import { appendFile, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { Bus, HookbusClient, isHookbusError } from "../../src/index.js";
import type { DecisionRecord } from "../../src/log/record.js";
import { createSealKey } from "../../src/log/seal/keys.js";
import { readSealLag } from "../../src/sealer/lag.js";
import { readLog } from "../../test/support/log.js";
import { startCli, type RoleProcess } from "../support/cli.js";
import { startChaosNats } from "./servers.js";
import { CallWatchdog } from "./watchdog.js";
import { startChaosIndex, type ChaosIndex, type IndexComparison } from "./index-check.js";
import { failedCall, percentile, startPhaseLoad } from "./phase-load.js";
import type { NodeRoll } from "../../test/support/nats-cluster-roll.js";
import { pino } from "pino";
import { startWithRetry } from "../../src/cli/start-retry.js";
import { RegistryStore } from "../../src/registry/store.js";

export interface ChaosOptions {
  sessions: number;
  callsPerSession: number;
  concurrency: number;
  timeoutMs: number;
  /** Faults, each at a fraction of the calls finished. */
  schedule: { at: number; fault: ChaosFault }[];
  /**
   * A three-node JetStream cluster instead of one server (R3 streams and buckets: the caller sets
   * HOOKBUS_REPLICAS=3 for this process; the roles get it in their environment).
   */
  cluster?: boolean;
  /**
   * On the cluster, before the schedule: a rolling restart of every node under load (its own
   * sessions, `rollConcurrency` at once, default 16). Default on with `cluster`.
   */
  roll?: boolean;
  rollConcurrency?: number;
  /** How long to wait after the calls for the sealer to seal the whole log (default 60 s). */
  sealWaitMs?: number;
  /** Where each role's output is kept (`<role>.log`); default a new folder under the temp dir. */
  runDir?: string;
  /**
   * An indexer writing the log into a PostgreSQL database of the run's own (found like the tests'
   * PostgreSQL), compared with the log at the end. Needed by the `indexer` and `pg-cut` faults.
   */
  index?: boolean;
  log?: (line: string) => void;
}

/**
 * kill -9 of a role (restarted as a supervisor would), of the NATS server (or the cluster's log
 * leader), or a cut of the indexer's PostgreSQL connections.
 */
export type ChaosFault = "worker" | "coordinator" | "sealer" | "indexer" | "nats" | "pg-cut";

export interface ChaosResult {
  /** Calls made: the planned sessions, and any run on until a late fault met a clean call. */
  calls: number;
  /**
   * Calls that failed (an error, or an answer other than the policy's own), by the phase they
   * ended in: `start` before the first fault, then each fault's name until the next one.
   */
  failedByPhase: Record<string, number>;
  /** The failed calls that were answered, by command, outcome and the decision's reason. */
  failedAnswers: Record<string, number>;
  answered: number;
  lost: number;
  duplicates: number;
  wrong: number;
  hung: number;
  /**
   * Verify's findings plus the records left unsealed; -1: verify gave no report. Verify runs
   * with the sealer's key and the coordinators' signing keys (the coordinators sign).
   */
  verifyFindings: number;
  /**
   * What verify reported: findings by kind, records checked against a seal, left unsealed, and
   * crash tails (records a killed coordinator stored but never signed: named, not findings).
   */
  verify: {
    findingKinds: Record<string, number>;
    records: number;
    sealed: number;
    unsealed: number;
    crashTailRecords: number;
    crashTails: string[];
  };
  /** Seconds after the last call until the log was sealed through its end (or the wait ran out). */
  sealWaitS: number;
  /** The largest of `recoveries`. */
  maxRecoveryS: number;
  errors: Record<string, number>;
  /**
   * Per fault but the PostgreSQL cut (off the call path), seconds from the fault (the kill) to the
   * first clean answer to a call sent after it: `ls` allowed, never a block (a fail-closed block
   * is not a recovery).
   */
  recoveries: { fault: string; seconds: number }[];
  /** Calls still unanswered a second past their deadline (the watchdog fails the run on one). */
  overdue: string[];
  /** The index comparison (`index`). */
  index?: IndexComparison;
  /** The rolling restart (cluster): calls made during it, failed ones, their p99, each node's time. */
  roll?: {
    calls: number;
    failed: number;
    p99Ms: number;
    errors: Record<string, number>;
    nodes: NodeRoll[];
  };
  /**
   * The kill -9 of the log leader's node (cluster), in seconds from the kill: until the log
   * stream's new leader first answered an append (servers.ts, probed every 50 ms), and until the
   * first clean answer to a call sent after it.
   */
  kill?: { electionS: number; firstCleanS: number };
  /** Roles that exited without being killed (`name:code`), each restarted as a supervisor would. */
  unexpectedExits: string[];
  /** Where the roles' logs are. */
  runDir: string;
}

const POLICY = fileURLToPath(new URL("./policy.ts", import.meta.url));
const COORDINATORS = ["coordinator-1", "coordinator-2"];
/** How long the sessions may go on past the planned ones for a late fault to meet a clean call. */
const TAIL_WAIT_MS = 30_000;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function runChaos(options: ChaosOptions): Promise<ChaosResult> {
  const log = options.log ?? (() => {});
  const server = await startChaosNats(options.cluster === true);
  const namespace = `chaos-${Date.now().toString(36)}`;
  const env = {
    NATS_URL: server.url,
    LOG_LEVEL: process.env.CHAOS_LOG_LEVEL ?? "info",
    HOOKBUS_REPLICAS: String(server.replicas),
  };
  const keyDir = await mkdtemp(join(tmpdir(), "hookbus-chaos-"));
  const sealKey = createSealKey();
  const keyFile = join(keyDir, "sealer.nk");
  await writeFile(keyFile, `${sealKey.seed}\n`, { mode: 0o600 });
  // Each coordinator signs what it appends with a key of its own (docs/security.md, "Signed
  // decisions"); the sealer and verify check every record against the trusted list.
  const coordinatorKeysFile = join(keyDir, "coordinator-signing-keys");
  const trusted: string[] = [];
  for (const name of COORDINATORS) {
    const key = createSealKey();
    await writeFile(join(keyDir, `${name}.sign.nk`), `${key.seed}\n`, { mode: 0o600 });
    trusted.push(`${key.publicKey} ${name}`);
  }
  await writeFile(coordinatorKeysFile, `${trusted.join("\n")}\n`, { mode: 0o600 });
  const runDir = options.runDir ?? (await mkdtemp(join(tmpdir(), "hookbus-chaos-run-")));
  await mkdir(runDir, { recursive: true });
  log(`chaos: run folder ${runDir} (one <role>.log per role, kept after the run)`);
  const roleLog = (name: string) => join(runDir, `${name}.log`);
  const roles = new Map<string, RoleProcess>();
  let stopWatchdog = () => {};
  // A role that exits by itself is restarted, as a supervisor would, and reported: the faults
  // are chaos's own kills, anything else is a finding of its own.
  const unexpectedExits: string[] = [];
  let shuttingDown = false;
  let index: ChaosIndex | undefined;
  const roleArgs = (name: string): string[] => {
    if (name.startsWith("coordinator")) {
      const signKey = join(keyDir, `${name}.sign.nk`);
      return ["coordinator", "--namespace", namespace, "--id", name, "--sign-key-file", signKey];
    }
    if (name.startsWith("sealer")) {
      return [
        ...["sealer", "--namespace", namespace, "--key-file", keyFile, "--id", name],
        ...["--coordinator-keys", coordinatorKeysFile],
      ];
    }
    if (name.startsWith("indexer")) {
      return ["indexer", "--namespace", namespace, "--index", index!.url];
    }
    return ["worker", POLICY, "--namespace", namespace, "--state", "memory"];
  };
  const startRole = (name: string) => {
    const args = roleArgs(name);
    const role = startCli(args, env, roleLog(name));
    roles.set(name, role);
    void role.exited.then(async (code) => {
      if (shuttingDown || role.child.signalCode === "SIGKILL" || roles.get(name) !== role) return;
      unexpectedExits.push(`${name}:${String(code)}`);
      log(`chaos: ${name} exited by itself (code ${String(code)}): restarting it`);
      await appendFile(roleLog(name), `--- ${new Date().toISOString()} restarted after its exit\n`);
      if (!shuttingDown && unexpectedExits.length <= 20) startRole(name);
    });
  };
  const nc: NatsConnection = await connect({
    servers: server.servers,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 100,
  });
  try {
    const registry = await RegistryStore.open(nc, (await Bus.open(nc, { namespace })).subjects);
    await registry.apply({
      policies: [
        {
          name: "chaos-guard",
          hooks: ["before_tool_call"],
          priority: 10,
          timeoutMs: 1000,
          failMode: "fail-closed",
        },
      ],
    });
    const roleNames = [...COORDINATORS, "worker-1", "worker-2", "sealer-1"];
    if (options.index === true) {
      index = await startChaosIndex();
      const migrate = startCli(
        ["indexer", "migrate", "--index", index.url],
        env,
        roleLog("migrate"),
      );
      if ((await migrate.exited) !== 0) {
        throw new Error(`chaos: hookbus indexer migrate failed:\n${migrate.output().slice(-2000)}`);
      }
    }
    for (const name of roleNames) startRole(name);
    const client = await HookbusClient.connect({ nc, namespace, timeoutMs: options.timeoutMs });
    const watchdog = new CallWatchdog(options.timeoutMs + 1000);
    stopWatchdog = () => watchdog.stop();
    // Ready when a call is decided by the policy (a worker and a coordinator are up).
    let lastError: unknown;
    for (let attempt = 0, until = Date.now() + 120_000; ; attempt++, await sleep(200)) {
      // A new call id each time: a retried id gets its recorded (blocked) decision back.
      const warm = `warm-${attempt}`;
      const ok = await client
        .call("before_tool_call", ctx(warm, "warm"), event(warm, "ls"), { callId: warm })
        .then(
          (r) => r.decision.outcome === "allow" || void (lastError = JSON.stringify(r.decision)),
          () => false,
        );
      if (ok) break;
      if (Date.now() > until) {
        const outputs = [...roles].map(([name, r]) => `--- ${name}\n${r.output().slice(-2000)}`);
        throw new Error(
          `chaos: the roles did not come up within 120 s (${String(lastError)})\n${outputs.join("\n")}`,
        );
      }
    }

    // The indexer reads the log a coordinator creates: started once a call was recorded, as a
    // deployment orders it (docs/operations.md, docker-compose).
    if (index !== undefined) startRole("indexer-1");

    /** Every node restarted in turn (servers.ts) while sessions of its own keep calling. */
    async function rollUnderLoad(): Promise<NonNullable<ChaosResult["roll"]>> {
      await mark("rolling restart starts");
      const load = startPhaseLoad(client, {
        concurrency: options.rollConcurrency ?? 16,
        prefix: "roll",
        watchdog,
      });
      const nodes = await Promise.race([
        server.roll!(nc, (line) => {
          log(`roll: ${line}`);
          void mark(`roll: ${line}`);
        }),
        watchdog.failed,
      ]);
      const calls = await load.stop();
      await mark("rolling restart done");
      const errors: Record<string, number> = {};
      for (const call of calls) {
        if (call.error !== undefined) errors[call.error] = (errors[call.error] ?? 0) + 1;
        if (call.decision !== undefined) {
          answers.set(call.callId, {
            outcome: call.decision.outcome,
            decision: call.decision,
            cmd: call.cmd,
          });
        }
      }
      return {
        calls: calls.length,
        failed: calls.filter(failedCall).length,
        p99Ms: percentile(
          calls.map((c) => c.at - c.sentAt),
          99,
        ),
        errors,
        nodes,
      };
    }

    const total = options.sessions * options.callsPerSession;
    const answers = new Map<string, { outcome: string; decision: unknown; cmd: string }>();
    const errors: Record<string, number> = {};
    const failedAnswers: Record<string, number> = {};
    const done: { at: number; sentAt: number; ok: boolean; clean: boolean; phase: string }[] = [];
    // The phase a call ends in (a call a fault fails ends after it): `start`, then the name of
    // the last fault injected.
    let phase = "start";
    const phases = ["start", ...options.schedule.map((s) => s.fault)];
    let hung = 0;
    let nextSession = 0;
    const faults: { fault: string; at: number; from: number; electedAt?: number }[] = [];
    const schedule = [...options.schedule].sort((a, b) => a.at - b.at);
    // Faults and NATS restarts, timestamped, for reading the role logs against.
    const mark = (line: string) =>
      appendFile(join(runDir, "faults.log"), `${new Date().toISOString()} ${line}\n`);
    const roll =
      options.cluster === true && options.roll !== false ? await rollUnderLoad() : undefined;

    const runSession = async (s: number) => {
      for (let c = 0; c < options.callsPerSession; c++) {
        const callId = `s${s}-c${c}`;
        const cmd = (s + c) % 7 === 0 ? "rm" : "ls";
        const sentAt = Date.now();
        try {
          const result = await watchdog.watch(callId, () =>
            client.call("before_tool_call", ctx(callId, `session-${s}`), event(callId, cmd), {
              callId,
            }),
          );
          answers.set(callId, { outcome: result.decision.outcome, decision: result.decision, cmd });
          // The policy's own answer; only an allowed `ls` proves it was asked (see recoveries).
          const ok = result.decision.outcome === (cmd === "rm" ? "block" : "allow");
          const clean = cmd === "ls" && ok;
          if (!ok) {
            // What a failed answer said (a fail-closed block names its cause): for the diagnosis.
            const key = `${cmd}: ${JSON.stringify(result.decision).slice(0, 240)}`;
            failedAnswers[key] = (failedAnswers[key] ?? 0) + 1;
          }
          done.push({ at: Date.now(), sentAt, ok, clean, phase });
        } catch (error) {
          const code = isHookbusError(error) ? error.code : "UNCODED";
          errors[code] = (errors[code] ?? 0) + 1;
          done.push({ at: Date.now(), sentAt, ok: false, clean: false, phase });
        }
        if (Date.now() - sentAt > options.timeoutMs + 1000) hung++;
      }
    };
    // A fault injected late (on a loaded machine the schedule's earlier faults take seconds while
    // calls go on) may have no call sent after it, and its recovery would read "never": the
    // sessions go on, bounded, until the schedule is done and every fault met a clean answer.
    let chaosDone = false;
    let tailUntil: number | undefined;
    const unrecovered = () =>
      faults.some((f) => f.fault !== "pg-cut" && !done.some((d) => d.clean && d.sentAt >= f.from));
    const pool = Array.from({ length: options.concurrency }, async () => {
      while (nextSession < options.sessions) await runSession(nextSession++);
      tailUntil ??= Date.now() + TAIL_WAIT_MS;
      while ((!chaosDone || unrecovered()) && Date.now() < tailUntil)
        await runSession(nextSession++);
    });
    const cuts: Promise<void>[] = [];
    const chaos = (async () => {
      for (const step of schedule) {
        while (done.length < step.at * total) await sleep(20);
        const at = Date.now();
        phase = step.fault;
        if (step.fault === "pg-cut") {
          // In the background: the cut may wait for the indexer to hold a connection, and the
          // faults after it must still meet calls.
          const progress = `${done.length}/${total}`;
          cuts.push(
            index!.cut(10_000).then(async (cut) => {
              log(`fault: cut ${cut} PostgreSQL connection(s) of the indexer at ${progress}`);
              await mark(`pg-cut: ${cut} connection(s) terminated`);
              faults.push({ fault: step.fault, at, from: Date.now() });
            }),
          );
        } else if (step.fault === "nats") {
          const progress = `${done.length}/${total}`;
          await mark(`nats kill -9 at ${progress}`);
          const { what, from, electedAt } = await server.fault(
            nc,
            { stream: `${namespace.toUpperCase()}_LOG`, probeSubject: `${namespace}.audit.probe` },
            1000,
          );
          log(`fault: kill -9 of ${what} at ${progress}, restarted after 1 s`);
          await mark(`${what} restarted`);
          faults.push({
            fault: "nats",
            at,
            from,
            ...(electedAt === undefined ? {} : { electedAt }),
          });
        } else {
          const name = `${step.fault}-1`;
          roles.get(name)?.child.kill("SIGKILL");
          await roles.get(name)?.exited;
          log(`fault: kill -9 ${name} at ${done.length}/${total}`);
          await appendFile(roleLog(name), `--- ${new Date().toISOString()} restarted by chaos\n`);
          faults.push({ fault: step.fault, at, from: at });
          startRole(name);
        }
      }
      chaosDone = true;
    })();
    await Promise.race([Promise.all([...pool, chaos]), watchdog.failed]);
    await Promise.all(cuts);
    watchdog.stop();

    const failedByPhase: Record<string, number> = {};
    for (const name of phases) failedByPhase[name] = 0;
    for (const d of done) if (!d.ok) failedByPhase[d.phase] = (failedByPhase[d.phase] ?? 0) + 1;

    // Recovery: from the fault (the kill, the cut; for NATS the kill too, not the restart) to
    // the first clean answer to a call sent after it.
    // A PostgreSQL cut is off the call path: its recovery is the index comparison's.
    const recoveries = faults
      .filter((f) => f.fault !== "pg-cut")
      .map((f) => {
        const first = done
          .filter((d) => d.clean && d.sentAt >= f.from)
          .sort((a, b) => a.at - b.at)[0];
        return {
          fault: f.fault,
          seconds: first === undefined ? Infinity : (first.at - f.from) / 1000,
        };
      });

    // The kill -9 on the cluster: election vs the first clean answer to a call sent after it.
    const killed = faults.find((f) => f.fault === "nats" && f.electedAt !== undefined);
    const firstClean = killed
      ? done.filter((d) => d.clean && d.sentAt >= killed.from).sort((a, b) => a.at - b.at)[0]
      : undefined;
    const kill =
      killed?.electedAt === undefined
        ? undefined
        : {
            electionS: (killed.electedAt - killed.from) / 1000,
            firstCleanS: firstClean === undefined ? Infinity : (firstClean.at - killed.from) / 1000,
          };

    // After a node's kill JetStream may not answer for a few seconds (leaders re-elected).
    const settle = { waitMs: 60_000, logger: pino({ level: "silent" }), what: "chaos read" };
    const reader = await startWithRetry(() => Bus.open(nc, { namespace }), settle);
    // Tamper evidence: wait (bounded) until the sealer has sealed the log through its end.
    const sealStart = Date.now();
    for (const until = sealStart + (options.sealWaitMs ?? 60_000); Date.now() < until;) {
      const lag = await readSealLag(reader).catch(() => undefined);
      if (lag !== undefined && lag.records === 0) break;
      await sleep(250);
    }
    const sealWaitS = (Date.now() - sealStart) / 1000;
    const records = (await startWithRetry(() => readLog(reader), settle)).filter(
      (r): r is DecisionRecord => r.kind === "decision",
    );
    const byCall = new Map<string, DecisionRecord[]>();
    for (const r of records) byCall.set(r.callId, [...(byCall.get(r.callId) ?? []), r]);
    let lost = 0;
    let duplicates = 0;
    let wrong = 0;
    for (const list of byCall.values()) if (list.length > 1) duplicates++;
    for (const [callId, answer] of answers) {
      const recorded = byCall.get(callId);
      if (recorded === undefined) lost++;
      else if (JSON.stringify(recorded[0]!.decision) !== JSON.stringify(answer.decision)) wrong++;
      else if (answer.cmd === "rm" && answer.outcome !== "block") wrong++;
    }
    const indexed =
      index === undefined ? undefined : await index.compare(reader, namespace, 60_000);
    const verify = await auditVerify(
      runDir,
      namespace,
      env,
      sealKey.publicKey,
      coordinatorKeysFile,
    );
    await client.close();
    return {
      calls: done.length,
      failedByPhase,
      failedAnswers,
      overdue: watchdog.overdue,
      ...(indexed === undefined ? {} : { index: indexed }),
      answered: answers.size,
      lost,
      duplicates,
      wrong,
      hung,
      verifyFindings: verify.findings,
      verify: verify.detail,
      sealWaitS,
      maxRecoveryS: Math.max(0, ...recoveries.map((r) => r.seconds)),
      errors,
      recoveries,
      ...(roll === undefined ? {} : { roll }),
      ...(kill === undefined ? {} : { kill }),
      unexpectedExits,
      runDir,
    };
  } finally {
    stopWatchdog();
    shuttingDown = true;
    for (const role of roles.values()) role.child.kill("SIGTERM");
    await Promise.all([...roles.values()].map((r) => r.exited));
    await nc.close();
    await server.stop();
    await index?.drop().catch(() => {});
    await rm(keyDir, { recursive: true, force: true });
  }
}

/**
 * `hookbus audit verify --key PUB --coordinator-keys FILE --json`: its findings (kept and omitted)
 * plus the records it found unsealed, by kind, and the crash tails it named; -1 when it printed
 * no report.
 */
async function auditVerify(
  runDir: string,
  namespace: string,
  env: Record<string, string>,
  publicKey: string,
  coordinatorKeysFile: string,
): Promise<{ findings: number; detail: ChaosResult["verify"] }> {
  const verify = startCli(
    [
      ...["audit", "verify", "--namespace", namespace, "--key", publicKey],
      ...["--coordinator-keys", coordinatorKeysFile, "--json"],
    ],
    env,
    join(runDir, "audit-verify.log"),
  );
  await verify.exited;
  const out = verify.output();
  const detail: ChaosResult["verify"] = {
    findingKinds: {},
    records: 0,
    sealed: 0,
    unsealed: 0,
    crashTailRecords: 0,
    crashTails: [],
  };
  try {
    const report = JSON.parse(out.slice(out.indexOf("{"))) as {
      records: number;
      sealed: number;
      unsealed: { records: number };
      findings: { kind: string }[];
      findingsOmitted: number;
      crashTails?: { coordinator: string; records: number; fromSeq: number; toSeq: number }[];
    };
    for (const f of report.findings) {
      detail.findingKinds[f.kind] = (detail.findingKinds[f.kind] ?? 0) + 1;
    }
    if (report.findingsOmitted > 0) detail.findingKinds.omitted = report.findingsOmitted;
    detail.records = report.records;
    detail.sealed = report.sealed;
    detail.unsealed = report.unsealed.records;
    for (const t of report.crashTails ?? []) {
      detail.crashTailRecords += t.records;
      detail.crashTails.push(`${t.coordinator}:${t.records}@${t.fromSeq}-${t.toSeq}`);
    }
    return {
      findings: report.findings.length + report.findingsOmitted + report.unsealed.records,
      detail,
    };
  } catch {
    return { findings: -1, detail };
  }
}

function ctx(id: string, sessionKey: string) {
  return { agentId: "chaos-agent", sessionKey, runId: "run-1", toolCallId: id };
}
function event(id: string, cmd: string) {
  return { toolName: "shell", toolCallId: id, params: { cmd } };
}

const byName = (values: Record<string, number>, digits = 0) =>
  Object.entries(values)
    .map(([name, value]) => `${name}:${value.toFixed(digits)}`)
    .join(",");

export function summaryLine(r: ChaosResult): string {
  const failed = Object.values(r.failedByPhase).reduce((a, b) => a + b, 0);
  const cleanAfter: Record<string, number> = {};
  for (const { fault, seconds } of r.recoveries) cleanAfter[fault] = seconds;
  return (
    `chaos: calls=${r.calls} failed=${failed} failed_by_phase=${byName(r.failedByPhase)}` +
    (r.roll === undefined ? "" : ` roll_failed=${r.roll.failed} roll_p99_ms=${r.roll.p99Ms}`) +
    ` lost=${r.lost} duplicates=${r.duplicates} wrong=${r.wrong} hung=${r.hung}` +
    ` overdue=${r.overdue.length} verify_findings=${r.verifyFindings}` +
    ` crash_tail=${r.verify.crashTailRecords}` +
    (r.verify.crashTails.length === 0 ? "" : `(${r.verify.crashTails.join(",")})`) +
    ` clean_after_s=${byName(cleanAfter, 2)} max_recovery_s=${r.maxRecoveryS.toFixed(2)}` +
    (r.kill === undefined
      ? ""
      : ` kill_election_s=${r.kill.electionS.toFixed(2)} kill_first_clean_s=${r.kill.firstCleanS.toFixed(2)}`) +
    (r.index === undefined
      ? ""
      : ` index_rows=${r.index.rows}/${r.index.logRecords} index_missing=${r.index.missing}` +
        ` index_extra=${r.index.extra} index_duplicates=${r.index.duplicates}`)
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  // On the cluster this process creates the registry bucket: R3 like the roles' streams.
  if (process.env.CHAOS_CLUSTER === "1") process.env.HOOKBUS_REPLICAS ??= "3";
  const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
  // The index comparison needs PostgreSQL (found like the tests'); CHAOS_INDEX=0 leaves it out.
  const withIndex = process.env.CHAOS_INDEX !== "0";
  const result = await runChaos({
    sessions: num("CHAOS_SESSIONS", 100),
    callsPerSession: num("CHAOS_CALLS", 10),
    concurrency: num("CHAOS_CONCURRENCY", 48),
    // Longer than an election after a node's death (4–9 s): such a call must not fail.
    timeoutMs: num("CHAOS_TIMEOUT_MS", 15_000),
    index: withIndex,
    ...(process.env.CHAOS_RUN_DIR === undefined ? {} : { runDir: process.env.CHAOS_RUN_DIR }),
    cluster: process.env.CHAOS_CLUSTER === "1",
    roll: process.env.CHAOS_ROLL !== "0",
    schedule: [
      { at: 0.2, fault: "worker" },
      ...(withIndex ? [{ at: 0.3, fault: "indexer" as const }] : []),
      { at: 0.45, fault: "coordinator" },
      ...(withIndex ? [{ at: 0.55, fault: "pg-cut" as const }] : []),
      { at: 0.6, fault: "sealer" },
      { at: 0.7, fault: "nats" },
    ],
    log: (line) => console.log(line),
  });
  console.log(`answered=${result.answered} errors=${JSON.stringify(result.errors)}`);
  console.log(`failed_answers=${JSON.stringify(result.failedAnswers)}`);
  console.log(`recoveries=${JSON.stringify(result.recoveries)}`);
  if (result.roll !== undefined) {
    const { nodes, ...roll } = result.roll;
    console.log(`roll=${JSON.stringify(roll)} nodes=${JSON.stringify(nodes)}`);
  }
  console.log(
    `unexpected_exits=${JSON.stringify(result.unexpectedExits)} role_logs=${result.runDir}`,
  );
  console.log(`verify=${JSON.stringify(result.verify)} seal_wait_s=${result.sealWaitS.toFixed(2)}`);
  if (result.index !== undefined) console.log(`index=${JSON.stringify(result.index)}`);
  console.log(summaryLine(result));
  const clean =
    result.lost + result.duplicates + result.wrong + result.hung + result.overdue.length === 0 &&
    result.verifyFindings === 0 &&
    (result.index === undefined ||
      result.index.missing + result.index.extra + result.index.duplicates === 0);
  if (!clean) process.exitCode = 1;
}
