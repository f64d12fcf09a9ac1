/**
 * The emergency stop list (issue 21, item 4): agents and tools whose every call is blocked, kept
 * in its own key (`stops`) of the registry bucket. Same bucket, so the same people may write it
 * (the operator role: `hookbus auth` gives no other role a write on the bucket), the same history
 * (64 revisions of the key: who stopped or resumed what, when and why), and the same confirmation:
 * coordinators report the key's revision they enforce in discovery, and `hookbus stop` waits for
 * every live one (registry/propagation.ts).
 *
 * Its own key rather than a field of the policy set, so `hookbus registry apply FILE` (which
 * replaces the set with the file) can never drop a stop, and a stop never needs the policy file.
 *
 * Followers read the key every `checkMs` (250 ms) instead of trusting a KV watch alone: a watch can
 * break without ending (issue 21, finding 1), a read cannot pretend. A follower that has not read
 * the key for `staleAfterMs` (or not since its connection came back), or reads a value that fails
 * validation, reports the list as unreadable. Coordinators then make a call wait for a fresh read
 * within its deadline and block it (fail closed) only when none succeeds in time, or at once for a
 * malformed value; agents send every call to a coordinator.
 */
import type { NatsConnection } from "@nats-io/transport-node";
import type { KV, KvEntry } from "@nats-io/kv";
import type { Logger } from "pino";
import { z } from "zod";
import { HookbusError } from "../foundation/errors.js";
import { toValidationIssues as zodIssues } from "../catalog/validate.js";
import type { Subjects } from "../bus/subjects.js";
import { isToolClass, TOOL_CLASSES } from "../vocabulary/classes.js";
import { parseMcpToolName } from "../vocabulary/mcp.js";
import { toolVocabulary, type ToolVocabulary } from "../vocabulary/vocabulary.js";
import { openRegistryBucket, REGISTRY_CHECK_MS } from "./store.js";
import { settlesWithin } from "../foundation/deadline.js";
import { sleep } from "../foundation/time.js";

const KEY = "stops";
/** The deciding policy named in every record of a stopped call. */
export const EMERGENCY_STOP_POLICY = "hookbus:emergency-stop";
/** A coordinator that has not read the list for this long blocks every call (fail closed). */
export const STOPS_STALE_AFTER_MS = 2000;
/**
 * An agent whose last good read started longer ago than this sends every call to a coordinator:
 * so a stop stored this long ago is honoured by every fast path, whatever its reads do.
 * `hookbus stop` waits this long after storing before it returns.
 */
export const AGENT_STOPS_STALE_AFTER_MS = 750;
/** Each read is bounded so a hung request cannot hold the follower past its staleness bound. */
const READ_TIMEOUT_MS = 1000;
const MAX_NAME = 256;
const MAX_REASON = 1024;
const MAX_STOPS = 1000;
const CAS_ATTEMPTS = 5;

export const STOP_KINDS = ["agent", "tool"] as const;
export type StopKind = (typeof STOP_KINDS)[number];

/** Printable, no control characters: names end up in reasons, logs and the UI. */
const Name = z
  .string()
  .min(1, "the name is empty")
  .max(MAX_NAME, `the name is longer than ${MAX_NAME} characters`)
  .regex(/^[^\p{Cc}\p{Cf}]+$/u, "the name holds control or format characters")
  .refine((s) => s.trim() === s, "the name has leading or trailing spaces");

/** One stop in force: what, who, when, why. */
export interface Stop {
  kind: StopKind;
  name: string;
  by: string;
  /** ISO 8601, UTC. */
  at: string;
  reason: string;
}

/** The change that made a revision of the list (kept in it: the key's history is the record). */
export interface StopChange extends Stop {
  action: "stop" | "resume";
}

export interface StopDocument {
  stops: Stop[];
  change?: StopChange | undefined;
}

const stopShape = {
  kind: z.enum(STOP_KINDS),
  name: Name,
  by: Name,
  at: z.iso.datetime(),
  reason: z.string().max(MAX_REASON, `the reason is longer than ${MAX_REASON} characters`),
};
const StopChangeSchema: z.ZodType<StopChange> = z.strictObject({
  ...stopShape,
  action: z.enum(["stop", "resume"]),
});
const StopDocumentSchema: z.ZodType<StopDocument> = z.strictObject({
  stops: z.array(z.strictObject(stopShape)).max(MAX_STOPS, `more than ${MAX_STOPS} stops`),
  change: StopChangeSchema.optional(),
});

function invalid(message: string, details: Record<string, unknown> = {}): HookbusError {
  return new HookbusError("HOOKBUS_INVALID_STOP", message, details);
}

/** Check what an operator asked to stop; a tool may be a class: `class:shell`. */
export function parseStopTarget(kind: unknown, name: unknown): { kind: StopKind; name: string } {
  if (typeof kind !== "string" || !(STOP_KINDS as readonly string[]).includes(kind))
    throw invalid(`a stop is of an agent or a tool, not ${JSON.stringify(kind)}`, { kind });
  const parsed = Name.safeParse(name);
  if (!parsed.success)
    throw invalid(`invalid ${kind} name: ${parsed.error.issues[0]?.message}`, {
      issues: zodIssues(parsed.error),
    });
  const cls = toolClassName(parsed.data);
  if (cls !== undefined && (kind !== "tool" || !isToolClass(cls)))
    throw invalid(
      kind === "tool"
        ? `unknown tool class ${JSON.stringify(cls)} (one of ${TOOL_CLASSES.join(", ")})`
        : "only a tool stop may name a class",
      { name: parsed.data },
    );
  return { kind: kind as StopKind, name: parsed.data };
}

function toolClassName(name: string): string | undefined {
  return name.startsWith("class:") ? name.slice("class:".length) : undefined;
}

export function parseStopDocument(value: unknown, source: string): StopDocument {
  const parsed = StopDocumentSchema.safeParse(value);
  if (!parsed.success)
    throw invalid(`${source}: not a valid stop list`, { issues: zodIssues(parsed.error) });
  return parsed.data;
}

/** What a call is, for matching: its agent and, for tool hooks, the tool as policies see it. */
export interface StoppableCall {
  agentId: string;
  toolName?: string | undefined;
  /** The registry revision's vocabulary (its own tools' classes); default the shipped one. */
  vocabulary?: ToolVocabulary | undefined;
}

/** The stops of one list by what they match, built once per revision (the fast path asks per call). */
interface StopIndex {
  agents: Map<string, Stop>;
  tools: Map<string, Stop>;
  /** By class name, without the `class:` prefix. */
  classes: Map<string, Stop>;
}

function indexOf(stops: readonly Stop[]): StopIndex {
  const index: StopIndex = { agents: new Map(), tools: new Map(), classes: new Map() };
  for (const stop of stops) {
    const cls = stop.kind === "tool" ? toolClassName(stop.name) : undefined;
    const into =
      stop.kind === "agent" ? index.agents : cls === undefined ? index.tools : index.classes;
    const key = cls ?? (stop.kind === "tool" ? bareToolName(stop.name) : stop.name);
    if (!into.has(key)) into.set(key, stop);
  }
  return index;
}

/** The list in force at one revision of the key (0: never written). */
export class StopList {
  private index: StopIndex | undefined;

  constructor(
    readonly revision: number,
    readonly stops: readonly Stop[],
  ) {}

  static empty(): StopList {
    return new StopList(0, []);
  }

  get size(): number {
    return this.stops.length;
  }

  /**
   * The stop that blocks this call, if any: an agent stop first, then a stop of the tool by its
   * name, then one of its class. Constant time in the list's size: agents consult it on their
   * fast path, per call.
   */
  stopFor(call: StoppableCall): Stop | undefined {
    if (this.stops.length === 0) return undefined;
    const index = (this.index ??= indexOf(this.stops));
    const agent = index.agents.get(call.agentId);
    if (agent !== undefined || call.toolName === undefined) return agent;
    // Tool stops are indexed by their bare name, so either MCP spelling finds them (stopNamesTool).
    const byName = index.tools.get(bareToolName(call.toolName));
    // Classified only when a class stop is in force: classifying is the costly part.
    if (byName !== undefined || index.classes.size === 0) return byName;
    const toolClass = (call.vocabulary ?? toolVocabulary).classify(call.toolName).class;
    return index.classes.get(toolClass);
  }
}

/**
 * A stop of a tool name holds for that tool under both MCP spellings: `delete_repo` stops
 * `mcp__github__delete_repo`, and `mcp__github__delete_repo` stops the MCP gateway's bare
 * `delete_repo` (whose server the coordinator does not see: in an emergency, a same-named tool of
 * another server stopped too is the safe side). Names are exact, in case too, as frameworks
 * dispatch them.
 */
export function stopNamesTool(stopName: string, toolName: string): boolean {
  return stopName === toolName || bareToolName(stopName) === bareToolName(toolName);
}

/** A tool's name without its MCP server: `mcp__github__delete_repo` → `delete_repo`. */
function bareToolName(name: string): string {
  return parseMcpToolName(name)?.tool ?? name;
}

/** The reason a stopped call's record and answer carry. */
export function stopReason(stop: Stop): string {
  const why = stop.reason === "" ? "no reason given" : stop.reason;
  return `emergency stop: ${stop.kind} ${stop.name} stopped by ${stop.by} at ${stop.at}: ${why}`;
}

export class StopStore {
  constructor(private readonly kv: KV) {}

  static async open(nc: NatsConnection, subjects: Subjects): Promise<StopStore> {
    return new StopStore(await openRegistryBucket(nc, subjects, READ_TIMEOUT_MS));
  }

  async current(): Promise<StopList> {
    return listOf(await this.kv.get(KEY));
  }

  /** The key's history, newest first (who stopped or resumed what). */
  async history(): Promise<{ revision: number; change?: StopChange }[]> {
    const changes: { revision: number; change?: StopChange }[] = [];
    for await (const entry of await this.kv.history({ key: KEY })) {
      if (entry.operation !== "PUT") continue;
      const doc = StopDocumentSchema.safeParse(entry.json());
      changes.push({
        revision: entry.revision,
        ...(doc.success && doc.data.change ? { change: doc.data.change } : {}),
      });
    }
    return changes.reverse();
  }

  /**
   * Apply one change by compare-and-set, so two operators stopping at once both land. Resuming
   * what is not stopped stores nothing (`changed: false`).
   */
  async change(change: StopChange): Promise<{ list: StopList; changed: boolean }> {
    const valid = StopChangeSchema.safeParse(change);
    if (!valid.success)
      throw invalid("not a valid stop change", { issues: zodIssues(valid.error) });
    for (let attempt = 0; attempt < CAS_ATTEMPTS; attempt++) {
      const entry = await this.kv.get(KEY);
      const before = listOf(entry);
      const others = before.stops.filter((s) => s.kind !== change.kind || s.name !== change.name);
      if (change.action === "resume" && others.length === before.size)
        return { list: before, changed: false };
      const { action: _action, ...stop } = change;
      const stops = change.action === "stop" ? [...others, stop] : others;
      const doc = parseStopDocument({ stops, change }, "the new stop list");
      const value = JSON.stringify(doc);
      try {
        const revision =
          entry === null
            ? await this.kv.create(KEY, value)
            : await this.kv.update(KEY, value, entry.revision);
        return { list: new StopList(revision, doc.stops), changed: true };
      } catch (error) {
        if (!isWrongLastSequence(error)) throw error;
      }
    }
    throw new HookbusError(
      "HOOKBUS_STATE_CONFLICT",
      `the stop list kept changing under ${CAS_ATTEMPTS} attempts; try again`,
    );
  }
}

function isWrongLastSequence(error: unknown): boolean {
  return /wrong last sequence|key exists/i.test(String((error as Error)?.message ?? error));
}

/** The stored value is not a stop list (written by hand): not JSON, or not valid. */
function isMalformed(error: unknown): boolean {
  return (
    error instanceof SyntaxError ||
    (error instanceof HookbusError && error.code === "HOOKBUS_INVALID_STOP")
  );
}

/** A deleted or purged key is an empty list (nothing stopped), like a key never written. */
function listOf(entry: KvEntry | null): StopList {
  if (entry === null) return StopList.empty();
  if (entry.operation !== "PUT") return new StopList(entry.revision, []);
  const doc = parseStopDocument(entry.json(), `stop list revision ${entry.revision}`);
  return new StopList(entry.revision, doc.stops);
}

export type StopListState =
  | { readable: true; list: StopList }
  | {
      readable: false;
      why: string;
      list: StopList;
      error?: unknown;
      /** A fresh read may make it readable (stale, or not re-read since a reconnect); false: malformed. */
      waitable: boolean;
    };

/** The stop list in force, and a way to wait for a fresh read of it (StopListFollower). */
export interface StopListSource {
  state(): StopListState;
  /**
   * The state once a fresh read succeeded, or at `deadline`, whichever comes first: readable at
   * once when the last good read is fresh; a malformed value is never waited out.
   */
  fresh(deadline: number): Promise<StopListState>;
}

export interface FollowOptions {
  checkMs?: number;
  staleAfterMs?: number;
}

/** Pause between two reads a waiter starts while reads fail (each read is bounded by its own timeout). */
const RETRY_PAUSE_MS = 50;

/**
 * Keeps the list in force fresh by reading the key every `checkMs`. `state()` says whether it may
 * be trusted: not when the last good read is older than `staleAfterMs`, nor when the key holds a
 * value that fails validation (someone wrote it by hand): what it stops is then unknown, nor,
 * after a reconnect, before a read started since then has succeeded (issue 32, item 1).
 *
 * `fresh(deadline)` waits for such a read instead of failing at once: a call whose list is stale
 * (NATS just came back) waits for the re-read within its deadline. Waiters share one read.
 */
export class StopListFollower implements StopListSource {
  private list = StopList.empty();
  /** When the last good read started (freshness counts from then: the value is at least that recent). */
  private lastRead = 0;
  /** Only a read started at or after this counts (set at a reconnect: re-read before trusting). */
  private readAfter = 0;
  /** The key holds a value that fails validation: unreadable at once, whatever the last read. */
  private failure: string | undefined;
  /** The last read failed (a timeout, NATS away): unreadable only once the last good read is stale. */
  private readFailure: string | undefined = "not read yet";
  /** The last read's error, kept as the cause (a start retries transient JetStream failures). */
  private error: unknown;
  private everRead = false;
  private timer: NodeJS.Timeout | undefined;
  /** The newest read in flight: periodic reads and waiters join it rather than pile up. */
  private reading: { started: number; done: Promise<void> } | undefined;
  private readonly staleAfterMs: number;
  private readonly checkMs: number;

  constructor(
    private readonly store: StopStore,
    private readonly logger: Logger,
    options: FollowOptions = {},
  ) {
    this.staleAfterMs = options.staleAfterMs ?? STOPS_STALE_AFTER_MS;
    this.checkMs = options.checkMs ?? REGISTRY_CHECK_MS;
  }

  /** Read once (the caller decides whether a failed first read is fatal), then keep reading. */
  async start(): Promise<StopListState> {
    await this.readStartedSince(0);
    this.timer = setInterval(() => void this.readStartedSince(0), this.checkMs);
    this.timer.unref();
    return this.state();
  }

  state(): StopListState {
    const now = Date.now();
    if (this.failure === undefined && this.trusted(now)) return { readable: true, list: this.list };
    const since = this.lastRead === 0 ? "" : ` (last read ${now - this.lastRead} ms ago)`;
    const reconnected =
      this.lastRead !== 0 && this.lastRead < this.readAfter
        ? "not re-read since a reconnect"
        : undefined;
    const why = `${this.failure ?? this.readFailure ?? reconnected ?? "no fresh read"}${since}`;
    return {
      readable: false,
      why,
      list: this.list,
      error: this.error,
      waitable: this.failure === undefined,
    };
  }

  private trusted(now: number): boolean {
    return this.lastRead >= this.readAfter && now - this.lastRead <= this.staleAfterMs;
  }

  /** The state once a read started since the last reconnect succeeded, or at `deadline`. */
  async fresh(deadline: number): Promise<StopListState> {
    for (;;) {
      const state = this.state();
      const remaining = deadline - Date.now();
      if (state.readable || !state.waitable || remaining <= 0) return state;
      // A read started within the last check interval is joined; an older one may hang.
      const read = this.readStartedSince(Math.max(this.readAfter, Date.now() - this.checkMs));
      await settlesWithin(read, remaining);
      const after = this.state();
      if (after.readable || !after.waitable) return after;
      await sleep(Math.min(RETRY_PAUSE_MS, deadline - Date.now()));
    }
  }

  /**
   * The connection came back: what was read before may miss a stop stored while it was away, so
   * nothing read before now is trusted, and a read starts at once (not behind a read that hangs
   * on the old connection).
   */
  reconnected(): void {
    this.readAfter = Date.now();
    void this.readStartedSince(this.readAfter);
  }

  /** Join the read in flight if it started at or after `since`, else start one. */
  private readStartedSince(since: number): Promise<void> {
    const running = this.reading;
    if (running !== undefined && running.started >= since) return running.done;
    const started = Date.now();
    const done = this.read(started).finally(() => {
      if (this.reading?.done === done) this.reading = undefined;
    });
    this.reading = { started, done };
    return done;
  }

  private async read(started: number): Promise<void> {
    try {
      const list = await this.store.current();
      // Reads may overlap (a reconnect starts one beside a hung one): the newest start wins.
      if (started < this.lastRead) return;
      if (list.revision !== this.list.revision)
        this.logger.warn(
          { revision: list.revision, stops: list.stops },
          `emergency stop list in force: ${list.size} stop(s)`,
        );
      this.list = list;
      this.lastRead = started;
      if ((this.failure ?? this.readFailure) !== undefined && this.everRead)
        this.logger.info("the emergency stop list is readable again");
      this.everRead = true;
      this.failure = undefined;
      this.readFailure = undefined;
    } catch (error) {
      if (started < this.lastRead) return;
      if ((this.failure ?? this.readFailure) === undefined)
        this.logger.error({ err: error }, "the emergency stop list cannot be read");
      const why = error instanceof Error ? error.message : String(error);
      // A read that failed says nothing about the list: the last good read stands until it is
      // stale (a NATS node moving under lame duck times one read out). A value that fails
      // validation does: what it stops is unknown now.
      if (isMalformed(error)) this.failure = why;
      else this.readFailure = why;
      this.error = error;
    }
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }
}
