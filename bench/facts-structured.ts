/**
 * What computeActionFacts costs per call (src/facts/: URLs, paths, recipients, decoded secrets,
 * nested shapes; the shell parser is not injected here). Run: `npx tsx bench/facts-structured.ts`
 * (a few seconds). One line per kind of call: `facts-structured <kind>: p50_us=… p99_us=… max_ms=…`.
 */
import { computeActionFacts } from "../src/facts/index.js";

const OPTIONS = {
  home: "/home/dev",
  projectRoot: "/home/dev/project",
  internalDomains: ["example.com"],
};

const CALLS: readonly (readonly [kind: string, event: Record<string, unknown>, runs: number])[] = [
  ["shell", { toolName: "Bash", params: { command: "git status && npm test -- --run" } }, 20_000],
  [
    "local_shell",
    { toolName: "local_shell", params: { action: { type: "exec", command: ["ls", "-la"] } } },
    20_000,
  ],
  ["fetch", { toolName: "web_fetch", params: { url: "https://docs.example.com/a?x=1" } }, 20_000],
  [
    "mail",
    {
      toolName: "send_email",
      params: { to: "Ann <ann@example.com>, bob@corp.example.com", body: "x".repeat(2000) },
    },
    20_000,
  ],
  [
    "write-2KB",
    {
      toolName: "Write",
      params: { file_path: "src/a.ts", content: "export const a = 1;\n".repeat(100) },
    },
    20_000,
  ],
  ["command-64KB", { toolName: "exec", params: { command: "A".repeat(64 * 1024) } }, 300],
];

function measure(event: Record<string, unknown>, runs: number): number[] {
  for (let i = 0; i < 2_000; i++) computeActionFacts("before_tool_call", event, OPTIONS);
  const micros: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = process.hrtime.bigint();
    computeActionFacts("before_tool_call", event, OPTIONS);
    micros.push(Number(process.hrtime.bigint() - started) / 1000);
  }
  return micros.sort((a, b) => a - b);
}

for (const [kind, event, runs] of CALLS) {
  const micros = measure(event, runs);
  const at = (q: number) => micros[Math.min(micros.length - 1, Math.floor(micros.length * q))]!;
  console.log(
    `facts-structured ${kind}: p50_us=${at(0.5).toFixed(1)} p99_us=${at(0.99).toFixed(1)} max_ms=${(at(1) / 1000).toFixed(2)}`,
  );
}
