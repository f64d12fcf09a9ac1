/** `hookbus audit verify [--session S] [--agent A] [--key PUB] [--anchor FILE] [--json]`: check the log against its seals. */
import { readAnchor } from "../../audit/anchor.js";
import { resolveAnchorPath } from "../../audit/anchor-schedule.js";
import { formatVerifyReport, verifyLog } from "../../audit/verify.js";
import { Bus } from "../../bus/bus.js";
import { Subjects } from "../../bus/subjects.js";
import { HookbusError } from "../../foundation/errors.js";
import { parsePublicKeys } from "../../log/seal/keys.js";
import { parseCommand, type Command } from "../command.js";
import { parseTrustedKeys } from "../../log/sign/keys.js";
import { connectNats } from "../../bus/connect.js";
import { parseDuration } from "../../audit/time.js";

function sealDelayFlag(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = parseDuration(value);
  if (ms === undefined || ms < 1000)
    throw new HookbusError(
      "HOOKBUS_INVALID_ARGUMENT",
      `--max-seal-delay ${JSON.stringify(value)}: a duration of at least 1s, such as 50s or 5m`,
      { argument: "--max-seal-delay" },
    );
  return ms;
}

const HELP = `usage: hookbus audit verify [--session S] [--agent A] [--key PUB] [--anchor FILE] [--json] [--verbose] [--allow-empty]

Check every record of the log against the sealer's signed seal batches (stream <NS>_SEALS) and
report each record that was altered, removed, inserted or moved to another subject, naming its
sequence, and each seal batch that is forged or missing. Records newer than the last seal are
reported as unsealed, not as tampering. Exits 0 when nothing is wrong, 1 when anything is, 2 on
a usage error.

--session S    only the sessions with this session key
--agent A      only this agent's sessions
--key PUB      a trusted sealer public key (nkey; repeat or comma-separate for several;
               env HOOKBUS_SEAL_PUBLIC_KEYS). Without one, signatures are only self-consistent.
--anchor FILE  an anchor written by \`hookbus audit anchor\`: prove the seals still extend it
               (a directory of \`audit anchor --every\` files: its newest)
--max-seal-delay DURATION
               a record unsealed longer than this is a "stalled" finding: sealed that long
               after it was stored, or still unsealed that long now (default 50s: 10× the
               sealer's lease; records of the first seal batch are exempt)
--coordinator-keys FILE
               the trusted coordinator signing keys (\`hookbus auth\` writes
               <keys>/coordinator-signing-keys; env HOOKBUS_COORDINATOR_KEYS_FILE): every record
               must then be signed by one of them (findings unsigned-record, bad-signature,
               untrusted-key, signed-record-missing, signed-twice; docs/security.md). Records
               a killed coordinator stored but never signed are named as its crash tail, not
               findings (docs/security.md, "Crash tails")
--crash-window MS
               how long after a killed coordinator run's last signature batch its unsigned
               records count as its crash tail (default 10000: two heartbeats); 0: none do,
               every unsigned record is a finding
--coordinator-key PUB
               a trusted coordinator public key (repeat or comma-separate; env
               HOOKBUS_COORDINATOR_PUBLIC_KEYS)
--signature-grace MS
               how long a record may wait for its signature batch (default 60000); newer
               records without one are reported as pending, not as findings
--json         the whole report as one JSON document
--verbose      list the unsealed records too
--allow-empty  exit 0 when nothing matched (default: HOOKBUS_EMPTY_SELECTION, exit 1, since
               checking nothing proves nothing)`;

export const auditVerifyCommand: Command = {
  summary: "check the log against its signed seals (exit 1 if anything was tampered with)",
  async run(argv, out) {
    const { values, positionals } = parseCommand(argv, {
      session: { type: "string" },
      agent: { type: "string" },
      key: { type: "string", multiple: true },
      anchor: { type: "string" },
      "max-seal-delay": { type: "string" },
      json: { type: "boolean" },
      verbose: { type: "boolean", short: "v" },
      "allow-empty": { type: "boolean" },
      "coordinator-keys": { type: "string" },
      "coordinator-key": { type: "string", multiple: true },
      "signature-grace": { type: "string" },
      "crash-window": { type: "string" },
    });
    if (values.help === true) {
      out.print(HELP);
      return 0;
    }
    if (positionals.length > 0) {
      out.error(HELP);
      return 2;
    }
    const keys = parsePublicKeys(values.key ?? [process.env.HOOKBUS_SEAL_PUBLIC_KEYS ?? ""]);
    const coordinatorKeys = parseTrustedKeys(
      values["coordinator-key"] ?? [process.env.HOOKBUS_COORDINATOR_PUBLIC_KEYS ?? ""],
      values["coordinator-keys"] ?? process.env.HOOKBUS_COORDINATOR_KEYS_FILE,
    );
    const signatureGraceMs = msFlag(values["signature-grace"], "signature-grace");
    const crashWindowMs = msFlag(values["crash-window"], "crash-window");
    // A bad namespace, key or anchor is reported before connecting.
    const subjects = new Subjects(values.namespace);
    const anchor =
      values.anchor === undefined
        ? undefined
        : readAnchor(resolveAnchorPath(values.anchor), keys, subjects.namespace);
    const maxSealDelayMs = sealDelayFlag(values["max-seal-delay"]);
    const nc = await connectNats({ ...values, name: "hookbus-audit-verify" });
    try {
      const bus = await Bus.open(nc, { namespace: subjects.namespace });
      const report = await verifyLog(bus, {
        keys,
        coordinatorKeys,
        ...(signatureGraceMs === undefined ? {} : { signatureGraceMs }),
        ...(crashWindowMs === undefined ? {} : { crashWindowMs }),
        ...(values.agent === undefined ? {} : { agentId: values.agent }),
        ...(values.session === undefined ? {} : { sessionKey: values.session }),
        ...(anchor === undefined ? {} : { anchor: { batch: anchor.batch, hash: anchor.hash } }),
        ...(maxSealDelayMs === undefined ? {} : { maxSealDelayMs }),
      });
      out.print(
        values.json === true
          ? JSON.stringify(report)
          : formatVerifyReport(report, { verbose: values.verbose === true }),
      );
      if (report.records === 0 && report.findings.length === 0 && values["allow-empty"] !== true) {
        throw new HookbusError(
          "HOOKBUS_EMPTY_SELECTION",
          `no records matched${describeFilter(values)} in namespace ${subjects.namespace}: nothing was verified; check the selection and --namespace, or pass --allow-empty`,
          { namespace: subjects.namespace },
        );
      }
      return report.ok ? 0 : 1;
    } finally {
      await nc.drain();
    }
  },
};

function describeFilter(values: { session?: string | undefined; agent?: string | undefined }) {
  const parts = [
    ...(values.session === undefined ? [] : [`--session ${values.session}`]),
    ...(values.agent === undefined ? [] : [`--agent ${values.agent}`]),
  ];
  return parts.length === 0 ? "" : ` (${parts.join(" ")})`;
}

function msFlag(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const ms = Number(value);
  if (!Number.isInteger(ms) || ms < 0) {
    throw new HookbusError(
      "HOOKBUS_INVALID_ARGUMENT",
      `--${name} must be a whole number of milliseconds, not ${JSON.stringify(value)}`,
      { argument: name },
    );
  }
  return ms;
}
