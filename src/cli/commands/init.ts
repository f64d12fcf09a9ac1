/**
 * `hookbus init [--framework F] [DIR]`: a starter project in five minutes, from the files the
 * package ships in `templates/init/` (a registry, two policies with their policy tests, a compose
 * file for NATS, the agent snippet for the framework). It never overwrites a file unless told to:
 * a starter must not destroy the work of someone who ran it in the wrong folder.
 */
import { existsSync, readFileSync } from "node:fs";
import { copyFile, mkdir, writeFile } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { HookbusError } from "../../foundation/errors.js";
import { parseCommand, type Command } from "../command.js";

/** The package's root: three levels up from src/cli/commands (or dist/cli/commands). */
const PACKAGE_ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const TEMPLATES = join(PACKAGE_ROOT, "templates", "init");

interface Framework {
  /** The snippet in templates/init/agents/ and where it goes in the project. */
  snippet: string;
  target: string;
  /** Packages the snippet imports (versions from hookbus's own peer dependencies). */
  packages: string[];
  /** What to do after `npm install`, beyond the common steps. */
  next: string;
}

const FRAMEWORKS: Record<string, Framework> = {
  ai: {
    snippet: "ai.ts",
    target: "agent.ts",
    packages: ["ai", "zod", "@nats-io/transport-node"],
    next: "npm run agent              # the scripted model asks for rm -rf /: no-shell refuses it",
  },
  "openai-agents": {
    snippet: "openai-agents.ts",
    target: "agent.ts",
    packages: ["@openai/agents", "zod", "@nats-io/transport-node"],
    next: "npm run agent              # an offline scripted model; replace it with yours",
  },
  pi: {
    snippet: "pi.ts",
    target: "agent.ts",
    packages: ["@mariozechner/pi-agent-core", "@mariozechner/pi-ai", "@nats-io/transport-node"],
    next: "npm run agent              # pi-ai's faux provider, scripted; replace it with yours",
  },
  mcp: {
    snippet: "mcp.json",
    target: "mcp.json",
    packages: [],
    next: "merge mcp.json into your MCP host's config (docs/mcp.md): each server behind hookbus mcp-proxy",
  },
  "claude-code": {
    snippet: "claude-code.json",
    target: ".claude/settings.hookbus.json",
    packages: [],
    next: "merge .claude/settings.hookbus.json into .claude/settings.json (docs/claude-code.md)",
  },
};

/** Every project gets these, whatever the framework (template path = project path). */
const COMMON_FILES = [
  "hookbus.registry.json",
  "policies/no-shell.ts",
  "policies/redact-secrets.ts",
  "policies/index.ts",
  "policies.policy-test.json",
  "docker-compose.yml",
];

const HELP = `usage: hookbus init [--framework ${Object.keys(FRAMEWORKS).join("|")}] [--force] [DIR]

Writes a starter project into DIR (default: the current folder): hookbus.registry.json (two
policies), policies/ (no-shell, redact-secrets), policies.policy-test.json (their tests),
docker-compose.yml (NATS with JetStream), the agent snippet for the framework (default ai), and a
package.json with scripts when DIR has none. Existing files are left alone: the command refuses
(HOOKBUS_FILE_EXISTS) unless --force.`;

interface Manifest {
  version: string;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

function ownManifest(): Manifest {
  return JSON.parse(readFileSync(join(PACKAGE_ROOT, "package.json"), "utf8")) as Manifest;
}

/** The version range of a package the snippet imports, as hookbus itself depends on it. */
function rangeOf(own: Manifest, name: string): string {
  return own.peerDependencies?.[name] ?? own.dependencies?.[name] ?? "*";
}

function starterManifest(dir: string, framework: Framework): string {
  const own = ownManifest();
  const dependencies: Record<string, string> = { hookbus: `^${own.version}` };
  for (const name of framework.packages) dependencies[name] = rangeOf(own, name);
  const scripts: Record<string, string> = {
    nats: "docker compose up -d",
    registry: "hookbus registry apply hookbus.registry.json",
    coordinator: "hookbus coordinator",
    worker: "hookbus worker policies/index.ts",
    "test:policies": "hookbus policy test policies.policy-test.json",
    status: "hookbus status",
    ...(framework.target === "agent.ts" ? { agent: "tsx agent.ts" } : {}),
  };
  const name =
    basename(dir)
      .toLowerCase()
      .replace(/[^a-z0-9-]/g, "-") || "hookbus-agent";
  return `${JSON.stringify({ name, private: true, type: "module", scripts, dependencies }, null, 2)}\n`;
}

function frameworkOf(value: string | undefined): Framework {
  const name = value ?? "ai";
  const framework = Object.hasOwn(FRAMEWORKS, name) ? FRAMEWORKS[name] : undefined;
  if (framework === undefined)
    throw new HookbusError(
      "HOOKBUS_INVALID_ARGUMENT",
      `--framework ${JSON.stringify(name)}: expected one of ${Object.keys(FRAMEWORKS).join(", ")}`,
      { argument: "--framework" },
    );
  return framework;
}

export const initCommand: Command = {
  summary: "write a starter project: registry, two policies and their tests, NATS, an agent",
  async run(argv, out) {
    const { values, positionals } = parseCommand(argv, {
      framework: { type: "string" },
      force: { type: "boolean" },
    });
    if (values.help === true) {
      out.print(HELP);
      return 0;
    }
    if (positionals.length > 1)
      throw new HookbusError("HOOKBUS_USAGE", `unexpected argument "${positionals[1]}"`);
    const framework = frameworkOf(values.framework);
    const dir = resolve(positionals[0] ?? ".");
    const copies: [from: string, to: string][] = [
      ...COMMON_FILES.map((f): [string, string] => [join(TEMPLATES, f), f]),
      [join(TEMPLATES, "agents", framework.snippet), framework.target],
    ];
    const writeManifest = !existsSync(join(dir, "package.json"));
    const existing = copies.map(([, to]) => to).filter((to) => existsSync(join(dir, to)));
    if (existing.length > 0 && values.force !== true)
      throw new HookbusError(
        "HOOKBUS_FILE_EXISTS",
        `${dir} already has ${existing.join(", ")}: nothing was written (--force overwrites them)`,
        { files: existing },
      );
    for (const [from, to] of copies) {
      await mkdir(dirname(join(dir, to)), { recursive: true });
      await copyFile(from, join(dir, to));
    }
    if (writeManifest) await writeFile(join(dir, "package.json"), starterManifest(dir, framework));
    out.print(nextSteps(dir, framework, [...copies.map(([, to]) => to)], writeManifest));
    return 0;
  },
};

function nextSteps(
  dir: string,
  framework: Framework,
  written: string[],
  manifest: boolean,
): string {
  const files = [...written, ...(manifest ? ["package.json"] : [])];
  const own = ownManifest();
  const install = manifest
    ? "npm install"
    : `npm install hookbus@^${own.version} ${framework.packages.map((p) => `${p}@${JSON.stringify(rangeOf(own, p))}`).join(" ")}   # your package.json was left alone; it needs "type": "module" for the .ts files`;
  return `wrote ${files.join(", ")} in ${dir}

next:
  cd ${dir}
  ${install}
  npm run nats               # NATS with JetStream (or: nats-server -js)
  npm run registry           # apply hookbus.registry.json: without a registry every call is refused
  npm run test:policies      # the policies' tests, offline
  npm run worker &           # serve the two policies
  npm run coordinator &
  ${framework.next}
  npx hookbus audit query --outcome block   # who blocked what, and why

then: node_modules/hookbus/policies/library/ holds Cedar rules decided in the coordinator, no
worker (destructive shell, secrets, egress, taint, approvals, budgets): docs/policies.md in
hookbus's repository says how to enable them`;
}
