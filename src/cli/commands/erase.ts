/**
 * `hookbus erase --session KEY | --subject ID --reason TEXT`: erase a data subject by deleting its
 * data key (docs/privacy.md). Run as the privacy user (`hookbus auth`), the only role that may
 * delete data keys. With `--index` (or HOOKBUS_INDEX_URL) the index rows are scrubbed too.
 */
import { userInfo } from "node:os";
import { HookbusError } from "../../foundation/errors.js";
import { Bus } from "../../bus/bus.js";
import { connectNats } from "../../bus/connect.js";
import { openIndexPool } from "../../audit/pg/pool.js";
import { signingKeyFromFile } from "../../log/sign/keys.js";
import {
  eraseSubject,
  type EraseOptions,
  type EraseRequest,
  type Erasure,
} from "../../erasure/erase.js";
import {
  DEFAULT_MAX_ERASURES,
  runRetention,
  startRetentionSchedule,
  type RetentionRun,
} from "../../erasure/retention.js";
import { parseDuration } from "../../audit/time.js";
import { parseCommand, type Command } from "../command.js";

const HELP = `usage: hookbus erase --session KEY --reason TEXT [--index URL] [--sign-key-file FILE] [--by NAME] [--json]
       hookbus erase --subject ID --reason TEXT [...]
       hookbus erase --retention [--dry-run] [--max N] [--every DURATION] [--index URL] [--sign-key-file FILE] [--json]

Erase what the log holds of a data subject: the records sealed under a session (--session, the
default subject of a call) or under a user id an agent named in the call context (--subject).
Deletes the subject's data key (securely, from the keys bucket), scrubs the index rows of its
records to their clear fields (with --index), and appends an erasure record to the log: who,
what, when and why. The log's records stay as they are: \`hookbus audit verify\` still passes,
and their personal fields read "[erased]". See docs/privacy.md.

--retention erases every data key older than the registry's \`retention\` rule for it, each
with its own erasure record (by retention:<rule>); run it on a schedule (cron, a systemd timer).

options:
  --reason TEXT          why (required, up to 1000 characters), recorded in the log
  --index URL            the index to scrub (env HOOKBUS_INDEX_URL)
  --sign-key-file FILE   the privacy user's signing key (env HOOKBUS_SIGN_KEY_FILE), so the
                         erasure record verifies under the trusted keys
  --by NAME              who erases (default: the NATS user, else the operating-system user)
  --json                 the erasure record (with --retention: the run) as JSON
  --dry-run              with --retention: list the expired keys, erase nothing
  --max N                with --retention: erase at most N keys this run (default ${DEFAULT_MAX_ERASURES})
  --every DURATION       with --retention: keep running, a run now and every DURATION (1s to 7d,
                         e.g. 1h) until SIGTERM/SIGINT; a failed run is reported and retried`;

/** `--max`: a whole number of erasures, 1 to 1,000,000. */
function maxOf(text: string | undefined): number {
  if (text === undefined) return DEFAULT_MAX_ERASURES;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > 1_000_000)
    throw new HookbusError("HOOKBUS_USAGE", "--max takes a whole number from 1 to 1000000");
  return n;
}

function retentionSummary(run: RetentionRun, dryRun: boolean): string {
  const lines = run.expired.map(
    (e) =>
      `${dryRun ? "would erase" : "erased"} subject ${e.subject.slice(0, 12)}… (rule ${e.rule}: ${e.days} days; key made ${e.madeAt})`,
  );
  lines.push(
    `retention: ${run.keys} keys, ${run.expired.length} ${dryRun ? "expired" : "erased"}` +
      (run.deferred > 0 ? `, ${run.deferred} left for the next run (--max)` : ""),
  );
  return lines.join("\n");
}

/** `--every`: retention runs until a signal; each run's summary (or failure) is printed. */
async function retentionEvery(
  every: string,
  options: EraseOptions & { maxErasures: number },
  out: Parameters<Command["run"]>[1],
): Promise<void> {
  const everyMs = parseDuration(every);
  if (everyMs === undefined)
    throw new HookbusError("HOOKBUS_USAGE", `--every takes a duration such as 1h, not "${every}"`);
  let stop: () => void = () => {};
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  const schedule = startRetentionSchedule({
    ...options,
    everyMs,
    onRun: (run) => out.print(retentionSummary(run, false)),
    onError: (error) => out.error(`retention run failed: ${(error as Error).message}`),
  });
  try {
    await stopped;
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
    await schedule.stop();
  }
}

/** One line (or the JSON) of an erasure, and of each session erased with a subject. */
function erasureSummary({ record, seq, sessions }: Erasure, json: boolean): string {
  if (json) return JSON.stringify({ seq, ...record, sessions: sessions?.map((s) => s.seq) });
  const sessionsNote =
    sessions === undefined ? "" : `; ${sessions.length} of its sessions erased with it`;
  return (
    `erased ${record.target} (subject ${record.subject.slice(0, 12)}…): key ${record.keyPurged ? "deleted" : "already gone"}` +
    (record.rowsScrubbed === undefined ? "" : `, ${record.rowsScrubbed} index rows scrubbed`) +
    `; erasure record at log seq ${seq}${sessionsNote}`
  );
}

function requestOf(values: {
  session?: string | undefined;
  subject?: string | undefined;
  reason?: string | undefined;
  by?: string | undefined;
}): EraseRequest {
  const named = [values.session, values.subject].filter((v) => v !== undefined);
  if (named.length !== 1 || values.reason === undefined)
    throw new HookbusError(
      "HOOKBUS_USAGE",
      "hookbus erase takes one of --session KEY or --subject ID, and --reason TEXT (hookbus erase --help)",
    );
  return {
    target: values.session === undefined ? "subject" : "session",
    id: (values.session ?? values.subject)!,
    reason: values.reason,
    by: values.by ?? process.env.HOOKBUS_USER ?? userInfo().username,
  };
}

export const eraseCommand: Command = {
  summary: "erase a session's or a user's personal data from the log (crypto-shredding)",
  async run(argv, out) {
    const { values } = parseCommand(argv, {
      session: { type: "string" },
      subject: { type: "string" },
      reason: { type: "string" },
      index: { type: "string" },
      "sign-key-file": { type: "string" },
      by: { type: "string" },
      json: { type: "boolean" },
      retention: { type: "boolean" },
      "dry-run": { type: "boolean" },
      max: { type: "string" },
      every: { type: "string" },
    });
    if (values.help === true) {
      out.print(HELP);
      return 0;
    }
    const retention = values.retention === true;
    if (retention && (values.session !== undefined || values.subject !== undefined))
      throw new HookbusError(
        "HOOKBUS_USAGE",
        "--retention erases by rule: name no --session or --subject",
      );
    const request = retention ? undefined : requestOf(values);
    const max = maxOf(values.max);
    const keyFile = values["sign-key-file"] ?? process.env.HOOKBUS_SIGN_KEY_FILE;
    const signingKey =
      keyFile === undefined || keyFile === "" ? undefined : signingKeyFromFile(keyFile);
    const indexUrl = values.index ?? process.env.HOOKBUS_INDEX_URL;
    const index = indexUrl === undefined || indexUrl === "" ? undefined : openIndexPool(indexUrl);
    const nc = await connectNats(values);
    try {
      const bus = await Bus.open(
        nc,
        values.namespace === undefined ? {} : { namespace: values.namespace },
      );
      const options: EraseOptions = {
        bus,
        ...(index === undefined ? {} : { index }),
        ...(signingKey === undefined ? {} : { signingKey }),
      };
      if (values.every !== undefined && (request !== undefined || values["dry-run"] === true))
        throw new HookbusError(
          "HOOKBUS_USAGE",
          "--every repeats a --retention run (without --dry-run)",
        );
      if (request === undefined && values.every !== undefined) {
        await retentionEvery(values.every, { ...options, maxErasures: max }, out);
        return 0;
      }
      if (request === undefined) {
        const dryRun = values["dry-run"] === true;
        const run = await runRetention({ ...options, maxErasures: max, dryRun });
        out.print(values.json === true ? JSON.stringify(run) : retentionSummary(run, dryRun));
        return 0;
      }
      const erasure = await eraseSubject(request, options);
      out.print(erasureSummary(erasure, values.json === true));
      if (request.target === "subject" && index === undefined)
        out.error(
          "without --index the sessions of the subject are not known: their session state stays readable (erase them by --session; docs/privacy.md)",
        );
      return 0;
    } finally {
      await nc.drain();
      await index?.end();
    }
  },
};
