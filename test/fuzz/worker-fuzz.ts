/**
 * The fuzz categories against a policy worker in any language (issue 31, item 5): the seeded call
 * and observe bodies of generator.ts, sent as policy requests straight to the worker process (as a
 * hostile or broken coordinator could), each with its hostile headers. Every request must get one
 * reply that a strict reader accepts (UTF-8, `JSON.parse`, no NaN or Infinity) and that is either a
 * coded error (the header and the body agree, the code is in docs/errors.md) or a valid verdict;
 * and the worker must still be running at the end.
 */
import { connect, headers as natsHeaders, type Msg } from "@nats-io/transport-node";
import { PolicyReply } from "../../src/bus/envelope.js";
import { startWorkerProcess } from "../../src/conformance/processes.js";
import { ErrorCodes } from "../../src/foundation/errors.js";
import { findNatsServer } from "../../src/testing/nats.js";
import { uniqueNamespace } from "../support/nats.js";
import { until } from "../support/wait.js";
import { fuzzMessage, seededRandom, type FuzzMessage } from "./generator.js";

/**
 * What only a worker meets, and what broke the Python SDK (issue 31): numbers and strings that
 * JSON text can carry but a careless reader echoes into a reply no strict reader accepts. Each
 * asks the conformance policy to echo them (`conformance_verdict`).
 */
const NUMBERS = ["NaN", "Infinity", "-Infinity", "1e999", "-1e999", "1E400", "-0", "1e-999"];

function workerCase(random: () => number, n: number): FuzzMessage {
  const roll = Math.floor(random() * 3);
  const echo = (value: string) =>
    `{"callId":"w-${n}","hook":"before_tool_call","context":{"agentId":"a","sessionKey":"s"},"event":{"toolName":"conformance_verdict","params":{"verdict":{"params":{"v":${value}}}}}}`;
  const surrogate = () => (0xd800 + Math.floor(random() * 0x800)).toString(16);
  const value =
    roll === 0
      ? NUMBERS[Math.floor(random() * NUMBERS.length)]!
      : roll === 1
        ? `"x\\u${surrogate()}y"`
        : `["\\ud83d\\ude00","\\u${surrogate()}"]`;
  return {
    path: "call",
    kind: ["non-finite-number", "lone-surrogate", "surrogate-in-array"][roll]!,
    agentToken: "a",
    hook: "before_tool_call",
    data: Buffer.from(echo(value), "utf8"),
    headers: {},
  };
}

export interface WorkerFuzzOptions {
  /** Starts one worker serving `policy`; it gets NATS_URL and HOOKBUS_NAMESPACE. */
  command: readonly string[];
  policy: string;
  count: number;
  seed: number;
  concurrency?: number;
  deadlineMs?: number;
}

export interface WorkerFuzzReport {
  sent: number;
  /** Policy-reply cases test a coordinator reading replies: not sent to a worker. */
  skipped: number;
  answered: number;
  unanswered: { kind: string; n: number }[];
  /** Answers a strict reader refuses, or without a known code and not a valid reply. */
  bad: { kind: string; n: number; why: string }[];
  codes: Record<string, number>;
  byKind: Record<string, number>;
  crashed: boolean;
  workerOutput: string;
}

const CODES = new Set(Object.keys(ErrorCodes));
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** Why a reply is not acceptable, or undefined when it is. */
export function judgeReply(msg: Msg, policy: string): { why?: string; code?: string } {
  if (msg.headers?.get("Hookbus-Encoding")) return {}; // large replies: the kit checks those
  let body: unknown;
  try {
    body = JSON.parse(strictUtf8.decode(msg.data));
  } catch (error) {
    return { why: `not strict JSON: ${String(error).slice(0, 120)}` };
  }
  const parsed = PolicyReply.safeParse(body);
  if (!parsed.success) return { why: `not a PolicyReply: ${JSON.stringify(body).slice(0, 120)}` };
  if (parsed.data.policy !== policy) return { why: `names policy ${parsed.data.policy}` };
  const header = msg.headers?.get("Hookbus-Error-Code") || undefined;
  const code = parsed.data.error?.code;
  if (header !== code) return { why: `header ${header} but body code ${code}` };
  if (code !== undefined && !CODES.has(code)) return { why: `unknown code ${code}` };
  return code === undefined ? {} : { code };
}

/** The worker-only cases have one right answer: text is echoed, a bad number refused. */
function wrongCode(kind: string, code: string | undefined): string | undefined {
  if (code === undefined) return undefined;
  if (kind === "lone-surrogate" || kind === "surrogate-in-array")
    return `refused text a coordinator forwards, with ${code}`;
  if (kind === "non-finite-number" && code !== "HOOKBUS_BAD_MESSAGE")
    return `refused a number with ${code}, not HOOKBUS_BAD_MESSAGE`;
  return undefined;
}

export async function fuzzWorker(options: WorkerFuzzOptions): Promise<WorkerFuzzReport> {
  const server = await findNatsServer({ own: true });
  const ns = uniqueNamespace("wfuzz");
  const nc = await connect({ servers: server.url, name: "worker-fuzz" });
  const worker = startWorkerProcess(options.command, {
    NATS_URL: server.url,
    HOOKBUS_NAMESPACE: ns,
  });
  const subject = (hook: string) => `${ns}.policy.${options.policy}.${hook}`;
  const report: WorkerFuzzReport = {
    sent: 0,
    skipped: 0,
    answered: 0,
    unanswered: [],
    bad: [],
    codes: {},
    byKind: {},
    crashed: false,
    workerOutput: "",
  };
  try {
    await until(
      () =>
        nc
          .request(subject("before_tool_call"), "{}", { timeout: 1000 })
          .then(() => true)
          .catch(() => false),
      30_000,
      "the worker answering",
    );
    const random = seededRandom(options.seed);
    // A quarter worker-only cases, the rest the coordinator fuzz's categories.
    const messages = Array.from({ length: options.count }, (_, n) =>
      random() < 0.25 ? workerCase(random, n) : fuzzMessage(random, n, "fuzz-agent"),
    );
    let next = 0;
    const one = async (n: number) => {
      const message = messages[n]!;
      report.byKind[message.kind] = (report.byKind[message.kind] ?? 0) + 1;
      if (message.path === "policy-reply") {
        report.skipped++;
        return;
      }
      report.sent++;
      const h = natsHeaders();
      for (const [k, v] of Object.entries(message.headers)) h.set(k, v);
      let reply: Msg;
      try {
        reply = await nc.request(subject(message.hook), message.data, {
          timeout: options.deadlineMs ?? 5000,
          headers: h,
        });
      } catch {
        report.unanswered.push({ kind: message.kind, n });
        return;
      }
      report.answered++;
      const { why, code } = judgeReply(reply, options.policy);
      const wrong = why ?? wrongCode(message.kind, code);
      if (wrong !== undefined) report.bad.push({ kind: message.kind, n, why: wrong });
      const key = code ?? "verdict";
      report.codes[key] = (report.codes[key] ?? 0) + 1;
    };
    await Promise.all(
      Array.from({ length: options.concurrency ?? 8 }, async () => {
        while (next < messages.length) await one(next++);
      }),
    );
    report.crashed = worker.child.exitCode !== null || worker.child.signalCode !== null;
    return report;
  } finally {
    report.workerOutput = worker.output().slice(-2000);
    worker.signal("SIGKILL");
    await worker.exited;
    await nc.close();
    await server.stop();
  }
}
