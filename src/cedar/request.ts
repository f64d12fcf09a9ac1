/**
 * Cedar requests built from a hook call. principal `Agent::"<agentId>"`, action
 * `Action::"<hook>"`, resource the tool (`Tool::"<name>"` with its vocabulary class and MCP
 * server) or, for a decision about the whole call, `Session::"<sessionKey>"`; context the event's
 * fields as typed facts (schema.ts declares them) plus the session facts.
 *
 * The LLM hooks give one request for the whole call and one per tool (before_llm_call) or per
 * tool call (after_llm_call), so a forbid on one tool narrows it away instead of blocking the turn.
 */
import type { ModifyingHookName } from "../catalog/catalog.js";
import { toolCallId, toolCallName, toolDefinitionName, type ToolCall } from "../catalog/common.js";
import type { ActionFacts, ToolCallFacts } from "../facts/index.js";
import { findInShape } from "../facts/shape.js";
import type { ShellFacts } from "../facts/shell/index.js";
import { canonicalize } from "../foundation/canonical-json.js";
import { toolFacts, type ToolFacts } from "../vocabulary/facts.js";
import { secretKinds } from "../vocabulary/secrets.js";
import { toolVocabulary, type ToolVocabulary } from "../vocabulary/vocabulary.js";
import { cedarFacts, computeCallFacts } from "./action-context.js";
import { emptySessionFacts, type SessionFacts } from "./session-facts.js";
import {
  BUCKET_MS,
  recentCounts,
  type RecentCounts,
  type WindowBucket,
} from "./session-windows.js";
import type { CedarContext, CedarValueJson, EntityJson, EntityUidJson } from "./wasm.js";
import type { ContextPaths } from "./context-keys.js";

export type RequestTarget =
  | { kind: "call" }
  | { kind: "tool"; name: string }
  | { kind: "toolCall"; index: number; id?: string };

export interface CedarRequest {
  target: RequestTarget;
  principal: EntityUidJson;
  action: EntityUidJson;
  resource: EntityUidJson;
  context: CedarContext;
  entities: EntityJson[];
}

export interface RequestInput {
  hook: ModifyingHookName;
  context: Readonly<Record<string, unknown>>;
  event: Readonly<Record<string, unknown>>;
  session: SessionFacts;
  /** When the call arrived (ms since the epoch): the time `session.recent` is counted at. */
  now?: number | undefined;
  vocabulary?: ToolVocabulary;
  /**
   * Look for secrets (`call.secrets`, `resultSecrets`, `contentSecrets`); default true. False
   * leaves them empty: for a policy set that never reads them (CedarPolicySet.readsSecrets).
   */
  findSecrets?: boolean;
  /**
   * The call's fact set as the coordinator computed it (src/policy/call-facts.ts): the same
   * object workers and the record get. Absent: computed here, once per event, with the shell
   * parser (action-context.ts), on first read of `context.facts`.
   */
  facts?: ActionFacts;
  /** Build `context.session` (default true); false for a set that never reads it. */
  readsSession?: boolean;
  /**
   * The paths of `context.call` the set reads (context-keys.ts), default all: a field no policy
   * reads is not built, so a set that reads `call.paths` never pays for the canonical JSON of
   * the params or for the search of nested commands and URLs. Pruning drops them anyway.
   */
  callPaths?: ContextPaths | "all" | undefined;
}

type Builder = (input: RequestInput, base: Base) => CedarRequest[];

interface Base {
  principal: EntityUidJson;
  action: EntityUidJson;
  agent: EntityJson;
  /** `context.session.refusalsByPolicy`: an entity whose tags are the counts (Cedar's map). */
  refusals: EntityJson | undefined;
  context: CedarContext;
}

const BUILDERS: Record<ModifyingHookName, Builder> = {
  before_agent_reply: (input, base) => [
    sessionRequest(input, base, { cleanedBody: text(input.event.cleanedBody) }),
  ],
  before_llm_call: (input, base) => {
    const names = toolDefinitions(input.event.tools).map(toolDefinitionName);
    const shared = { ...llmFields(input.event), toolNames: names };
    return [
      sessionRequest(input, base, shared),
      ...names.map((name) => toolRequest(input, base, { kind: "tool", name }, name, shared)),
    ];
  },
  after_llm_call: (input, base) => {
    const calls = (input.event.toolCalls ?? []) as ToolCall[];
    const shared = { ...llmFields(input.event), toolNames: calls.map(toolCallName) };
    return [
      sessionRequest(input, base, shared),
      ...calls.map((call, index) => {
        const name = toolCallName(call);
        const id = toolCallId(call);
        const target: RequestTarget =
          id === undefined ? { kind: "toolCall", index } : { kind: "toolCall", index, id };
        const request = toolRequest(input, base, target, name, {
          ...shared,
          call: callFacts(input, name, argumentsOf(call), id),
        });
        return withActionFacts(request, input, index, name);
      }),
    ];
  },
  before_tool_call: (input, base) => [toolCallRequest(input, base, {})],
  before_tool_result: (input, base) => {
    const resultText = jsonText(input.event.result);
    return [
      toolCallRequest(input, base, {
        isError: input.event.isError === true,
        resultText,
        resultSecrets: secretsIn(input, [resultText]),
      }),
    ];
  },
  before_response_emit: (input, base) => {
    const content = text(input.event.content);
    const allContent = Array.isArray(input.event.allContent)
      ? input.event.allContent.map(text)
      : [];
    const contentSecrets = secretsIn(input, [content, ...allContent]);
    return [sessionRequest(input, base, { content, allContent, contentSecrets })];
  },
};

export function cedarRequests(input: RequestInput): CedarRequest[] {
  const agentId = String(input.context.agentId);
  const principal = { type: "Agent", id: agentId };
  const base: Base = {
    principal,
    action: { type: "Action", id: input.hook },
    agent: { uid: principal, attrs: {}, parents: [] },
    refusals: input.readsSession === false ? undefined : refusalsEntity(input),
    context: baseContext(input),
  };
  return BUILDERS[input.hook](input, base);
}

function baseContext(input: RequestInput): CedarContext {
  const { context } = input;
  const base: CedarContext = {
    agentId: String(context.agentId),
    sessionKey: String(context.sessionKey),
  };
  // The windows cost a pass over the buckets: only for a set that reads the session.
  if (input.readsSession !== false) base.session = sessionContext(input);
  if (typeof context.runId === "string") base.runId = context.runId;
  if (typeof context.channel === "string") base.channel = context.channel;
  return base;
}

/** `context.session`: the stored facts as schema.ts declares them, windows counted at `now`. */
function sessionContext(input: RequestInput): CedarContext {
  const { session } = input;
  // Facts stored before these fields existed (another store, an older process) read as none.
  const learnt = session.refusals === undefined ? emptySessionFacts() : session;
  return {
    toolCalls: session.toolCalls,
    toolsCalled: session.toolsCalled,
    classesCalled: session.classesCalled,
    classCounts: session.classCounts,
    taint: session.taint,
    refusals: learnt.refusals,
    refusalsByClass: learnt.refusalsByClass,
    refusalsByPolicy: { __entity: { type: REFUSALS_TYPE, id: String(input.context.sessionKey) } },
    approvalsPending: learnt.approvalsPending,
    approvalsDenied: learnt.approvalsDenied,
    hosts: learnt.hosts,
    recipientDomains: learnt.recipientDomains,
    recent: recentAt(learnt.buckets, input.now ?? Date.now()) as unknown as CedarContext,
  };
}

const REFUSALS_TYPE = "PolicyCounts";

/**
 * The windows' counts, once per stored bucket list and bucket of time: a call makes several
 * requests (one per tool, one per Cedar entry), and a count changes only when `now` enters the
 * next bucket (every window is a whole number of buckets). The list is replaced, never changed,
 * by each update, so its identity is the key.
 */
const recentMemo = new WeakMap<readonly WindowBucket[], { slot: number; counts: RecentCounts }>();

function recentAt(buckets: readonly WindowBucket[], now: number): RecentCounts {
  const slot = Math.ceil(now / BUCKET_MS);
  const known = recentMemo.get(buckets);
  if (known?.slot === slot) return known.counts;
  const counts = recentCounts(buckets, now);
  recentMemo.set(buckets, { slot, counts });
  return counts;
}

/** The agent, the session's refusal counts when the set reads the session, the resource. */
function entitiesOf(base: Base, resource: EntityJson): EntityJson[] {
  return base.refusals === undefined
    ? [base.agent, resource]
    : [base.agent, base.refusals, resource];
}

function refusalsEntity(input: RequestInput): EntityJson {
  const uid = { type: REFUSALS_TYPE, id: String(input.context.sessionKey) };
  const tags = Object.assign({}, input.session.refusalsByPolicy ?? {});
  return { uid, attrs: {}, parents: [], tags };
}

function sessionRequest(input: RequestInput, base: Base, fields: CedarContext): CedarRequest {
  const resource = { type: "Session", id: String(input.context.sessionKey) };
  return {
    target: { kind: "call" },
    principal: base.principal,
    action: base.action,
    resource,
    context: withFields(base.context, fields),
    entities: entitiesOf(base, { uid: resource, attrs: {}, parents: [] }),
  };
}

function toolRequest(
  input: RequestInput,
  base: Base,
  target: RequestTarget,
  name: string,
  fields: CedarContext,
): CedarRequest {
  const identity = (input.vocabulary ?? toolVocabulary).classify(name);
  const resource = { type: "Tool", id: name };
  const attrs: Record<string, CedarValueJson> = { name, class: identity.class };
  if (identity.mcp !== undefined) attrs.server = identity.mcp.server;
  return {
    target,
    principal: base.principal,
    action: base.action,
    resource,
    context: withFields(base.context, fields),
    entities: entitiesOf(base, { uid: resource, attrs, parents: [] }),
  };
}

/**
 * `{ ...context, ...fields }` without the two spreads (hot path: foundation/hot-path.ts). Same
 * keys, same order, later values winning; every key here is hookbus's own, never the agent's.
 */
function withFields(context: CedarContext, fields: CedarContext): CedarContext {
  return Object.assign(Object.assign({}, context), fields);
}

/** `fields` is the caller's fresh literal: the call's facts are added to it, last. */
function toolCallRequest(input: RequestInput, base: Base, fields: CedarContext): CedarRequest {
  const name = text(input.event.toolName);
  const id = typeof input.event.toolCallId === "string" ? input.event.toolCallId : undefined;
  fields.call = callFacts(input, name, input.event.params, id);
  return withActionFacts(toolRequest(input, base, { kind: "call" }, name, fields), input, 0, name);
}

/**
 * `context.facts` (action-context.ts), computed when first read: a set that never reads it
 * (pruned away by context-keys.ts) never pays for parsing the call's commands.
 */
function withActionFacts(
  request: CedarRequest,
  input: RequestInput,
  index: number,
  name: string,
): CedarRequest {
  Object.defineProperty(request.context, "facts", {
    enumerable: true,
    configurable: true,
    get: () => factsRecord(input, index, name),
  });
  return request;
}

type Shell = ShellFacts | null;

/**
 * The records already built, per fact set and per event: every Cedar set of a call reads the
 * same ones, so the facts are computed, and turned into a record, once per call and tool.
 */
interface Built {
  vocabulary: unknown;
  facts: ActionFacts<Shell> | undefined;
  records: Map<number, CedarValueJson>;
}
const built = new WeakMap<object, Built>();

/** The tool's record: from the coordinator's facts when they are for this tool, else computed. */
function factsRecord(input: RequestInput, index: number, name: string): CedarValueJson {
  const given = input.facts?.tools[index] as ToolCallFacts<Shell> | undefined;
  const key: object = given !== undefined && given.name === name ? input.facts! : input.event;
  let entry = built.get(key);
  if (entry === undefined || entry.vocabulary !== input.vocabulary) {
    entry = { vocabulary: input.vocabulary, facts: undefined, records: new Map() };
    built.set(key, entry);
  }
  let record = entry.records.get(index);
  if (record === undefined) {
    record = key === input.facts ? cedarFacts(given!) : computedRecord(input, entry, index, name);
    entry.records.set(index, record);
  }
  return record;
}

function computedRecord(input: RequestInput, entry: Built, index: number, name: string) {
  entry.facts ??= computeCallFacts(input.hook, input.event, { vocabulary: input.vocabulary });
  const own = entry.facts.tools[index];
  if (own !== undefined && own.name === name) return cedarFacts(own);
  // Facts of another tool are no facts of this one: read as unparsed, never as harmless.
  const bare = computeCallFacts("before_tool_call", { toolName: name }).tools[0]!;
  return cedarFacts(bare, ["facts-mismatch"]);
}

/**
 * What one tool call is about, as vocabulary facts, plus its arguments as canonical JSON text:
 * the fields the set reads (RequestInput.callPaths), each as it would be with all of them.
 */
function callFacts(
  input: RequestInput,
  name: string,
  params: unknown,
  id: string | undefined,
): CedarValueJson {
  const reads = readerOf(input.callPaths);
  const vocabulary = input.vocabulary ?? toolVocabulary;
  const facts = toolFacts(name, params, { vocabulary });
  const call: Record<string, CedarValueJson> = {
    paths: facts.paths,
    recipients: facts.recipients,
  };
  if (reads("paramsText") || reads("secrets")) {
    const paramsText = jsonText(params);
    call.paramsText = paramsText;
    call.secrets = reads("secrets") ? secretsIn(input, [paramsText]) : [];
  }
  if (id !== undefined) call.id = id;
  if (facts.command !== undefined) call.command = facts.command;
  if (facts.url !== undefined) call.url = { ...facts.url };
  if (facts.query !== undefined) call.query = facts.query;
  const nestedRead = (reads("command") && facts.command === undefined) || reads("url");
  if (nestedRead && (facts.command === undefined || facts.url === undefined))
    addNested(call, params, facts);
  return call;
}

/** Whether a field of `context.call` is read: every field unless the set names the ones it reads. */
function readerOf(paths: ContextPaths | "all" | undefined): (field: string) => boolean {
  if (paths === undefined || paths === "all" || paths.whole) return () => true;
  return (field) => paths.children.has(field);
}

/**
 * What the top-level keys missed, found wherever the params nest it (src/facts/shape.ts):
 * OpenAI's local_shell sends `action.command` as an argv array, MCP clients a JSON string. Top
 * level keys first, as before; the nested ones only fill what they left out.
 */
function addNested(call: Record<string, CedarValueJson>, params: unknown, facts: ToolFacts): void {
  if (typeof params !== "object" || params === null) return;
  const nested = findInShape(params);
  if (facts.command === undefined && nested.commands.length > 0)
    call.command = nested.commands.map((c) => c.text).join("\n");
  // One URL only: with two (`{ url: "evil.com", see: "https://example.com" }`) the one that
  // parses need not be the one fetched, and a fetch without call.url is refused by the library.
  if (facts.url === undefined && nested.urls.length === 1) {
    const url = parseUrlFact(nested.urls[0]!);
    if (url !== undefined) call.url = url;
  }
}

/** The `{ href, scheme, host }` shape of call.url (vocabulary facts.ts), or undefined. */
function parseUrlFact(text: string): CedarValueJson | undefined {
  try {
    const url = new URL(text.trim());
    return {
      href: url.href,
      scheme: url.protocol.replace(/:$/, ""),
      host: url.hostname.toLowerCase(),
    };
  } catch {
    return undefined;
  }
}

function llmFields(event: Readonly<Record<string, unknown>>): CedarContext {
  const fields: CedarContext = {};
  if (typeof event.model === "string") fields.model = event.model;
  if (typeof event.iteration === "number" && Number.isSafeInteger(event.iteration))
    fields.iteration = event.iteration;
  return fields;
}

function toolDefinitions(value: unknown): Parameters<typeof toolDefinitionName>[0][] {
  return Array.isArray(value) ? (value as Parameters<typeof toolDefinitionName>[0][]) : [];
}

function argumentsOf(call: ToolCall): unknown {
  const raw =
    "function" in call && typeof call.function === "object" && call.function !== null
      ? (call.function as { arguments?: unknown }).arguments
      : (call as { arguments?: unknown }).arguments;
  if (typeof raw !== "string") return raw;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return { input: raw }; // not JSON: a free-text input, as the catalog presents one
  }
}

/** The secret types found in any of the texts (none looked for when the set reads none). */
function secretsIn(input: RequestInput, texts: readonly string[]): string[] {
  if (input.findSecrets === false) return [];
  return texts.length === 1 ? secretKinds(texts[0]!) : [...new Set(texts.flatMap(secretKinds))];
}

function text(value: unknown): string {
  return typeof value === "string" ? value : "";
}

/** Canonical JSON of a value ("" when it has none), so `like` patterns see one spelling. */
function jsonText(value: unknown): string {
  if (value === undefined) return "";
  if (typeof value === "string") return value;
  try {
    return canonicalize(value);
  } catch {
    return "";
  }
}
