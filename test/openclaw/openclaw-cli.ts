/**
 * `openclaw agent --local` as a user runs it, in a home of its own: the real OpenClaw CLI
 * (installed by scripts/openclaw-setup.sh into .tools/openclaw, run with .tools/node24), its
 * state and workspace in a temporary folder, the loopback fake model as its only provider, and
 * the hookbus plugin loaded from the source checkout.
 */
import { spawn } from "node:child_process";
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "../..");
export const NODE24 = join(ROOT, ".tools/bin/node");
export const OPENCLAW = join(ROOT, ".tools/openclaw/node_modules/openclaw/openclaw.mjs");

/** Fails with what to run when the tools are missing: the test never skips silently. */
export function requireOpenClaw(): void {
  for (const path of [NODE24, OPENCLAW]) {
    if (!existsSync(path))
      throw new Error(
        `${path} is missing: run scripts/openclaw-setup.sh (Node 24 and openclaw into .tools/)`,
      );
  }
}

/**
 * The plugin as a user installs it: the shipped folder (plugins/openclaw: manifest, package.json,
 * entry) beside a node_modules/hookbus holding what the package ships (package.json, dist,
 * schemas; its dependencies are this checkout's), so its entry's `hookbus/openclaw` is the built
 * package (npm run build). A copy, not a link to the checkout: OpenClaw refuses to load a plugin
 * whose sources change while it prepares them, and the checkout may be edited meanwhile.
 */
function pluginFolder(home: string): string {
  const dir = join(home, "hookbus-plugin");
  const pkg = join(dir, "node_modules/hookbus");
  mkdirSync(pkg, { recursive: true });
  const shipped = join(ROOT, "plugins/openclaw");
  for (const file of readdirSync(shipped)) copyFileSync(join(shipped, file), join(dir, file));
  for (const part of ["package.json", "dist", "schemas"])
    cpSync(join(ROOT, part), join(pkg, part), { recursive: true });
  symlinkSync(join(ROOT, "node_modules"), join(pkg, "node_modules"));
  return dir;
}

export interface OpenClawHome {
  home: string;
  workspace: string;
}

export interface HookbusPluginSettings {
  server: string;
  namespace: string;
  agentId: string;
  timeoutMs?: number;
}

/** A fresh OpenClaw home: config, state directory, workspace, and the plugin. */
export function openClawHome(baseUrl: string, hookbus: HookbusPluginSettings): OpenClawHome {
  const home = mkdtempSync(join(tmpdir(), "hookbus-openclaw-"));
  const workspace = join(home, "workspace");
  mkdirSync(join(home, "state"), { recursive: true });
  mkdirSync(workspace, { recursive: true });
  const config = {
    models: {
      mode: "replace",
      providers: {
        fake: {
          baseUrl,
          apiKey: "offline-test-key",
          api: "openai-completions",
          models: [
            {
              id: "scripted",
              name: "Scripted",
              reasoning: false,
              input: ["text"],
              contextWindow: 128_000,
              maxTokens: 4096,
            },
          ],
        },
      },
    },
    agents: { defaults: { model: { primary: "fake/scripted" }, workspace } },
    plugins: {
      load: { paths: [pluginFolder(home)] },
      entries: {
        hookbus: { enabled: true, hooks: { allowConversationAccess: true }, config: hookbus },
      },
    },
  };
  writeFileSync(join(home, "openclaw.json"), JSON.stringify(config, null, 2));
  return { home, workspace };
}

export interface AgentRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** `--json`'s result, when stdout held one. */
  json: { payloads?: { text?: string }[]; meta?: Record<string, unknown> } | undefined;
}

/** One turn: `openclaw agent --local --agent main --session-key <key> -m <message> --json`. */
export function runAgent(
  { home }: OpenClawHome,
  sessionKey: string,
  message: string,
  deadlineMs = 240_000,
): Promise<AgentRun> {
  const env: Record<string, string> = {
    PATH: `${join(ROOT, ".tools/bin")}:/usr/local/bin:/usr/bin:/bin`,
    HOME: home,
    OPENCLAW_HOME: home,
    OPENCLAW_STATE_DIR: join(home, "state"),
    OPENCLAW_CONFIG_PATH: join(home, "openclaw.json"),
    NO_COLOR: "1",
  };
  const args = [
    OPENCLAW,
    "agent",
    "--local",
    "--agent",
    "main",
    "--session-key",
    sessionKey,
    "-m",
    message,
    "--json",
  ];
  const child = spawn(NODE24, args, { env, cwd: home, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(
        new Error(`openclaw agent did not exit within ${deadlineMs} ms\n${stderr.slice(-4000)}`),
      );
    }, deadlineMs);
    child.once("exit", (code) => {
      clearTimeout(timer);
      let json: AgentRun["json"];
      try {
        json = JSON.parse(stdout) as AgentRun["json"];
      } catch {
        json = undefined;
      }
      resolvePromise({ code, stdout, stderr, json });
    });
  });
}

/** The text the user was shown: the run's reply payloads, joined. */
export function replyText(run: AgentRun): string {
  return (run.json?.payloads ?? []).map((p) => p.text ?? "").join("\n");
}
