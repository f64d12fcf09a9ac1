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
import { installSource, natsStart, type InstallSource, type NatsStart } from "./init-source.js";

/** The package's root: three levels up from src/cli/commands (or dist/cli/commands). */
const PACKAGE_ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const TEMPLATES = join(PACKAGE_ROOT, "templates", "init");

interface Framework {
  /** The snippet in templates/init/agents/ and where it goes in the project. */
  snippet: string;
  target: string;
  /** More files from templates/init/agents/ (template name = project path). */
  extra: string[];
  /** Packages the snippet imports (versions from hookbus's own peer dependencies). */
  packages: string[];
  /** The script that shows a first block, and the printed line that runs it. */
  tryScript?: string;
  next: string;
  /** The adapter's page, shipped in the package. */
  doc: string;
}

/** Claude Code's PreToolUse for `rm -rf /`, as Claude Code sends it on the hook's stdin. */
const CLAUDE_CODE_TRY = JSON.stringify({
  session_id: "try-1",
  hook_event_name: "PreToolUse",
  tool_name: "Bash",
  tool_input: { command: "rm -rf /" },
});

const FRAMEWORKS: Record<string, Framework> = {
  ai: {
    snippet: "ai.ts",
    target: "agent.ts",
    extra: [],
    packages: ["ai", "zod", "@nats-io/transport-node"],
    tryScript: "tsx agent.ts",
    next: "npm run try                # the scripted model asks for rm -rf /: no-shell refuses it",
    doc: "docs/adapters/ai-sdk.md",
  },
  "openai-agents": {
    snippet: "openai-agents.ts",
    target: "agent.ts",
    extra: [],
    packages: ["@openai/agents", "zod", "@nats-io/transport-node"],
    tryScript: "tsx agent.ts",
    next: "npm run try                # an offline scripted model asks for rm -rf /: no-shell refuses it",
    doc: "docs/adapters/openai-agents.md",
  },
  pi: {
    snippet: "pi.ts",
    target: "agent.ts",
    extra: [],
    packages: ["@mariozechner/pi-agent-core", "@mariozechner/pi-ai", "@nats-io/transport-node"],
    tryScript: "tsx agent.ts",
    next: "npm run try                # pi-ai's faux provider asks for rm -rf /: no-shell refuses it",
    doc: "docs/adapters/pi.md",
  },
  mcp: {
    snippet: "mcp.json",
    target: "mcp.json",
    extra: ["try-mcp.ts", "mcp-shell-server.ts"],
    packages: ["@modelcontextprotocol/sdk", "zod"],
    tryScript: "tsx try-mcp.ts",
    next: "npm run try                # an MCP host calls a stand-in shell server through hookbus mcp-proxy: rm -rf / is refused",
    doc: "docs/adapters/mcp.md",
  },
  "claude-code": {
    snippet: "claude-code.json",
    target: ".claude/settings.hookbus.json",
    extra: [],
    packages: [],
    tryScript: `echo '${CLAUDE_CODE_TRY}' | hookbus claude-code-hook --agent my-laptop`,
    next: "npm run try                # Claude Code's PreToolUse for rm -rf /, as it sends it: denied",
    doc: "docs/adapters/claude-code.md",
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
package.json with scripts when DIR has none (when it has one, it is left alone and the scripts to
add are printed). Then it prints the steps to a first block in the audit log, each a command that
works here: hookbus installed from where this copy came from (a tarball, a checkout or the npm
registry), NATS started with what this machine has (a running server, nats-server, docker
compose) or what to install. Existing files are left alone: the command refuses
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

/** The scripts every starter gets, the NATS line and the framework's try among them. */
function starterScripts(framework: Framework, nats: NatsStart): Record<string, string> {
  return {
    nats: nats.script,
    registry: "hookbus registry apply hookbus.registry.json",
    coordinator: "hookbus coordinator",
    worker: "hookbus worker policies/index.ts",
    "test:policies": "hookbus policy test policies.policy-test.json",
    status: "hookbus status",
    ...(framework.tryScript === undefined ? {} : { try: framework.tryScript }),
  };
}

function starterDependencies(framework: Framework, source: InstallSource): Record<string, string> {
  const own = ownManifest();
  const dependencies: Record<string, string> = { hookbus: source.spec };
  for (const name of framework.packages) dependencies[name] = rangeOf(own, name);
  return dependencies;
}

function starterManifest(
  dir: string,
  scripts: Record<string, string>,
  dependencies: Record<string, string>,
): string {
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
      ...framework.extra.map((f): [string, string] => [join(TEMPLATES, "agents", f), f]),
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
    const starter: Starter = {
      dir,
      framework,
      source: installSource(PACKAGE_ROOT, ownManifest().version, dir),
      nats: await natsStart(),
      written: copies.map(([, to]) => to),
      manifest: writeManifest,
    };
    const scripts = starterScripts(framework, starter.nats);
    const dependencies = starterDependencies(framework, starter.source);
    if (writeManifest)
      await writeFile(join(dir, "package.json"), starterManifest(dir, scripts, dependencies));
    out.print(nextSteps(starter, scripts, dependencies));
    return 0;
  },
};

/** What init wrote and found, for the steps it prints. */
interface Starter {
  dir: string;
  framework: Framework;
  source: InstallSource;
  nats: NatsStart;
  written: string[];
  /** Whether init wrote package.json (false: the folder had one, left alone). */
  manifest: boolean;
}

/** Where the shipped docs are once the starter is installed. */
const SHIPPED = "node_modules/hookbus";

/**
 * The steps to a first block in the audit log, each a command that works where init ran (the
 * package test runs them word for word): a line ending in `&` starts a service, `#` is a comment.
 */
function nextSteps(
  starter: Starter,
  scripts: Record<string, string>,
  dependencies: Record<string, string>,
): string {
  const { dir, framework, source, nats } = starter;
  const files = [...starter.written, ...(starter.manifest ? ["package.json"] : [])];
  const setup = starter.manifest
    ? []
    : [
        `# your package.json was left alone: add "type": "module" and these scripts to it:`,
        ...JSON.stringify({ scripts }, null, 2)
          .split("\n")
          .map((line) => `#   ${line}`),
      ];
  const install = starter.manifest
    ? "npm install"
    : `npm install ${Object.entries(dependencies)
        .map(([name, spec]) =>
          spec.startsWith("file:") ? spec.slice(5) : `${name}@${JSON.stringify(spec)}`,
        )
        .join(" ")}`;
  return `wrote ${files.join(", ")} in ${dir}

next (hookbus from ${source.from}):
  cd ${dir}
${[...setup, ...source.before, install, nats.line].map((line) => `  ${line}`).join("\n")}
  npm run registry           # apply hookbus.registry.json: without a registry every call is refused
  npm run test:policies      # the policies' tests, offline
  npm run worker &           # serve the two policies
  npm run coordinator &
  ${framework.next}
  npx hookbus audit query --outcome block   # who blocked what, and why

then:
  ${SHIPPED}/${framework.doc}   how the ${frameworkName(framework)} adapter maps each hook, and its limits
  ${SHIPPED}/policies/library/   Cedar rules decided in the coordinator, no worker (destructive shell,
    secrets, egress, taint, approvals, budgets): ${SHIPPED}/docs/policies.md says how to enable them`;
}

function frameworkName(framework: Framework): string {
  return Object.entries(FRAMEWORKS).find(([, f]) => f === framework)![0];
}
