/**
 * `hookbus replay`: re-decide recorded sessions with a candidate policy set (modules loaded in
 * process + a registry file) and report what would change, record by record.
 */
import { stat } from "node:fs/promises";
import { Bus } from "../../bus/bus.js";
import { HookbusError } from "../../foundation/errors.js";
import { parseAuditTime } from "../../audit/time.js";
import { indexUrlFrom } from "../../audit/pg/url.js";
import { openAuditSource } from "../../audit/source.js";
import type { LogEntry } from "../../log/reader.js";
import {
  countSelection,
  readExport,
  Replayer,
  ReplaySummarizer,
  type LogSelection,
  type ReplayEntry,
} from "../../replay/index.js";
import { loadPolicyModules } from "../../policy/load-policies.js";
import { commaList, parseCommand, type Command } from "../command.js";
import { connectNats } from "../../bus/connect.js";
import type { Output } from "../output.js";
import { readRegistryFile } from "./registry.js";
import { formatResultLine, formatSummary } from "../../replay/report.js";
import { Progress } from "../../replay/progress.js";

/** Whether a registry file names a policy that needs a module (any entry not of kind cedar). */
function namesWorkerPolicies(registry: unknown): boolean {
  const policies = (registry as { policies?: unknown } | null)?.policies;
  return (
    !Array.isArray(policies) || policies.some((p) => (p as { kind?: unknown })?.kind !== "cedar")
  );
}

const HELP = `usage: hookbus replay [--policies FILE[,FILE...]] --registry FILE SELECTION [options]

Re-evaluates recorded decisions with a candidate policy set, in process, with the same merge
engine as the coordinator, and reports every decision that would change.

candidate set:
  --policies FILES    policy modules (.ts or .js), comma-separated or repeated; every export
                      made by definePolicy is a policy; none needed for registry entries of
                      kind cedar, which are decided from their .cedar text (docs/cedar.md)
  --registry FILE     the candidate registry (as for \`hookbus registry apply\`): which policies
                      handle which hook, priority, failMode, mode (shadow). Timeouts are ignored.

selection (one of):
  --session ID        a recorded session (repeat for several); with --agent, only that agent's
  --agent ID          every session of an agent, optionally within --since/--until
  --from-file FILE    an export (NDJSON, one log entry per line, as \`hookbus audit query --json\`)
  --since TIME        stored at or after TIME: ISO-8601 (2026-05-01, 2026-05-01T10:00:00Z),
                      a duration ago (30m, 24h, 7d, 1w) or "now", as for \`hookbus audit\`
  --until TIME        stored at or before TIME
  --index URL         choose the records through the audit index (env HOOKBUS_INDEX_URL), then
                      read them from the log by sequence, instead of scanning the log

output:
  --json              one result per line (every record), then {"summary": ...}
  --verbose           also print unchanged records (text output)
  --fail-on-change    exit 1 when any decision changed (for CI); an empty selection is then
                      HOOKBUS_EMPTY_SELECTION (exit 1): a gate that checked nothing cannot pass
  --allow-empty       with --fail-on-change, accept an empty selection (exit 0)

exit codes: 0 done (and nothing changed, with --fail-on-change), 1 changed with
--fail-on-change or an error (coded), 2 usage`;

type ReplayValues = Parameters<typeof connectNats>[0] & {
  agent?: string | undefined;
  since?: string | undefined;
  until?: string | undefined;
  index?: string | undefined;
  namespace?: string | undefined;
};

/** What is wrong with the chosen selection flags (undefined: they choose one selection). */
function selectionProblem(
  values: ReplayValues,
  sessions: readonly string[],
  fromFile: string | undefined,
): string | undefined {
  const fromLog = sessions.length > 0 || values.agent !== undefined;
  if (
    fromFile !== undefined &&
    (fromLog || values.since !== undefined || values.until !== undefined)
  )
    return "--from-file replays the whole file: it takes no --session/--agent/--since/--until";
  if (fromFile === undefined && !fromLog)
    return "choose what to replay: --session, --agent or --from-file";
  return undefined;
}

/**
 * The selected records from the log, with progress. With the index, it chooses the records and
 * the log supplies them (no log scan). The connection and the pool close when the records end.
 */
async function* replayFromLog(
  values: ReplayValues,
  selection: LogSelection,
  progress: Progress,
): AsyncGenerator<LogEntry> {
  const nc = await connectNats({ ...values, name: "hookbus-replay" });
  let onClose: (() => Promise<void> | undefined) | undefined;
  try {
    const bus = await Bus.open(
      nc,
      values.namespace === undefined ? {} : { namespace: values.namespace },
    );
    const source = await openAuditSource({
      indexUrl: indexUrlFrom(values.index),
      bus,
      pool: { max: 2 },
      // Replay reads every selected record by design; the selection itself bounds it.
      maxScan: 0,
    });
    onClose = () => source.close();
    // The index gives no count up front; counting a log selection reads only stream info.
    const total =
      progress.enabled && source.kind === "log" ? await countSelection(bus, selection) : undefined;
    let read = 0;
    const selected = source.selection(selection);
    for await (const entry of selected) {
      read++;
      if (total !== undefined && total > 0) progress.setFraction(read / total);
      yield entry;
    }
  } finally {
    await onClose?.();
    await nc.drain();
  }
}

function usage(out: Output, problem: string): number {
  out.error(`${problem}\n\n${HELP}`);
  return 2;
}

const REPLAY_FLAGS = {
  policies: { type: "string", multiple: true },
  registry: { type: "string" },
  session: { type: "string", multiple: true },
  agent: { type: "string" },
  since: { type: "string" },
  until: { type: "string" },
  "from-file": { type: "string" },
  json: { type: "boolean" },
  verbose: { type: "boolean" },
  "fail-on-change": { type: "boolean" },
  "allow-empty": { type: "boolean" },
  index: { type: "string" },
} as const;

export const replayCommand: Command = {
  summary: "replay recorded sessions against a candidate policy set",
  async run(argv, out) {
    const { values, positionals } = parseCommand(argv, REPLAY_FLAGS);
    if (values.help === true) {
      out.print(HELP);
      return 0;
    }
    const policyPaths = commaList(values.policies);
    const sessions = commaList(values.session);
    const fromFile = values["from-file"];
    if (positionals.length > 0) return usage(out, `unexpected argument ${positionals[0]}`);
    // No --policies: a registry of Cedar policies only (a missing module is named by the replayer).
    if (values.registry === undefined) return usage(out, "--registry is required");
    const problem = selectionProblem(values, sessions, fromFile);
    if (problem !== undefined) return usage(out, problem);

    const selection: LogSelection = {
      ...(sessions.length === 0 ? {} : { sessions }),
      ...(values.agent === undefined ? {} : { agentId: values.agent }),
      ...(values.since === undefined ? {} : { since: parseAuditTime(values.since, "--since") }),
      ...(values.until === undefined ? {} : { until: parseAuditTime(values.until, "--until") }),
    };
    const registry = await readRegistryFile(values.registry);
    if (policyPaths.length === 0 && namesWorkerPolicies(registry))
      return usage(
        out,
        "--policies is required: the registry names policies other than Cedar sets",
      );
    const loaded = await loadPolicyModules(policyPaths);
    const replayer = new Replayer({ policies: loaded.map((l) => l.policy), registry });
    for (const name of replayer.unused) {
      const from = loaded.find((l) => l.policy.name === name)?.path ?? "?";
      out.error(`note: policy "${name}" (${from}) is not in the registry: unused`);
    }
    for (const warning of replayer.candidates.warnings) out.error(`warning: ${warning}`);

    const progress = new Progress(process.stderr);
    const summarizer = new ReplaySummarizer();
    const json = values.json === true;
    const report = async (records: AsyncIterable<ReplayEntry | LogEntry>) => {
      for await (const result of replayer.run(records)) {
        summarizer.add(result);
        progress.tick(result.status === "changed");
        if (json) out.print(JSON.stringify(result));
        else if (result.status === "changed" || values.verbose === true) {
          progress.done();
          out.print(formatResultLine(result));
        }
      }
    };

    if (fromFile !== undefined) {
      const size = (await stat(fromFile).catch(() => undefined))?.size;
      await report(
        readExport(fromFile, {
          onProgress: (read, total) => progress.setFraction(total > 0 ? read / total : 1),
        }),
      );
      if (size === 0) out.error(`note: ${fromFile} is empty`);
    } else {
      await report(replayFromLog(values, selection, progress));
    }
    progress.done();

    const summary = summarizer.summary;
    if (json) out.print(JSON.stringify({ summary, stats: replayer.stats }));
    else {
      if (summary.changed > 0 || values.verbose === true) out.print("");
      out.print(formatSummary(summary, replayer.stats));
    }
    if (
      values["fail-on-change"] === true &&
      replayer.stats.decisions === 0 &&
      values["allow-empty"] !== true
    ) {
      throw new HookbusError(
        "HOOKBUS_EMPTY_SELECTION",
        "the selection holds no decision records, so --fail-on-change checked nothing: check the selection and --namespace, or pass --allow-empty",
      );
    }
    return values["fail-on-change"] === true && summary.changed > 0 ? 1 : 0;
  },
};
