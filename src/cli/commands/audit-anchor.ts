/**
 * `hookbus audit anchor --key-file FILE [--out FILE]`: a signed statement of the latest seal batch;
 * with `--every DURATION --out DIR`, one per new batch until SIGTERM/SIGINT.
 */
import { writeFileSync } from "node:fs";
import type { NatsConnection } from "@nats-io/transport-node";
import { makeAnchor } from "../../audit/anchor.js";
import { checkAnchorEvery, startAnchorSchedule } from "../../audit/anchor-schedule.js";
import { parseDuration } from "../../audit/time.js";
import { HookbusError } from "../../foundation/errors.js";
import type { SealKeyPair } from "../../log/seal/keys.js";
import { serviceLogger } from "../logger.js";
import type { Output } from "../output.js";
import { onShutdown } from "../shutdown.js";
import { Bus } from "../../bus/bus.js";
import { Subjects } from "../../bus/subjects.js";
import { sealKeyFromFlags } from "../../log/seal/keys.js";
import { parseCommand, type Command } from "../command.js";
import { connectNats } from "../../bus/connect.js";

const HELP = `usage: hookbus audit anchor --key-file FILE [--out FILE]
       hookbus audit anchor --key-file FILE --every DURATION --out DIR [--log-level LEVEL]

Print (or write to --out) a small signed statement of the latest seal batch: its index, hash
and the last log sequence it seals. Keep it outside NATS (a ticket, an object store, a
transparency log); \`hookbus audit verify --anchor FILE\` later proves the seals still extend it,
which catches a deleted-and-recreated or rewritten history.

--key-file FILE  the nkey seed to sign with (env HOOKBUS_SEAL_KEY_FILE or HOOKBUS_SEAL_SEED);
                 the sealer's key, or an operator key verifiers also trust
--out FILE       write the anchor there instead of printing it
--every DURATION keep running: every DURATION (1s to 7d, e.g. 1h) write an anchor of the latest
                 batch into the directory --out as anchor-<batch>.json, when a batch was sealed
                 since the last one; a failed tick is logged and retried at the next. Point
                 \`hookbus audit verify --anchor DIR\` at the directory to check the newest.
                 Keep DIR outside NATS and out of reach of the sealer key's holder.
--log-level LEVEL with --every: pino level (env LOG_LEVEL, default info); NDJSON on stdout`;

export const auditAnchorCommand: Command = {
  summary: "print a signed anchor of the latest seal batch, to keep outside NATS",
  async run(argv, out) {
    const { values, positionals } = parseCommand(argv, {
      "key-file": { type: "string" },
      out: { type: "string" },
      every: { type: "string" },
      "log-level": { type: "string" },
    });
    if (values.help === true) {
      out.print(HELP);
      return 0;
    }
    if (positionals.length > 0) {
      out.error(HELP);
      return 2;
    }
    const key = sealKeyFromFlags(values["key-file"], "an anchor is signed with the sealer's key");
    if (values.every !== undefined) return anchorEvery(values, key, out);
    const subjects = new Subjects(values.namespace);
    const nc = await connectNats({ ...values, name: "hookbus-audit-anchor" });
    try {
      const bus = await Bus.open(nc, { namespace: subjects.namespace });
      const text = JSON.stringify(await makeAnchor(bus, key));
      if (values.out === undefined) out.print(text);
      else writeFileSync(values.out, `${text}\n`);
      return 0;
    } finally {
      await nc.drain();
    }
  },
};

type AnchorFlags = Parameters<typeof connectNats>[0] & {
  namespace?: string | undefined;
  every?: string | undefined;
  out?: string | undefined;
  "log-level"?: string | undefined;
};

/** `--every`: anchors into a directory until a signal; a connection that closes by itself exits 1. */
async function anchorEvery(values: AnchorFlags, key: SealKeyPair, out: Output): Promise<number> {
  const everyMs = checkAnchorEvery(parseDuration(values.every ?? ""), values.every ?? "");
  if (values.out === undefined)
    throw new HookbusError("HOOKBUS_USAGE", "--every needs --out DIR: the directory anchors go to");
  const logger = serviceLogger(values["log-level"]);
  const subjects = new Subjects(values.namespace);
  const nc: NatsConnection = await connectNats({ ...values, name: "hookbus-audit-anchor" });
  const bus = await Bus.open(nc, { namespace: subjects.namespace, logger });
  const schedule = startAnchorSchedule({ bus, key, dir: values.out, everyMs, logger });
  out.error(`anchoring ${subjects.namespace} every ${values.every} into ${values.out}`);
  let draining = false;
  const stopped = onShutdown(logger, async () => {
    draining = true;
    await schedule.stop();
    await nc.drain();
  }).then(() => 0);
  const lost = nc.closed().then(async (error) => {
    if (draining) return stopped;
    logger.fatal({ err: error }, "the NATS connection closed: exiting");
    await schedule.stop();
    return 1;
  });
  return Promise.race([stopped, lost]);
}
