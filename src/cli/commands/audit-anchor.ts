/** `hookbus audit anchor --key-file FILE [--out FILE]`: a signed statement of the latest seal batch. */
import { writeFileSync } from "node:fs";
import { makeAnchor } from "../../audit/anchor.js";
import { Bus } from "../../bus/bus.js";
import { Subjects } from "../../bus/subjects.js";
import { sealKeyFromFlags } from "../../log/seal/keys.js";
import { parseCommand, type Command } from "../command.js";
import { connectNats } from "../../bus/connect.js";

const HELP = `usage: hookbus audit anchor --key-file FILE [--out FILE]

Print (or write to --out) a small signed statement of the latest seal batch: its index, hash
and the last log sequence it seals. Keep it outside NATS (a ticket, an object store, a
transparency log); \`hookbus audit verify --anchor FILE\` later proves the seals still extend it,
which catches a deleted-and-recreated or rewritten history.

--key-file FILE  the nkey seed to sign with (env HOOKBUS_SEAL_KEY_FILE or HOOKBUS_SEAL_SEED);
                 the sealer's key, or an operator key verifiers also trust
--out FILE       write the anchor there instead of printing it`;

export const auditAnchorCommand: Command = {
  summary: "print a signed anchor of the latest seal batch, to keep outside NATS",
  async run(argv, out) {
    const { values, positionals } = parseCommand(argv, {
      "key-file": { type: "string" },
      out: { type: "string" },
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
