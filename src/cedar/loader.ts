/**
 * Loading a Cedar set without holding the thread that decides calls. The set is measured against
 * the limits here (one loop, microseconds), then split, turned into JSON, type-checked and
 * evaluated once in a worker thread (load-worker.ts) with its own engine instance, under a time
 * budget. What is left for this thread is plain JavaScript over the answer (ids, annotations,
 * context keys, scopes); pre-parsing into this thread's engine, which cannot be handed across
 * threads, happens on first need and only for the sub-sets calls need (scope-index.ts; docs/cedar.md,
 * "An engine that cannot be broken", has the measurements). A set that traps the worker's engine, or runs past the budget, ends that worker
 * (the next set gets a fresh one) and is refused with its own code; no engine here ever saw it.
 */
import { Worker } from "node:worker_threads";
import { MODIFYING_HOOK_NAMES } from "../catalog/catalog.js";
import { loadShellParser } from "../facts/shell/index.js";
import { HookbusError, type ValidationIssue } from "../foundation/errors.js";
import { assertCedarLimits } from "./limits.js";
import type { LoadReply, LoadRequest } from "./load-worker.js";
import { buildCedarPolicySet, invalid, type CedarPolicySet } from "./policy-set.js";
import { cedarSchema } from "./validate.js";

/** How long one set may take in the load thread (a 1,000-policy set takes ~1 s on a busy machine). */
export const CEDAR_LOAD_BUDGET_MS = 10_000;

/** From src/ (tests, tsx) Node runs the .ts file itself; from dist/ the compiled .js. */
const WORKER_URL = new URL(
  import.meta.url.endsWith(".ts") ? "./load-worker.ts" : "./load-worker.js",
  import.meta.url,
);

export class CedarSetLoader {
  private worker: Worker | undefined;
  private nextId = 0;
  /** One set at a time: the thread's engine is single-threaded, and a queue keeps the order. */
  private queue: Promise<unknown> = Promise.resolve();
  /** Load threads ended so far (a trap or a blown budget each end one). */
  private ended = 0;

  constructor(private readonly budgetMs = CEDAR_LOAD_BUDGET_MS) {}

  /** The set, checked in the load thread and pre-parsed here; throws a coded HookbusError. */
  async load(text: string, source: string): Promise<CedarPolicySet> {
    assertCedarLimits(text, source);
    // A set's requests carry shell facts (action-context.ts): the parser is there before it runs.
    await loadShellParser();
    const asked = this.queue.then(() => this.ask(text, source));
    this.queue = asked.catch(() => undefined);
    const reply = await asked;
    if (reply.type === "invalid") {
      throw invalid(
        source,
        reply.messages.map((message) => ({ path: "", rule: "cedar", message })),
      );
    }
    if (reply.type === "trap") {
      throw new HookbusError(
        "HOOKBUS_CEDAR_ENGINE_TRAP",
        `${source}: the Cedar engine trapped while loading it (${reply.message}); not loaded`,
        { source },
      );
    }
    const typeIssues = typeIssuesOf(reply);
    if (typeIssues.length > 0) throw invalid(source, typeIssues);
    return buildCedarPolicySet(text, source, reply.policies, reply.json, false);
  }

  /** Load threads ended by a trap or the budget (for tests and metrics). */
  threadsEnded(): number {
    return this.ended;
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  private start(): Worker {
    const worker = new Worker(WORKER_URL, {
      workerData: { schema: cedarSchema(), hooks: MODIFYING_HOOK_NAMES },
    });
    worker.unref(); // an idle loader never keeps the process alive
    // A thread that ends between sets (killed, out of memory) is not asked again.
    worker.once("exit", () => {
      if (this.worker === worker) this.worker = undefined;
    });
    this.worker = worker;
    return worker;
  }

  private ask(text: string, source: string): Promise<LoadReply> {
    const worker = this.worker ?? this.start();
    const request: LoadRequest = { id: this.nextId++, text };
    return new Promise<LoadReply>((resolve, reject) => {
      const settle = (end: boolean, done: () => void) => {
        clearTimeout(timer);
        worker.off("message", onMessage);
        worker.off("exit", onExit);
        worker.off("error", onError);
        if (end) this.end(worker);
        done();
      };
      const onMessage = (reply: LoadReply) => {
        if (reply.id === request.id) settle(reply.type === "trap", () => resolve(reply));
      };
      const onError = (error: Error) =>
        settle(true, () => resolve({ id: request.id, type: "trap", message: error.message }));
      const onExit = (code: number) =>
        settle(true, () =>
          resolve({ id: request.id, type: "trap", message: `the load thread exited (${code})` }),
        );
      const timer = setTimeout(
        () => settle(true, () => reject(timeout(source, this.budgetMs))),
        this.budgetMs,
      );
      worker.on("message", onMessage);
      worker.on("error", onError);
      worker.on("exit", onExit);
      worker.postMessage(request);
    });
  }

  /** Throws the thread away: the next set starts a fresh one with a fresh engine. */
  private end(worker: Worker): void {
    if (this.worker === worker) this.worker = undefined;
    this.ended++;
    void worker.terminate();
  }
}

function typeIssuesOf(reply: Extract<LoadReply, { type: "loaded" }>): ValidationIssue[] {
  return reply.typeErrors.map(({ position, message }) => {
    const answer = reply.json[position];
    const id = answer?.type === "success" ? answer.json.annotations?.id : undefined;
    const path = position < 0 ? "" : (id ?? `policy${position}`);
    return { path, rule: position < 0 ? "cedar_schema" : "cedar_type", message };
  });
}

function timeout(source: string, budgetMs: number): HookbusError {
  return new HookbusError(
    "HOOKBUS_CEDAR_LOAD_TIMEOUT",
    `${source}: parsing and checking the Cedar set took longer than ${budgetMs} ms; not loaded`,
    { source, budgetMs },
  );
}
