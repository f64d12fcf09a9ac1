/**
 * `verifyLog`: recompute every session's hash chain from the log and the chain heads in the
 * `<ns>_chain` bucket, and report each record that was altered, removed or inserted
 * (docs/tamper-evidence.md).
 *
 * The log is read first and the heads after it. A record is stored only after its position was
 * claimed on the head, so every record the log holds has an index at most its session's head as
 * read afterwards: a record beyond the head was never claimed (inserted). Positions the head
 * claims that the log lacks may be records still in flight, so before reporting them as removed
 * the verifier waits `settleMs` and looks again; only positions missing both times are reported.
 */
import { DeliverPolicy } from "@nats-io/jetstream";
import type { Bus } from "../bus/bus.js";
import { decodeToken, encodeToken } from "../bus/tokens.js";
import {
  chainBucketName,
  parseChainHead,
  parseVoidedPosition,
  recordHash,
  recordMessageId,
  voidKey,
  type ChainHead,
  type VoidedPosition,
} from "../log/chain.js";
import type { LogRecord } from "../log/record.js";
import { assertLogExists } from "../log/reader.js";

export interface VerifyOptions {
  agentId?: string;
  sessionKey?: string;
  /**
   * Before reporting positions the head claims but the log lacks, wait this long (ms) and look
   * again: a record may be in flight between its claim and its store. Default 1000; 0 reports at
   * once.
   */
  settleMs?: number;
}

export type ProblemKind = "altered" | "removed" | "inserted";

export type ProblemReason =
  /** altered: the record's content does not hash to the hash it carries. */
  | "hash-mismatch"
  /** altered: its hash is not the one the next record links to. */
  | "link-mismatch"
  /** altered: the session's last record's hash is not the one its chain head holds. */
  | "head-mismatch"
  /** altered: the stored message cannot be decoded at all. */
  | "unreadable"
  /** removed: positions inside the chain with no record. */
  | "gap"
  /** removed: the chain head is ahead of the log's last record of the session. */
  | "truncated"
  /** inserted: a second record at an index the chain continues through another. */
  | "duplicate-index"
  /** inserted: the first record links to a predecessor. */
  | "bad-link"
  /** inserted: an index beyond the session's chain head (no writer ever claimed it). */
  | "beyond-head"
  /** inserted: the session has no chain head at all. */
  | "no-head"
  /** inserted: a record without a (well-formed) chain link. */
  | "no-chain";

/** What a problem record is, for people. */
export interface RecordSummary {
  kind?: string;
  hook?: string;
  callId?: string;
  eventId?: string;
  policy?: string;
}

export interface VerifyProblem {
  kind: ProblemKind;
  reason: ProblemReason;
  agentId: string;
  sessionKey: string;
  /** The record's chain index; for removed positions the first one missing. */
  index?: number;
  /** For removed positions: the last one missing. */
  toIndex?: number;
  /** The record's stream sequence (absent for removed positions). */
  seq?: number;
  subject?: string;
  record?: RecordSummary;
  /** The hash that was expected here (by the record itself, its successor or the head). */
  expected?: string;
  /** The hash found. */
  actual?: string;
  message: string;
}

export interface SessionVerification {
  agentId: string;
  sessionKey: string;
  /** Messages of the session in the log. */
  records: number;
  /** The highest chain index in the log (0: none). */
  lastIndex: number;
  /** The session's chain head in the bucket (null: none). */
  head: ChainHead | null;
  /** Positions that hold no record because it was a duplicate of a stored one (not problems). */
  voided: number[];
  ok: boolean;
  problems: VerifyProblem[];
}

export interface VerifyReport {
  ok: boolean;
  namespace: string;
  filter: { agentId?: string; sessionKey?: string };
  records: number;
  sessions: SessionVerification[];
  problems: VerifyProblem[];
  checkedAt: string;
}

// ---------------------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------------------

interface Link {
  index: number;
  prev: string | null;
  hash: string;
}

interface Entry {
  seq: number;
  subject: string;
  summary: RecordSummary;
  /** The message id the record was published with, when it can be told. */
  msgId: string | undefined;
  link: Link | undefined;
  /** Recomputed hash (when there is a link). */
  computed: string | undefined;
  unreadable?: string;
}

interface SessionData {
  key: string;
  agentId: string;
  sessionKey: string;
  entries: Entry[];
  head: ChainHead | null;
  voids: Map<number, VoidedPosition>;
}

function parseLink(value: unknown): Link | undefined {
  const v = value as Partial<Link> | null | undefined;
  return v !== null &&
    typeof v === "object" &&
    Number.isInteger(v.index) &&
    (v.index ?? 0) >= 1 &&
    (v.prev === null || typeof v.prev === "string") &&
    typeof v.hash === "string"
    ? { index: v.index!, prev: v.prev!, hash: v.hash }
    : undefined;
}

function summarize(raw: unknown): RecordSummary {
  const r = (typeof raw === "object" && raw !== null ? raw : {}) as Record<string, unknown>;
  const summary: RecordSummary = {};
  for (const field of ["kind", "hook", "callId", "eventId", "policy"] as const) {
    if (typeof r[field] === "string") summary[field] = r[field];
  }
  return summary;
}

function messageIdOf(raw: unknown): string | undefined {
  try {
    const id = recordMessageId(raw as LogRecord);
    return id.includes("undefined") ? undefined : id;
  } catch {
    return undefined;
  }
}

function toEntry(seq: number, subject: string, raw: unknown): Entry {
  const link = parseLink((raw as { chain?: unknown } | null)?.chain);
  let computed: string | undefined;
  if (link !== undefined) {
    try {
      computed = recordHash(raw);
    } catch {
      computed = undefined;
    }
  }
  return { seq, subject, summary: summarize(raw), msgId: messageIdOf(raw), link, computed };
}

/** The session key of `<ns>.audit.<agent>.<session>.<hook>.<kind>` (its two id tokens). */
function sessionTokens(namespace: string, subject: string): [string, string] | undefined {
  const parts = subject.split(".");
  return parts.length === 6 && parts[0] === namespace ? [parts[2]!, parts[3]!] : undefined;
}

/**
 * Every message of the filter up to the stream's last message when reading starts (so a log
 * being written still ends), decoded but not trusted: an undecodable one is a finding.
 */
async function readEntries(bus: Bus, filterSubject: string): Promise<Map<string, Entry[]>> {
  const bySession = new Map<string, Entry[]>();
  const lastSeq = (await bus.jsm.streams.info(bus.subjects.logStream)).state.last_seq;
  const consumer = await bus.js.consumers.get(bus.subjects.logStream, {
    filter_subjects: filterSubject,
    deliver_policy: DeliverPolicy.All,
  });
  const info = await consumer.info(true);
  if (info.num_pending === 0) return bySession;
  const messages = await consumer.consume({ max_messages: 256 });
  try {
    for await (const msg of messages) {
      if (msg.seq > lastSeq) break;
      const tokens = sessionTokens(bus.subjects.namespace, msg.subject);
      if (tokens !== undefined) {
        let entry: Entry;
        try {
          entry = toEntry(msg.seq, msg.subject, await bus.codec.decodeMessage(msg));
        } catch (error) {
          entry = {
            seq: msg.seq,
            subject: msg.subject,
            summary: {},
            msgId: undefined,
            link: undefined,
            computed: undefined,
            unreadable: String((error as Error)?.message ?? error),
          };
        }
        const key = `${tokens[0]}.${tokens[1]}`;
        const list = bySession.get(key) ?? [];
        list.push(entry);
        bySession.set(key, list);
      }
      if (msg.info.pending === 0 || msg.seq >= lastSeq) break;
    }
  } finally {
    messages.stop();
  }
  return bySession;
}

async function chainStream(bus: Bus): Promise<string | undefined> {
  const stream = `KV_${chainBucketName(bus.subjects)}`;
  try {
    await bus.jsm.streams.info(stream);
    return stream;
  } catch {
    return undefined; // no writer ever chained a record in this namespace
  }
}

/**
 * The current value of every key of the chain bucket matching `filter` (KV key syntax), read
 * from the bucket's stream with one consumer (last message per subject) that ends when it has
 * seen what the stream held when it started, however busy the bucket is.
 */
async function scanChain(bus: Bus, stream: string, filter: string): Promise<Map<string, unknown>> {
  const prefix = `$KV.${chainBucketName(bus.subjects)}.`;
  const values = new Map<string, unknown>();
  const consumer = await bus.js.consumers.get(stream, {
    filter_subjects: `${prefix}${filter}`,
    deliver_policy: DeliverPolicy.LastPerSubject,
  });
  const info = await consumer.info(true);
  if (info.num_pending === 0) return values;
  const messages = await consumer.consume({ max_messages: 256 });
  // Taken once the first message arrived, so the server-side consumer exists and every message
  // of its starting set (last per subject) is at most this sequence; later ones are updates.
  let lastSeq: number | undefined;
  try {
    for await (const msg of messages) {
      lastSeq ??= (await bus.jsm.streams.info(stream)).state.last_seq;
      if (msg.seq > lastSeq) break;
      const key = msg.subject.slice(prefix.length);
      const operation = msg.headers?.get("KV-Operation") ?? "";
      if (operation === "DEL" || operation === "PURGE") {
        values.delete(key);
      } else {
        try {
          values.set(key, msg.json());
        } catch {
          values.set(key, null);
        }
      }
      if (msg.info.pending === 0 || msg.seq >= lastSeq) break;
    }
  } finally {
    messages.stop();
  }
  return values;
}

interface Heads {
  heads: Map<string, ChainHead>;
  voids: Map<string, Map<number, VoidedPosition>>;
}

async function readHeads(
  bus: Bus,
  stream: string | undefined,
  agent: string,
  session: string,
): Promise<Heads> {
  const heads = new Map<string, ChainHead>();
  const voids = new Map<string, Map<number, VoidedPosition>>();
  if (stream === undefined) return { heads, voids };
  for (const [key, value] of await scanChain(bus, stream, `${agent}.${session}`)) {
    const head = parseChainHead(value);
    if (head !== undefined) heads.set(key, head);
  }
  for (const [key, value] of await scanChain(bus, stream, `${agent}.${session}.void.*`)) {
    const position = parseVoidedPosition(value);
    const owner = key.split(".").slice(0, 2).join(".");
    if (position === undefined || key !== voidKey(owner, position.index)) continue;
    const map = voids.get(owner) ?? new Map<number, VoidedPosition>();
    map.set(position.index, position);
    voids.set(owner, map);
  }
  return { heads, voids };
}

function decodeOr(token: string): string {
  try {
    return decodeToken(token);
  } catch {
    return token;
  }
}

async function snapshot(bus: Bus, stream: string | undefined, agent: string, session: string) {
  // The log first, the heads after it (see the file comment).
  const entries = await readEntries(bus, `${bus.subjects.namespace}.audit.${agent}.${session}.*.*`);
  const { heads, voids } = await readHeads(bus, stream, agent, session);
  const keys = new Set([...entries.keys(), ...heads.keys()]);
  const sessions: SessionData[] = [...keys].sort().map((key) => {
    const [a, s] = key.split(".") as [string, string];
    return {
      key,
      agentId: decodeOr(a),
      sessionKey: decodeOr(s),
      entries: entries.get(key) ?? [],
      head: heads.get(key) ?? null,
      voids: voids.get(key) ?? new Map(),
    };
  });
  return sessions;
}

// ---------------------------------------------------------------------------------------------
// Checking one session
// ---------------------------------------------------------------------------------------------

const short = (hash: string | null | undefined) =>
  hash === null || hash === undefined ? "null" : hash.slice(0, 12);

function describe(entry: Entry): string {
  const s = entry.summary;
  const what = [s.kind, s.hook, s.callId ?? s.eventId, s.policy].filter(Boolean).join(" ");
  return `seq ${entry.seq}${entry.link === undefined ? "" : ` index ${entry.link.index}`}${what === "" ? "" : ` (${what})`}`;
}

interface Analysis {
  verification: SessionVerification;
  missing: Set<number>;
}

async function analyze(bus: Bus, data: SessionData): Promise<Analysis> {
  const problems: VerifyProblem[] = [];
  const where = { agentId: data.agentId, sessionKey: data.sessionKey };
  const about = (entry: Entry) => ({
    ...where,
    seq: entry.seq,
    subject: entry.subject,
    record: entry.summary,
    ...(entry.link === undefined ? {} : { index: entry.link.index }),
  });
  const head = data.head;
  const chained: (Entry & { link: Link })[] = [];

  for (const entry of data.entries) {
    if (entry.unreadable !== undefined) {
      problems.push({
        ...about(entry),
        kind: "altered",
        reason: "unreadable",
        message: `${describe(entry)} cannot be decoded: ${entry.unreadable}`,
      });
    } else if (entry.link === undefined) {
      problems.push({
        ...about(entry),
        kind: "inserted",
        reason: "no-chain",
        message: `${describe(entry)} has no chain link: no hookbus writer stored it (or it predates tamper evidence)`,
      });
    } else {
      if (entry.computed !== entry.link.hash) {
        problems.push({
          ...about(entry),
          kind: "altered",
          reason: "hash-mismatch",
          expected: entry.link.hash,
          ...(entry.computed === undefined ? {} : { actual: entry.computed }),
          message: `${describe(entry)} was altered: its content hashes to ${short(entry.computed)}, not to its chain hash ${short(entry.link.hash)}`,
        });
      }
      if (head === null) {
        problems.push({
          ...about(entry),
          kind: "inserted",
          reason: "no-head",
          message: `${describe(entry)}: the chain bucket has no head for this session, so no writer claimed this record's position`,
        });
      } else if (entry.link.index > head.index) {
        problems.push({
          ...about(entry),
          kind: "inserted",
          reason: "beyond-head",
          message: `${describe(entry)} is beyond the session's chain head (index ${head.index}): no writer claimed its position`,
        });
      } else {
        chained.push(entry as Entry & { link: Link });
      }
    }
  }

  const byIndex = new Map<number, (Entry & { link: Link })[]>();
  for (const entry of chained) {
    const list = byIndex.get(entry.link.index) ?? [];
    list.push(entry);
    byIndex.set(entry.link.index, list);
  }
  const lastIndex = Math.max(0, ...data.entries.map((e) => e.link?.index ?? 0));
  const msgIds = new Map<string, number[]>();
  for (const entry of chained) {
    if (entry.msgId === undefined) continue;
    msgIds.set(entry.msgId, [...(msgIds.get(entry.msgId) ?? []), entry.link.index]);
  }

  const voided: number[] = [];
  const missing = new Set<number>();
  const top = head?.index ?? 0;
  let expected: string | undefined = head?.hash;
  let expectedBy: "head" | number = "head";

  for (let i = top; i >= 1; i--) {
    const candidates = byIndex.get(i) ?? [];
    if (candidates.length === 0) {
      const position = data.voids.get(i);
      if (
        position !== undefined &&
        (expected === undefined || position.hash === expected) &&
        (await voidIsGenuine(bus, position, msgIds))
      ) {
        voided.push(i);
        expected = position.prev ?? undefined;
        expectedBy = i;
        continue;
      }
      missing.add(i);
      expected = undefined;
      continue;
    }
    const fitsPrev = (c: Entry & { link: Link }) =>
      i === 1
        ? c.link.prev === null
        : (byIndex.get(i - 1) ?? []).some((p) => p.link.hash === c.link.prev) ||
          data.voids.get(i - 1)?.hash === c.link.prev;
    const score = (c: Entry & { link: Link }) =>
      (expected !== undefined && c.link.hash === expected ? 4 : 0) +
      (c.computed === c.link.hash ? 2 : 0) +
      (fitsPrev(c) ? 1 : 0);
    const chosen = [...candidates].sort((a, b) => score(b) - score(a) || a.seq - b.seq)[0]!;
    for (const other of candidates) {
      if (other === chosen) continue;
      problems.push({
        ...about(other),
        kind: "inserted",
        reason: "duplicate-index",
        message: `${describe(other)} takes index ${i}, which the chain continues through seq ${chosen.seq}`,
      });
    }
    if (expected !== undefined && chosen.link.hash !== expected) {
      problems.push(
        expectedBy === "head"
          ? {
              ...about(chosen),
              kind: "altered",
              reason: "head-mismatch",
              expected,
              actual: chosen.link.hash,
              message: `${describe(chosen)} is not the record its chain head vouches for: the head holds ${short(expected)}, the record ${short(chosen.link.hash)}`,
            }
          : {
              ...about(chosen),
              kind: "altered",
              reason: "link-mismatch",
              expected,
              actual: chosen.link.hash,
              message: `${describe(chosen)} was altered: the next record (index ${expectedBy}) links to ${short(expected)}, this record's hash is ${short(chosen.link.hash)}`,
            },
      );
    }
    if (i === 1 && chosen.link.prev !== null) {
      problems.push({
        ...about(chosen),
        kind: "inserted",
        reason: "bad-link",
        message: `${describe(chosen)} is the session's first record but links to a predecessor (${short(chosen.link.prev)})`,
      });
    }
    expected = chosen.link.prev ?? undefined;
    expectedBy = i;
  }

  // Removed positions, as ranges (reported after the settle pass decides which stay).
  problems.push(...removedProblems(data, missing, lastIndex));
  return {
    missing,
    verification: {
      ...where,
      records: data.entries.length,
      lastIndex,
      head,
      voided: voided.reverse(),
      ok: problems.length === 0,
      problems: sortProblems(problems),
    },
  };
}

/** A voided position is genuine when the log holds the record it duplicates elsewhere. */
async function voidIsGenuine(
  bus: Bus,
  position: VoidedPosition,
  msgIds: Map<string, number[]>,
): Promise<boolean> {
  if ((msgIds.get(position.msgId) ?? []).some((index) => index !== position.index)) return true;
  try {
    const msg = await bus.jsm.streams.getMessage(bus.subjects.logStream, {
      seq: position.duplicateOf,
    });
    if (msg === null) return false;
    const raw = await bus.codec.decodeMessage({ data: msg.data, headers: msg.header });
    return messageIdOf(raw) === position.msgId;
  } catch {
    return false;
  }
}

function removedProblems(
  data: SessionData,
  missing: ReadonlySet<number>,
  lastIndex: number,
): VerifyProblem[] {
  const indexes = [...missing].sort((a, b) => a - b);
  const problems: VerifyProblem[] = [];
  for (let i = 0; i < indexes.length;) {
    let j = i;
    while (j + 1 < indexes.length && indexes[j + 1] === indexes[j]! + 1) j++;
    const from = indexes[i]!;
    const to = indexes[j]!;
    const range = from === to ? `index ${from}` : `indexes ${from}-${to}`;
    const truncated = from > lastIndex;
    problems.push({
      kind: "removed",
      reason: truncated ? "truncated" : "gap",
      agentId: data.agentId,
      sessionKey: data.sessionKey,
      index: from,
      toIndex: to,
      message: truncated
        ? `${range}: the chain head says the session has ${data.head?.index ?? 0} records, the log's last is at index ${lastIndex} (records removed from the end, or a writer died between claiming a position and storing its record)`
        : `${range}: no record in the log (removed, or a writer died between claiming the position and storing its record)`,
    });
    i = j + 1;
  }
  return problems;
}

const KIND_ORDER: Record<ProblemKind, number> = { altered: 0, removed: 1, inserted: 2 };

function sortProblems(problems: VerifyProblem[]): VerifyProblem[] {
  return problems.sort(
    (a, b) =>
      (a.index ?? 0) - (b.index ?? 0) ||
      KIND_ORDER[a.kind] - KIND_ORDER[b.kind] ||
      (a.seq ?? 0) - (b.seq ?? 0),
  );
}

// ---------------------------------------------------------------------------------------------
// The whole log
// ---------------------------------------------------------------------------------------------

/** Verify the hash chains of the log (one session, one agent's, or every session). */
export async function verifyLog(bus: Bus, options: VerifyOptions = {}): Promise<VerifyReport> {
  await assertLogExists(bus);
  const agent = options.agentId === undefined ? "*" : encodeToken(options.agentId);
  const session = options.sessionKey === undefined ? "*" : encodeToken(options.sessionKey);
  const settleMs = options.settleMs ?? 1000;
  const stream = await chainStream(bus);

  const first = await snapshot(bus, stream, agent, session);
  const results = new Map<string, SessionVerification>();
  const unsettled: { data: SessionData; missing: Set<number> }[] = [];
  for (const data of first) {
    const analysis = await analyze(bus, data);
    results.set(data.key, analysis.verification);
    if (analysis.missing.size > 0) unsettled.push({ data, missing: analysis.missing });
  }

  if (unsettled.length > 0 && settleMs > 0) {
    // Positions claimed but not yet stored may be records in flight: look again, and report as
    // removed only what is missing both times.
    await new Promise((r) => setTimeout(r, settleMs));
    for (const { data, missing } of unsettled) {
      const [a, s] = data.key.split(".") as [string, string];
      const again = (await snapshot(bus, stream, a, s)).find((d) => d.key === data.key) ?? {
        ...data,
        entries: [],
      };
      const analysis = await analyze(bus, again);
      const still = new Set([...analysis.missing].filter((i) => missing.has(i)));
      const lastIndex = analysis.verification.lastIndex;
      const problems = sortProblems([
        ...analysis.verification.problems.filter((p) => p.kind !== "removed"),
        ...removedProblems(again, still, lastIndex),
      ]);
      results.set(data.key, { ...analysis.verification, problems, ok: problems.length === 0 });
    }
  }

  const sessions = [...results.values()];
  const problems = sessions.flatMap((s) => s.problems);
  return {
    ok: problems.length === 0,
    namespace: bus.subjects.namespace,
    filter: {
      ...(options.agentId === undefined ? {} : { agentId: options.agentId }),
      ...(options.sessionKey === undefined ? {} : { sessionKey: options.sessionKey }),
    },
    records: sessions.reduce((n, s) => n + s.records, 0),
    sessions,
    problems,
    checkedAt: new Date().toISOString(),
  };
}

/** The report for people: one line per session with problems, one per problem, a verdict. */
export function formatVerifyReport(
  report: VerifyReport,
  options: { verbose?: boolean } = {},
): string {
  const lines: string[] = [];
  for (const s of report.sessions) {
    if (s.ok && options.verbose !== true) continue;
    const head = s.head === null ? "no head" : `head ${s.head.index}`;
    const voided = s.voided.length === 0 ? "" : `, ${s.voided.length} voided (retried duplicates)`;
    lines.push(
      `${s.agentId} / ${s.sessionKey}: ${s.records} records, last index ${s.lastIndex}, ${head}${voided}: ${s.ok ? "ok" : `${s.problems.length} problem(s)`}`,
    );
    for (const p of s.problems) lines.push(`  ${p.kind.padEnd(8)} ${p.message}`);
  }
  const count = (kind: ProblemKind) => report.problems.filter((p) => p.kind === kind).length;
  const bad = report.sessions.filter((s) => !s.ok).length;
  lines.push(
    report.ok
      ? `OK: ${report.records} records in ${report.sessions.length} session(s) of namespace ${report.namespace} verified; no record altered, removed or inserted`
      : `TAMPERED: ${report.problems.length} problem(s) in ${bad} of ${report.sessions.length} session(s) of namespace ${report.namespace}: ${count("altered")} altered, ${count("removed")} removed, ${count("inserted")} inserted`,
  );
  return lines.join("\n");
}
