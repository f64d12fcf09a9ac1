/**
 * `hookbus policy test FIXTURE...`: like `opa test`, decide each fixture case in process with the
 * policy modules and a registry file, and report which cases got another decision than expected.
 * No NATS: it runs in CI before anything is deployed.
 */
import { readFile } from "node:fs/promises";
import { HookbusError } from "../../foundation/errors.js";
import {
  formatTestReport,
  MAX_FIXTURE_FILE_BYTES,
  parseFixture,
  runPolicyTests,
  summarize,
  type Fixture,
} from "../../policy-test/index.js";
import { loadPolicyModules } from "../../policy/load-policies.js";
import { commaList, parseCommand, type Command } from "../command.js";
import { unreadableFile } from "../../foundation/failure.js";
import { readRegistryFile } from "./registry.js";
import { printCedarSchema, validateCedarFiles } from "./policy-cedar.js";

const HELP = `usage: hookbus policy test FIXTURE [FIXTURE ...] [--policies FILES] [--registry FILE] [--json] [--verbose]
       hookbus policy validate FILE [FILE ...] [--json]
       hookbus policy schema --cedar

validate  parse and type-check Cedar policies against the schema generated from the hook catalog
          (Cedar's validator, strict): a .cedar file, or a registry file's cedar policies. A
          policy that reads a field its hook does not have is refused (exit 1). docs/cedar.md
schema    print that schema (Cedar schema syntax)

test:

Decides every case of the fixture files in process (no NATS) with the policy modules and the
registry, with the code replay and the coordinator use, and compares each decision with the
case's "expect". A fixture is JSON ({ "policies", "registry", "context", "cases": [...] }) or
NDJSON (one case per line); see docs/policy-testing.md.

  --policies FILES   policy modules (.ts or .js), comma-separated or repeated; default: the
                     fixture's "policies" (relative to the fixture file)
  --registry FILE    the registry document; default: the fixture's "registry"
  --json             one result per line, then {"summary": ...}
  --verbose          list passing cases too

exit codes: 0 every case passed, 1 a case failed or could not run, 2 usage`;

async function readFixture(path: string): Promise<Fixture> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw unreadableFile(path, "fixture file", error, "HOOKBUS_INVALID_FIXTURE");
  }
  if (Buffer.byteLength(text) > MAX_FIXTURE_FILE_BYTES)
    throw new HookbusError(
      "HOOKBUS_INVALID_FIXTURE",
      `${path} is larger than ${MAX_FIXTURE_FILE_BYTES} bytes: split it`,
    );
  return parseFixture(path, text);
}

/** The one value all fixtures agree on, or the flag's; two fixtures naming different ones is an error. */
function agreed(values: Array<string | undefined>, what: string): string | undefined {
  const distinct = [...new Set(values.filter((v): v is string => v !== undefined))];
  if (distinct.length > 1)
    throw new HookbusError(
      "HOOKBUS_USAGE",
      `the fixtures name different ${what}s (${distinct.join(", ")}): run them separately or pass --${what}`,
    );
  return distinct[0];
}

export const policyCommand: Command = {
  summary: "test policies against fixtures; validate Cedar policies; print the Cedar schema",
  async run(argv, out) {
    const { values, positionals } = parseCommand(argv, {
      policies: { type: "string", multiple: true },
      registry: { type: "string" },
      json: { type: "boolean" },
      verbose: { type: "boolean" },
      cedar: { type: "boolean" },
    });
    if (values.help === true) {
      out.print(HELP);
      return 0;
    }
    const [action, ...files] = positionals;
    if (action === "schema" && files.length === 0)
      return printCedarSchema(values.cedar === true, out);
    if (action === "validate" && files.length > 0)
      return validateCedarFiles(files, values.json === true, out);
    if (action !== "test" || files.length === 0)
      throw new HookbusError(
        "HOOKBUS_USAGE",
        `hookbus policy takes test FIXTURE [FIXTURE ...], validate FILE [FILE ...] or schema --cedar${action === undefined || ["test", "validate", "schema"].includes(action) ? "" : `, not ${JSON.stringify(action)}`} (hookbus policy --help)`,
      );
    const fixtures = [];
    for (const file of files) fixtures.push(await readFixture(file));

    const policyPaths = commaList(values.policies);
    const modules =
      policyPaths.length > 0
        ? policyPaths
        : (agreed(
            fixtures.map((f) => (f.policies.length === 0 ? undefined : f.policies.join(","))),
            "policies",
          )?.split(",") ?? []);
    const registryPath =
      values.registry ??
      agreed(
        fixtures.map((f) => f.registry),
        "registry",
      );
    if (registryPath === undefined)
      throw new HookbusError(
        "HOOKBUS_USAGE",
        'no registry: pass --registry or set "registry" in the fixture',
      );
    const registry = await readRegistryFile(registryPath);
    const loaded = await loadPolicyModules(modules);
    const results = await runPolicyTests(
      loaded.map((l) => l.policy),
      registry,
      fixtures.map((f) => ({ file: f.path, context: f.context, cases: f.cases })),
    );
    const summary = summarize(results);
    if (values.json === true) {
      for (const result of results) out.print(JSON.stringify(result));
      out.print(JSON.stringify({ summary }));
    } else {
      out.print(formatTestReport(results, values.verbose === true));
    }
    return summary.failed + summary.errors === 0 && results.length > 0 ? 0 : 1;
  },
};
