/** `hookbus auth DESCRIPTION.json`: write a least-privilege nats-server configuration and keys. */
import { generateAuth, readAuthDescription } from "../../auth/generate.js";
import { parseCommand, type Command } from "../command.js";

const HELP = `usage: hookbus auth DESCRIPTION.json [--out FILE] [--keys DIR] [--json]

Writes a nats-server configuration (an authorization block to include from the server's
configuration) with one nkey user per agent, policy worker, coordinator, operator, auditor, sealer,
indexer and approver of the description, each with the least privilege of its role (docs/security.md).
Each user's seed goes to DIR/<role>-<name>.nk (0600); existing seed files are kept, so re-running
after adding users changes no one else's key. Each process then connects with
  --nkey DIR/<role>-<name>.nk --inbox-prefix _INBOX_<namespace>.<role>.<name>
Each coordinator also gets a record signing key, DIR/coordinator-<name>.sign.nk (0600, for
\`hookbus coordinator --sign-key-file\`), and DIR/coordinator-signing-keys lists their public
keys: the trusted list for \`hookbus sealer\` and \`hookbus audit verify\` (--coordinator-keys).

description (JSON):
  { "namespace": "hookbus", "agents": ["support-bot"], "policies": ["pii-guard"],
    "coordinators": ["c1"], "operators": ["ops"], "auditors": ["audit"],
    "sealers": ["sealer"], "indexers": ["indexer"],
    "approvers": ["alice"], "approverGroups": { "payments": ["alice"] } }

options:
  --out FILE    the configuration to write (default nats-auth.conf)
  --keys DIR    where seed files are kept (default nats-keys)
  --json        print the users (role, name, public key, key file, inbox prefix) as JSON`;

export const authCommand: Command = {
  summary: "write a least-privilege nats-server configuration with nkeys (docs/security.md)",
  async run(argv, out) {
    const { values, positionals } = parseCommand(argv, {
      out: { type: "string" },
      keys: { type: "string" },
      json: { type: "boolean" },
    });
    if (values.help === true) {
      out.print(HELP);
      return 0;
    }
    if (positionals.length !== 1) {
      out.error(HELP);
      return 2;
    }
    const generated = generateAuth(readAuthDescription(positionals[0]!), {
      configFile: values.out ?? "nats-auth.conf",
      keyDir: values.keys ?? "nats-keys",
    });
    if (values.json === true) {
      out.print(
        JSON.stringify(
          {
            config: generated.configFile,
            users: generated.users,
            signingKeys: generated.signingKeys,
            trustedKeysFile: generated.trustedKeysFile,
          },
          null,
          2,
        ),
      );
      return 0;
    }
    out.print(`wrote ${generated.configFile} (${generated.users.length} users)`);
    for (const user of generated.users)
      out.print(
        `${user.role} ${user.name}: --nkey ${user.keyFile} --inbox-prefix ${user.inboxPrefix}`,
      );
    for (const key of generated.signingKeys)
      out.print(`coordinator ${key.coordinator}: --sign-key-file ${key.file}`);
    if (generated.signingKeys.length > 0)
      out.print(`trusted coordinator keys: --coordinator-keys ${generated.trustedKeysFile}`);
    return Promise.resolve(0);
  },
};
