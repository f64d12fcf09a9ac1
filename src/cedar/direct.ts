/**
 * Cedar's answer computed in TypeScript when every policy of a set can be evaluated here: the
 * engine copies its cached set into each call (about 2 µs per policy), so a request never seen
 * before costs 80–250 µs in WebAssembly, most of it for policies that a glance at
 * `resource.class` or one boolean fact rules out. Each policy is compiled once into a function
 * that answers true, false, or UNKNOWN; one UNKNOWN anywhere and the engine decides the request,
 * exactly as before.
 *
 * Soundness is the point, so the rules are narrow: a value is known only when Cedar would compute
 * the same value without an error. An attribute that is missing, an operand of the wrong type,
 * an extension value, a container compared with `==`, `in` over a hierarchy, arithmetic: all
 * UNKNOWN. `&&`, `||` and the list of conditions short-circuit left to right as Cedar's do, so a
 * known false on the left hides an error on the right only where Cedar's own evaluation would
 * never reach it. A request the engine would refuse whole (a fraction, an integer beyond 64
 * bits, a lone surrogate, a malformed entity reference) is never answered here. A property test
 * (test/unit/cedar/direct.test.ts) holds every known answer to the engine's on generated policies
 * and requests.
 */
import type { EntityJson, EntityUidJson, PolicyJson } from "./wasm.js";

/** The set fields this module reads (policy-set.ts's CedarPolicySet). */
interface PolicySetView {
  readonly policies: ReadonlyMap<string, { readonly id: string; readonly effect: string }>;
}

/** A request as the engine gets it (evaluate.ts builds it), context already pruned. */
export interface DirectCall {
  principal: EntityUidJson;
  action: EntityUidJson;
  resource: EntityUidJson;
  context: Record<string, unknown>;
  entities: readonly EntityJson[];
}

export interface DirectAnswer {
  /** Ids of the satisfied forbids, in the set's order. */
  forbidIds: string[];
  /** A permit was satisfied. */
  permitted: boolean;
}

const UNKNOWN = Symbol("unknown");
type Unknown = typeof UNKNOWN;

class EntityRef {
  constructor(
    readonly type: string,
    readonly id: string,
  ) {}
}

/** A Cedar value as met here: JSON primitives, sets (arrays), records (objects), entities. */
type Value = string | number | boolean | EntityRef | Value[] | Record<string, unknown>;

interface Env {
  principal: EntityRef;
  action: EntityRef;
  resource: EntityRef;
  context: Record<string, unknown>;
  /** Attributes by `type::id`, for the entities the request carries. */
  attrs: Map<string, Record<string, unknown>>;
  /** The values of the set's shared expressions computed so far for this request, by slot. */
  memo: (Value | Unknown | undefined)[];
}

type Compiled = (env: Env) => Value | Unknown;

interface CompiledPolicy {
  id: string;
  forbid: boolean;
  /** true, false or UNKNOWN: whether the policy is satisfied. */
  satisfied: (env: Env) => boolean | Unknown;
}

interface CompiledSet {
  policies: CompiledPolicy[];
  /** How many expressions the policies share (each computed once per request: Sharing). */
  slots: number;
}

/** undefined: some policy of the set has a form this module does not read. */
const compiledSets = new WeakMap<PolicySetView, CompiledSet | undefined>();

/** Compiles a set's policies (their JSON, in the set's order) for direct answers. */
export function compileDirect(set: PolicySetView, json: readonly PolicyJson[]): void {
  const ids = [...set.policies.keys()];
  if (ids.length !== json.length) return void compiledSets.set(set, undefined);
  const sharing = sharingOf(json);
  const policies = json.map((policy, i) => compilePolicy(ids[i]!, policy, sharing));
  compiledSets.set(set, { policies, slots: sharing.slots.size });
}

/** Cedar's answer, or undefined when the engine must give it. */
export function directAnswer(set: PolicySetView, call: DirectCall): DirectAnswer | undefined {
  const compiled = compiledSets.get(set);
  if (compiled === undefined) return undefined;
  const env = envOf(call, compiled.slots);
  if (env === undefined) return undefined;
  const forbidIds: string[] = [];
  let permitted = false;
  for (const policy of compiled.policies) {
    const satisfied = policy.satisfied(env);
    if (satisfied === UNKNOWN) return undefined;
    if (!satisfied) continue;
    if (policy.forbid) forbidIds.push(policy.id);
    else permitted = true;
  }
  return { forbidIds, permitted };
}

// --- the request -------------------------------------------------------------------------------

const MAX_VALUE_DEPTH = 32;

function envOf(call: DirectCall, slots: number): Env | undefined {
  const principal = refOf(call.principal);
  const action = refOf(call.action);
  const resource = refOf(call.resource);
  if (principal === undefined || action === undefined || resource === undefined) return undefined;
  if (!engineAccepts(call.context, 0)) return undefined;
  const attrs = new Map<string, Record<string, unknown>>();
  for (const entity of call.entities) {
    const uid = refOf(entity.uid);
    // Parents would make `in` true for other entities; `in` is UNKNOWN here, but say no anyway.
    if (uid === undefined || (entity.parents ?? []).length > 0) return undefined;
    const key = keyOf(uid);
    if (attrs.has(key) || !engineAccepts(entity.attrs, 0)) return undefined;
    attrs.set(key, entity.attrs);
  }
  const memo = new Array<Value | Unknown | undefined>(slots).fill(undefined);
  return { principal, action, resource, context: call.context, attrs, memo };
}

function refOf(uid: unknown): EntityRef | undefined {
  if (typeof uid !== "object" || uid === null) return undefined;
  const plain = "__entity" in uid ? uid.__entity : uid;
  if (typeof plain !== "object" || plain === null) return undefined;
  const { type, id } = plain as { type?: unknown; id?: unknown };
  if (typeof type !== "string" || typeof id !== "string") return undefined;
  if (!wellFormed(type) || !wellFormed(id)) return undefined;
  return new EntityRef(type, id);
}

/** A lone surrogate: the engine's strings are UTF-8 and refuse it (String#isWellFormed is ES2024). */
const LONE_SURROGATE = /\p{Cs}/u;

function wellFormed(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}

function keyOf(ref: EntityRef): string {
  return `${ref.type.length}:${ref.type}${ref.id}`;
}

/** Whether the engine reads this JSON value without refusing the request. */
function engineAccepts(value: unknown, depth: number): boolean {
  if (depth > MAX_VALUE_DEPTH) return false;
  switch (typeof value) {
    case "string":
      return wellFormed(value);
    case "boolean":
      return true;
    case "number":
      return Number.isSafeInteger(value);
    case "object": {
      if (value === null) return false;
      if (Array.isArray(value)) return value.every((v) => engineAccepts(v, depth + 1));
      if ("__extn" in value) return false;
      if ("__entity" in value) return Object.keys(value).length === 1 && refOf(value) !== undefined;
      for (const key in value) {
        if (!wellFormed(key)) return false;
        if (!engineAccepts((value as Record<string, unknown>)[key], depth + 1)) return false;
      }
      return true;
    }
    default:
      return false; // undefined, functions, bigints: not JSON the engine reads
  }
}

/** A JSON value read from the context or an entity, as a Cedar value. */
function fromJson(raw: unknown): Value | Unknown {
  if (typeof raw === "string" || typeof raw === "boolean" || typeof raw === "number") return raw;
  if (typeof raw !== "object" || raw === null) return UNKNOWN;
  if (Array.isArray(raw)) return raw as Value[];
  if ("__entity" in raw) return refOf(raw) ?? UNKNOWN;
  return raw as Record<string, unknown>;
}

// --- shared expressions ------------------------------------------------------------------------

/**
 * The expressions that occur more than once in a set, by their JSON: a set of a hundred rules
 * tests `resource.class == "shell"` or `context.call has url` in dozens of them. Each is compiled
 * once and its value remembered per request (Env.memo), so it is computed at most once per
 * request. Sound because an expression's value is a function of its JSON and the request only,
 * and a remembered value is only ever read where the same expression would be evaluated again:
 * the order of evaluation, and with it every short-circuit, is unchanged.
 */
interface Sharing {
  /** How often each expression occurs in the set, by its JSON. */
  counts: Map<string, number>;
  /** The memo slot of each shared expression. */
  slots: Map<string, number>;
  /** Each shared expression's function, compiled once. */
  compiled: Map<string, Compiled>;
}

function sharingOf(policies: readonly PolicyJson[]): Sharing {
  const counts = new Map<string, number>();
  // An explicit stack: the JSON is as deep as the author wrote it (limits.ts bounds it).
  const stack: unknown[] = policies.flatMap((p) => p.conditions.map((c) => c.body));
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== "object" || node === null) continue;
    if (Array.isArray(node)) {
      stack.push(...(node as unknown[]));
      continue;
    }
    const key = sharedKeyOf(node as Node);
    if (key !== undefined) counts.set(key, (counts.get(key) ?? 0) + 1);
    if (!("Value" in node)) stack.push(...Object.values(node as Node));
  }
  return { counts, slots: new Map(), compiled: new Map() };
}

/** The JSON of an expression worth remembering; literals and variables cost less than a look-up. */
function sharedKeyOf(node: Node): string | undefined {
  const keys = Object.keys(node);
  if (keys.length !== 1 || keys[0] === "Value" || keys[0] === "Var") return undefined;
  if (!Object.hasOwn(COMPILERS, keys[0]!)) return undefined;
  return JSON.stringify(node);
}

/** The expression's function, remembered per request when the set holds it more than once. */
function compileShared(node: Node, sharing: Sharing): Compiled {
  const key = sharedKeyOf(node);
  if (key === undefined || (sharing.counts.get(key) ?? 0) < 2) return compileNode(node, sharing);
  const known = sharing.compiled.get(key);
  if (known !== undefined) return known;
  const slot = sharing.slots.size;
  sharing.slots.set(key, slot);
  const inner = compileNode(node, sharing);
  const remembered: Compiled = (env) => {
    const value = env.memo[slot];
    if (value !== undefined) return value;
    return (env.memo[slot] = inner(env));
  };
  sharing.compiled.set(key, remembered);
  return remembered;
}

// --- compiling policies ------------------------------------------------------------------------

function compilePolicy(id: string, policy: PolicyJson, sharing: Sharing): CompiledPolicy {
  const scope = [
    compileScope(policy.principal, (env) => env.principal),
    compileScope(policy.action, (env) => env.action),
    compileScope(policy.resource, (env) => env.resource),
  ];
  const conditions = policy.conditions.map((c) => {
    const body = compile(c.body, sharing);
    return c.kind === "when" ? body : negate(body);
  });
  const tests = [...scope, ...conditions];
  return {
    id,
    forbid: policy.effect === "forbid",
    satisfied(env) {
      for (const test of tests) {
        const value = test(env);
        if (value === false) return false;
        if (value !== true) return UNKNOWN; // UNKNOWN, or not a boolean: Cedar errors
      }
      return true;
    },
  };
}

interface ScopeJson {
  op: string;
  entity?: unknown;
  entities?: unknown[];
  entity_type?: string;
  in?: unknown;
}

function compileScope(scope: ScopeJson, pick: (env: Env) => EntityRef): Compiled {
  if (scope.op === "All") return () => true;
  if (scope.op === "==") {
    const ref = refOf(scope.entity);
    return ref === undefined ? unknownValue : (env) => sameEntity(pick(env), ref);
  }
  if (scope.op === "is" && scope.in === undefined && typeof scope.entity_type === "string") {
    const type = scope.entity_type;
    return (env) => pick(env).type === type;
  }
  // Actions have no parents in a request (no schema gives them any): `in` is membership.
  if (scope.op === "in" && Array.isArray(scope.entities)) {
    const refs = scope.entities.map(refOf);
    if (refs.some((r) => r === undefined || r.type !== "Action")) return unknownValue;
    return (env) => {
      const action = pick(env);
      return action.type === "Action" && refs.some((r) => sameEntity(action, r!));
    };
  }
  return unknownValue; // `in` an entity, `is … in`, templates: hierarchy the engine knows
}

function unknownValue(): Unknown {
  return UNKNOWN;
}

function negate(inner: Compiled): Compiled {
  return (env) => {
    const value = inner(env);
    return typeof value === "boolean" ? !value : UNKNOWN;
  };
}

type Node = Record<string, unknown>;

const COMPILERS: Record<string, (arg: unknown, sharing: Sharing) => Compiled> = {
  Value: compileLiteral,
  Var: compileVar,
  "!": (arg, sh) => negate(compile((arg as { arg: unknown }).arg, sh)),
  "&&": (arg, sh) => compileAnd(arg as Binary, sh),
  "||": (arg, sh) => compileOr(arg as Binary, sh),
  "==": (arg, sh) => compileEquals(arg as Binary, false, sh),
  "!=": (arg, sh) => compileEquals(arg as Binary, true, sh),
  "<": (arg, sh) => compileCompare(arg as Binary, (a, b) => a < b, sh),
  "<=": (arg, sh) => compileCompare(arg as Binary, (a, b) => a <= b, sh),
  ">": (arg, sh) => compileCompare(arg as Binary, (a, b) => a > b, sh),
  ">=": (arg, sh) => compileCompare(arg as Binary, (a, b) => a >= b, sh),
  ".": (arg, sh) => compileGet(arg as { left: unknown; attr: unknown }, sh),
  has: (arg, sh) => compileHas(arg as { left: unknown; attr: unknown }, sh),
  like: (arg, sh) => compileLike(arg as { left: unknown; pattern: unknown }, sh),
  is: (arg, sh) => compileIs(arg as { left: unknown; entity_type: unknown; in?: unknown }, sh),
  contains: (arg, sh) => compileContains(arg as Binary, sh),
  containsAny: (arg, sh) => compileSetTest(arg as Binary, "any", sh),
  containsAll: (arg, sh) => compileSetTest(arg as Binary, "all", sh),
  "if-then-else": (arg, sh) => compileIf(arg as { if: unknown; then: unknown; else: unknown }, sh),
  Set: (arg, sh) => compileSet(arg, sh),
};

interface Binary {
  left: unknown;
  right: unknown;
}

/** An expression's function; UNKNOWN for every form not listed (arithmetic, `in`, extensions). */
function compile(node: unknown, sharing: Sharing): Compiled {
  if (typeof node !== "object" || node === null) return unknownValue;
  return compileShared(node as Node, sharing);
}

function compileNode(node: Node, sharing: Sharing): Compiled {
  const keys = Object.keys(node);
  if (keys.length !== 1 || !Object.hasOwn(COMPILERS, keys[0]!)) return unknownValue;
  return COMPILERS[keys[0]!]!(node[keys[0]!], sharing);
}

function compileLiteral(value: unknown): Compiled {
  if (typeof value === "string") return wellFormed(value) ? () => value : unknownValue;
  if (typeof value === "boolean") return () => value;
  if (typeof value === "number") return Number.isSafeInteger(value) ? () => value : unknownValue;
  if (typeof value === "object" && value !== null && "__entity" in value) {
    const ref = refOf(value);
    return ref === undefined ? unknownValue : () => ref;
  }
  return unknownValue;
}

function compileVar(name: unknown): Compiled {
  switch (name) {
    case "principal":
      return (env) => env.principal;
    case "action":
      return (env) => env.action;
    case "resource":
      return (env) => env.resource;
    case "context":
      return (env) => env.context;
    default:
      return unknownValue;
  }
}

function compileAnd({ left, right }: Binary, sharing: Sharing): Compiled {
  const l = compile(left, sharing);
  const r = compile(right, sharing);
  return (env) => {
    const a = l(env);
    if (a === false) return false;
    if (a !== true) return UNKNOWN;
    const b = r(env);
    return typeof b === "boolean" ? b : UNKNOWN;
  };
}

function compileOr({ left, right }: Binary, sharing: Sharing): Compiled {
  const l = compile(left, sharing);
  const r = compile(right, sharing);
  return (env) => {
    const a = l(env);
    if (a === true) return true;
    if (a !== false) return UNKNOWN;
    const b = r(env);
    return typeof b === "boolean" ? b : UNKNOWN;
  };
}

function compileIf(
  node: { if: unknown; then: unknown; else: unknown },
  sharing: Sharing,
): Compiled {
  const test = compile(node.if, sharing);
  const then = compile(node.then, sharing);
  const otherwise = compile(node.else, sharing);
  return (env) => {
    const value = test(env);
    if (value === true) return then(env);
    if (value === false) return otherwise(env);
    return UNKNOWN;
  };
}

function isPrimitive(value: Value): value is string | number | boolean | EntityRef {
  return typeof value !== "object" || value instanceof EntityRef;
}

function sameEntity(a: EntityRef, b: EntityRef): boolean {
  return a.type === b.type && a.id === b.id;
}

/** Cedar `==` on primitives and entities (another type is simply unequal); containers UNKNOWN. */
function equals(a: Value, b: Value): boolean | Unknown {
  if (!isPrimitive(a) || !isPrimitive(b)) return UNKNOWN;
  if (a instanceof EntityRef || b instanceof EntityRef)
    return a instanceof EntityRef && b instanceof EntityRef && sameEntity(a, b);
  return a === b;
}

function compileEquals({ left, right }: Binary, not: boolean, sharing: Sharing): Compiled {
  const l = compile(left, sharing);
  const r = compile(right, sharing);
  return (env) => {
    const a = l(env);
    if (a === UNKNOWN) return UNKNOWN;
    const b = r(env);
    if (b === UNKNOWN) return UNKNOWN;
    const same = equals(a, b);
    return same === UNKNOWN ? UNKNOWN : same !== not;
  };
}

function compileCompare(
  { left, right }: Binary,
  test: (a: number, b: number) => boolean,
  sharing: Sharing,
): Compiled {
  const l = compile(left, sharing);
  const r = compile(right, sharing);
  return (env) => {
    const a = l(env);
    if (typeof a !== "number") return UNKNOWN;
    const b = r(env);
    return typeof b === "number" ? test(a, b) : UNKNOWN;
  };
}

/** The attributes of a record or of an entity the request carries; UNKNOWN otherwise. */
function attributesOf(value: Value | Unknown, env: Env): Record<string, unknown> | Unknown {
  if (value instanceof EntityRef) return env.attrs.get(keyOf(value)) ?? UNKNOWN;
  if (value === UNKNOWN || typeof value !== "object" || Array.isArray(value)) return UNKNOWN;
  return value;
}

function compileGet({ left, attr }: { left: unknown; attr: unknown }, sharing: Sharing): Compiled {
  if (typeof attr !== "string") return unknownValue;
  const l = compile(left, sharing);
  return (env) => {
    const attrs = attributesOf(l(env), env);
    if (attrs === UNKNOWN || !Object.hasOwn(attrs, attr)) return UNKNOWN;
    return fromJson(attrs[attr]);
  };
}

/**
 * `e has a` and `e has a.b` (Cedar reads the second as `e has a && e.a has b`). On an entity the
 * request does not carry, Cedar answers false; this module says UNKNOWN, which is only slower.
 */
function compileHas({ left, attr }: { left: unknown; attr: unknown }, sharing: Sharing): Compiled {
  const path = Array.isArray(attr) ? (attr as unknown[]) : [attr];
  if (path.length === 0 || !path.every((a) => typeof a === "string")) return unknownValue;
  const names = path;
  const l = compile(left, sharing);
  return (env) => {
    let value: Value | Unknown = l(env);
    for (const name of names) {
      const attrs = attributesOf(value, env);
      if (attrs === UNKNOWN) return UNKNOWN;
      if (!Object.hasOwn(attrs, name)) return false;
      value = fromJson(attrs[name]);
    }
    return true;
  };
}

type Pattern = (string | null)[]; // null: a wildcard

function compileLike(
  { left, pattern }: { left: unknown; pattern: unknown },
  sharing: Sharing,
): Compiled {
  if (!Array.isArray(pattern)) return unknownValue;
  const parts: Pattern = [];
  for (const part of pattern as unknown[]) {
    if (part === "Wildcard") parts.push(null);
    else if (
      typeof part === "object" &&
      part !== null &&
      typeof (part as { Literal?: unknown }).Literal === "string"
    )
      parts.push((part as { Literal: string }).Literal);
    else return unknownValue;
  }
  const segments = segmentsOf(parts);
  const l = compile(left, sharing);
  return (env) => {
    const text = l(env);
    return typeof text === "string" ? matches(text, segments) : UNKNOWN;
  };
}

interface Segments {
  /** Literal runs between wildcards; the first is anchored at the start unless `openStart`. */
  literals: string[];
  openStart: boolean;
  openEnd: boolean;
}

function segmentsOf(parts: Pattern): Segments {
  const literals: string[] = [""];
  for (const part of parts) {
    if (part === null) literals.push("");
    else literals[literals.length - 1] += part;
  }
  return {
    literals,
    openStart: parts[0] === null,
    openEnd: parts.length > 0 && parts[parts.length - 1] === null,
  };
}

/**
 * A glob with `*` only: the first literal at the start, the last at the end, the middle ones
 * leftmost in order (leftmost is always safe for `*`). Code units, not code points: every text
 * here is well-formed (engineAccepts), so a literal never matches half a surrogate pair.
 */
function matches(text: string, { literals }: Segments): boolean {
  const first = literals[0]!;
  if (literals.length === 1) return text === first;
  const last = literals[literals.length - 1]!;
  if (text.length < first.length + last.length) return false;
  if (!text.startsWith(first) || !text.endsWith(last)) return false;
  let at = first.length;
  const end = text.length - last.length;
  for (let i = 1; i < literals.length - 1; i++) {
    const found = text.indexOf(literals[i]!, at);
    if (found === -1 || found + literals[i]!.length > end) return false;
    at = found + literals[i]!.length;
  }
  return true;
}

function compileIs(
  { left, entity_type, in: within }: { left: unknown; entity_type: unknown; in?: unknown },
  sharing: Sharing,
): Compiled {
  if (typeof entity_type !== "string" || within !== undefined) return unknownValue;
  const l = compile(left, sharing);
  return (env) => {
    const value = l(env);
    return value instanceof EntityRef ? value.type === entity_type : UNKNOWN;
  };
}

function compileSet(elements: unknown, sharing: Sharing): Compiled {
  if (!Array.isArray(elements)) return unknownValue;
  const items = (elements as unknown[]).map((element) => compile(element, sharing));
  return (env) => {
    const values: Value[] = [];
    for (const item of items) {
      const value = item(env);
      if (value === UNKNOWN) return UNKNOWN;
      values.push(value);
    }
    return values;
  };
}

/** A set's members as Cedar values, or UNKNOWN when one is a container (equality unread here). */
function membersOf(value: Value | Unknown): (string | number | boolean | EntityRef)[] | Unknown {
  if (value === UNKNOWN || !Array.isArray(value)) return UNKNOWN;
  const members: (string | number | boolean | EntityRef)[] = [];
  for (const raw of value) {
    // Members of a context set are JSON; of a set literal, values already (compileSet).
    const member = raw instanceof EntityRef ? raw : fromJson(raw);
    if (member === UNKNOWN || !isPrimitive(member)) return UNKNOWN;
    members.push(member);
  }
  return members;
}

function includes(members: readonly Value[], wanted: Value): boolean | Unknown {
  for (const member of members) {
    const same = equals(member, wanted);
    if (same === UNKNOWN) return UNKNOWN;
    if (same) return true;
  }
  return false;
}

function compileContains({ left, right }: Binary, sharing: Sharing): Compiled {
  const l = compile(left, sharing);
  const r = compile(right, sharing);
  return (env) => {
    const set = l(env);
    if (set === UNKNOWN || !Array.isArray(set)) return UNKNOWN;
    const wanted = r(env);
    if (wanted === UNKNOWN || !isPrimitive(wanted)) return UNKNOWN;
    return setIncludes(set, wanted);
  };
}

/**
 * membersOf then includes, without building the list (one `contains` per rule, dozens of rules):
 * UNKNOWN when any member is a container, wherever it stands, as membersOf says.
 */
function setIncludes(set: readonly unknown[], wanted: Value): boolean | Unknown {
  let found = false;
  for (const raw of set) {
    const member = raw instanceof EntityRef ? raw : fromJson(raw);
    if (member === UNKNOWN || !isPrimitive(member)) return UNKNOWN;
    if (!found && equals(member, wanted) === true) found = true;
  }
  return found;
}

function compileSetTest({ left, right }: Binary, mode: "any" | "all", sharing: Sharing): Compiled {
  const l = compile(left, sharing);
  const r = compile(right, sharing);
  return (env) => {
    const members = membersOf(l(env));
    if (members === UNKNOWN) return UNKNOWN;
    const wanted = membersOf(r(env));
    if (wanted === UNKNOWN) return UNKNOWN;
    for (const w of wanted) {
      const found = includes(members, w);
      if (found === UNKNOWN) return UNKNOWN;
      if (mode === "any" && found) return true;
      if (mode === "all" && !found) return false;
    }
    return mode === "all";
  };
}
