/**
 * Least privilege per role, as nats-server permissions: what each user may publish and subscribe
 * to. The `$JS.API.*` and `$KV.*` subjects are the ones nats.js v3 sends for what each role does
 * (read from a trace of every role on nats-server 2.9.10; docs/security.md lists them). Pure: a
 * description in, permissions out.
 *
 * Wildcards in permissions are whole tokens only, so anything scoped to a name (an agent's token,
 * a policy's consumers) is spelled out per name.
 */
import type { AuthRole, AuthUser } from "./description.js";
import { inboxPrefixFor } from "./inbox.js";
import { encodeToken } from "../bus/tokens.js";
import { OBSERVATIONAL_HOOK_NAMES } from "../catalog/catalog.js";
import { Subjects } from "../bus/subjects.js";

export interface Permissions {
  publish: string[];
  /**
   * Refused even where `publish` allows it (nats-server: deny wins). The durable consumers on the
   * log have fixed names; a role that may create ordered consumers under any name is denied
   * exactly those names, because nats-server 2.9 treats a create under an existing name as an
   * update (a new filter, ack wait, ...) of that consumer.
   */
  denyPublish: string[];
  /** A `subject queue` entry allows that subject only in that queue group (nats-server ≥ 2.1.2). */
  subscribe: string[];
  /** May answer requests it received (one reply each), without any publish permission for them. */
  allowResponses: boolean;
}

const JS = "$JS.API";

/**
 * Reading a KV bucket: its stream info, direct and stream gets, and watches (ordered push
 * consumers under random names). No `CONSUMER.DELETE`: with it, a reader could delete everyone
 * else's watch (a coordinator's registry watch, so it kept enforcing an old policy set). An
 * ordered consumer the client cannot delete expires by itself once nobody listens (nats.js sets
 * an inactivity threshold on each).
 */
function kvRead(bucket: string): string[] {
  const stream = `KV_${bucket}`;
  return [
    `${JS}.STREAM.INFO.${stream}`,
    `${JS}.STREAM.MSG.GET.${stream}`,
    `${JS}.DIRECT.GET.${stream}.>`,
    // A past revision (`kv.get(key, { revision })`) is a direct get by sequence, with no subject
    // token; the same read STREAM.MSG.GET allows, on the same bucket.
    `${JS}.DIRECT.GET.${stream}`,
    `${JS}.CONSUMER.CREATE.${stream}.*.$KV.${bucket}.>`,
    `$JS.FC.${stream}.>`,
  ];
}

/** Listing a KV bucket's keys (`kv.keys()` asks for its ordered consumer's info). */
function kvList(bucket: string): string[] {
  return [...kvRead(bucket), `${JS}.CONSUMER.INFO.KV_${bucket}.*`];
}

/** Writing a KV bucket (and creating it when missing). */
function kvWrite(bucket: string, keys = ">"): string[] {
  return [...kvRead(bucket), `${JS}.STREAM.CREATE.KV_${bucket}`, `$KV.${bucket}.${keys}`];
}

/**
 * Reading a whole stream: info, gets, and ordered pull consumers (audit, verify, replay, the
 * sealer). Only named creates (`CREATE.<stream>.<name>[.<filter>]`, never the bare legacy subject,
 * which takes the name from the payload); no delete and no ack, so a reader can neither remove
 * nor advance anyone's consumer; the durables' own names are denied (`ownedDurableDenials`).
 */
function streamRead(stream: string): string[] {
  return [
    `${JS}.STREAM.INFO.${stream}`,
    `${JS}.STREAM.MSG.GET.${stream}`,
    `${JS}.DIRECT.GET.${stream}`,
    `${JS}.DIRECT.GET.${stream}.>`,
    `${JS}.CONSUMER.CREATE.${stream}.*`,
    `${JS}.CONSUMER.CREATE.${stream}.*.>`,
    `${JS}.CONSUMER.INFO.${stream}.*`,
    `${JS}.CONSUMER.MSG.NEXT.${stream}.*`,
  ];
}

/** The durable consumers on the log, by name: the indexer's and one per policy and observed hook. */
export function logDurables(namespace: string, policies: readonly string[]): string[] {
  return [
    `${namespace}-indexer`,
    ...policies.flatMap((policy) =>
      OBSERVATIONAL_HOOK_NAMES.map((hook) => observerDurable(namespace, policy, hook)),
    ),
  ];
}

/** src/worker/observer.ts names it so (a unit test holds the two together). */
function observerDurable(namespace: string, policy: string, hook: string): string {
  return `${namespace.replace(/\./g, "_")}_${policy}_${hook}`;
}

/** Everything a non-owner could do to a durable on `stream` by naming it. */
function ownedDurableDenials(stream: string, durables: readonly string[]): string[] {
  return durables.flatMap((durable) => [
    `${JS}.CONSUMER.CREATE.${stream}.${durable}`,
    `${JS}.CONSUMER.CREATE.${stream}.${durable}.>`,
    `${JS}.CONSUMER.DURABLE.CREATE.${stream}.${durable}`,
    `${JS}.CONSUMER.DELETE.${stream}.${durable}`,
    `${JS}.CONSUMER.MSG.NEXT.${stream}.${durable}`,
    `$JS.ACK.${stream}.${durable}.>`,
  ]);
}

/** What every role does on connect: `jetstreamManager()` checks the account with `$JS.API.INFO`. */
const COMMON = [`${JS}.INFO`];

/**
 * `policies`: every policy of the deployment (the description's), whose observer durables on the
 * log no other role may name.
 */
export function permissionsFor(
  namespace: string,
  user: AuthUser,
  policies: readonly string[] = [],
): Permissions {
  const granted = grantsFor(namespace, user);
  const log = new Subjects(namespace).logStream;
  const readsLog = user.role === "auditor" || user.role === "sealer";
  return {
    ...granted,
    denyPublish: readsLog ? ownedDurableDenials(log, logDurables(namespace, policies)) : [],
  };
}

type Grants = Omit<Permissions, "denyPublish">;

/** The names one namespace's grants are spelled with. */
interface Scope {
  ns: string;
  s: Subjects;
  /** The user's own reply inbox. */
  inbox: string;
  log: string;
  blobs: string;
  seals: string;
  /**
   * Coordinators' signature batches (src/log/sign/batch.ts): written by coordinators, read by the
   * sealer and auditors.
   */
  sigs: string;
  /** The data keys bucket (src/privacy/data-keys.ts). */
  keys: string;
  /** Discovery (src/observability/discovery.ts): `<ns>.discover` and `<ns>.discover.<role>`. */
  discover: string[];
}

function scopeFor(namespace: string, user: AuthUser): Scope {
  const s = new Subjects(namespace);
  const ns = namespace;
  return {
    ns,
    s,
    inbox: `${inboxPrefixFor(namespace, user.role, user.name)}.>`,
    log: s.logStream,
    blobs: s.blobStream,
    seals: `${ns.toUpperCase()}_SEALS`,
    sigs: `${ns.toUpperCase()}_SIGNATURES`,
    keys: `${ns}_privacy_keys`,
    discover: [`${ns}.discover`, `${ns}.discover.*`],
  };
}

function grantsFor(namespace: string, user: AuthUser): Grants {
  return ROLE_GRANTS[user.role](scopeFor(namespace, user), user);
}

function agentGrants({ ns, s, inbox, blobs }: Scope, user: AuthUser): Grants {
  const token = encodeToken(user.name);
  return {
    publish: [
      ...COMMON,
      `${ns}.call.${token}.*`,
      `${ns}.observe.${token}.*`,
      // The state of its own pending approvals only (the coordinator checks the token too).
      `${ns}.approvals.status.${token}`,
      // Its own large bodies only: written under its token (a large event), read by subject
      // (never by sequence, which names no owner).
      `${ns}.blob.${token}.>`,
      `${JS}.DIRECT.GET.${blobs}.${ns}.blob.${token}.>`,
      // The registry, read-only, for the fast path and redaction rules.
      ...kvRead(s.registryBucket),
    ],
    subscribe: [inbox],
    allowResponses: false,
  };
}

function workerGrants({ ns, s, inbox, log, blobs, discover }: Scope, user: AuthUser): Grants {
  const policy = user.name;
  // One durable per observed hook (src/worker/observer.ts), filtered to that observational
  // hook: its observations (`observed`, refusals `block`) and its rejected observations.
  const observers = OBSERVATIONAL_HOOK_NAMES.flatMap((hook) => {
    const durable = observerDurable(ns, policy, hook);
    return [
      `${JS}.CONSUMER.CREATE.${log}.${durable}.${ns}.audit.*.*.${hook}.*`,
      `${JS}.CONSUMER.INFO.${log}.${durable}`,
      `${JS}.CONSUMER.MSG.NEXT.${log}.${durable}`,
      `$JS.ACK.${log}.${durable}.>`,
    ];
  });
  return {
    publish: [
      ...COMMON,
      // Session state: written only under this policy's keys.
      `${JS}.STREAM.INFO.KV_${s.stateBucket}`,
      `${JS}.STREAM.CREATE.KV_${s.stateBucket}`,
      `${JS}.STREAM.MSG.GET.KV_${s.stateBucket}`,
      `${JS}.DIRECT.GET.KV_${s.stateBucket}.$KV.${s.stateBucket}.${policy}.>`,
      `$KV.${s.stateBucket}.${policy}.>`,
      // Its own policy's state keys, when state is sealed (docs/privacy.md).
      s.stateKey(policy),
      // Large policy requests arrive as blob references (any agent's: the policy sees all calls);
      // a large verdict is stored under the shared owner.
      `${ns}.blob.=shared.>`,
      `${JS}.STREAM.MSG.GET.${blobs}`,
      `${JS}.DIRECT.GET.${blobs}.>`,
      ...observers,
    ],
    subscribe: [`${ns}.policy.${policy}.* ${s.policyQueue(policy)}`, inbox, ...discover],
    allowResponses: true,
  };
}

function coordinatorGrants({ ns, s, inbox, log, blobs, sigs, keys, discover }: Scope): Grants {
  return {
    publish: [
      ...COMMON,
      `${ns}.policy.*.*`,
      `${ns}.audit.>`,
      `${ns}.blob.>`,
      `${JS}.STREAM.INFO.${log}`,
      `${JS}.STREAM.CREATE.${log}`,
      `${JS}.STREAM.MSG.GET.${log}`,
      `${JS}.DIRECT.GET.${log}.>`,
      `${JS}.STREAM.INFO.${blobs}`,
      `${JS}.STREAM.CREATE.${blobs}`,
      `${JS}.STREAM.MSG.GET.${blobs}`,
      `${JS}.DIRECT.GET.${blobs}.>`,
      `${ns}.signatures`,
      `${JS}.STREAM.INFO.${sigs}`,
      `${JS}.STREAM.CREATE.${sigs}`,
      ...kvRead(s.registryBucket),
      // Approval requests: opened, answered and settled by compare-and-set.
      ...kvWrite(s.approvalsBucket),
      `${JS}.CONSUMER.INFO.KV_${s.approvalsBucket}.*`,
      // Data keys, made on a subject's first record (docs/privacy.md). No MSG.DELETE or PURGE.
      ...kvWrite(keys),
      // Liveness checks ask workers (src/observability/liveness-check.ts).
      ...discover,
    ],
    subscribe: [
      `${ns}.call.*.* ${s.coordinatorQueue}`,
      `${ns}.observe.*.* ${s.coordinatorQueue}`,
      `${ns}.approvals.answer.*.* ${s.coordinatorQueue}`,
      `${ns}.approvals.status.* ${s.coordinatorQueue}`,
      `${s.approvalShow} ${s.coordinatorQueue}`,
      `${s.stateKeyWildcard} ${s.coordinatorQueue}`,
      inbox,
      ...discover,
    ],
    allowResponses: true,
  };
}

function operatorGrants({ s, inbox, discover }: Scope): Grants {
  return {
    // `hookbus registry` and `hookbus status` (the registry and one discovery round).
    publish: [...COMMON, ...kvWrite(s.registryBucket), ...discover],
    subscribe: [inbox],
    allowResponses: false,
  };
}

function auditorGrants({ ns, s, inbox, log, blobs, seals, sigs, keys, discover }: Scope): Grants {
  return {
    publish: [
      ...COMMON,
      // Wrapped data keys: useless without the KEK, which the auditor holds apart.
      ...kvRead(keys),
      ...streamRead(log),
      ...streamRead(blobs),
      ...streamRead(seals),
      ...streamRead(sigs),
      ...kvRead(`${ns}_seal_heads`),
      // `audit verify --key` checks who holds the sealer's lease (read only: never take it).
      ...kvRead(`${ns}_sealer`),
      ...kvRead(s.registryBucket),
      // `hookbus status`, read-only.
      ...discover,
    ],
    subscribe: [inbox],
    allowResponses: false,
  };
}

/**
 * `hookbus erase` (src/erasure/): finds a data key's revision, deletes it with secure erase and
 * purges the key; appends the erasure record on `<ns>.audit._erasure.>` (and its signature batch).
 * The only role with MSG.DELETE on the keys bucket. `--retention` also lists the keys and reads
 * the registry's retention rules.
 */
function privacyGrants({ ns, s, inbox, log, sigs, keys }: Scope): Grants {
  return {
    publish: [
      ...COMMON,
      ...kvList(keys),
      ...kvRead(s.registryBucket),
      `$KV.${keys}.>`,
      `${JS}.STREAM.MSG.DELETE.KV_${keys}`,
      `${ns}.audit._erasure.>`,
      `${JS}.STREAM.INFO.${log}`,
      `${JS}.STREAM.MSG.GET.${log}`,
      `${ns}.signatures`,
      `${JS}.STREAM.INFO.${sigs}`,
      `${JS}.STREAM.CREATE.${sigs}`,
    ],
    subscribe: [inbox],
    allowResponses: false,
  };
}

/**
 * src/sealer/: reads the log with an ordered consumer (no acks), appends to `<NS>_SEALS` on
 * `<ns>.seals`, and keeps its lease and the sessions' heads in two KV buckets.
 */
function sealerGrants({ ns, inbox, log, seals, sigs }: Scope): Grants {
  return {
    publish: [
      ...COMMON,
      `${JS}.STREAM.INFO.${log}`,
      `${JS}.STREAM.MSG.GET.${log}`,
      `${JS}.CONSUMER.CREATE.${log}.*`,
      `${JS}.CONSUMER.CREATE.${log}.*.>`,
      `${JS}.CONSUMER.MSG.NEXT.${log}.*`,
      `${JS}.STREAM.INFO.${seals}`,
      `${JS}.STREAM.CREATE.${seals}`,
      `${JS}.STREAM.MSG.GET.${seals}`,
      `${ns}.seals`,
      ...streamRead(sigs),
      ...kvWrite(`${ns}_seal_heads`),
      ...kvWrite(`${ns}_sealer`),
    ],
    subscribe: [inbox],
    allowResponses: false,
  };
}

/**
 * Answers under its own name only (the subject is the proof of who answered), for no group or for
 * the groups it is in; reads the requests. Nothing else: no log, no registry.
 */
function approverGrants({ ns, s, inbox }: Scope, user: AuthUser): Grants {
  const token = encodeToken(user.name);
  return {
    publish: [
      ...COMMON,
      `${ns}.approvals.answer.${token}.-`,
      ...(user.groups ?? []).map((group) => `${ns}.approvals.answer.${token}.${group}`),
      ...kvList(s.approvalsBucket),
      // A request's sealed texts, opened by a coordinator (docs/privacy.md, "Approvals").
      s.approvalShow,
    ],
    subscribe: [inbox],
    allowResponses: false,
  };
}

/** src/indexer/: one durable consumer on the log shared by every indexer of the namespace. */
function indexerGrants({ ns, inbox, log, blobs }: Scope): Grants {
  const durable = `${ns}-indexer`;
  return {
    publish: [
      ...COMMON,
      `${JS}.STREAM.INFO.${log}`,
      `${JS}.STREAM.MSG.GET.${log}`,
      `${JS}.CONSUMER.CREATE.${log}.${durable}`,
      `${JS}.CONSUMER.CREATE.${log}.${durable}.>`,
      `${JS}.CONSUMER.INFO.${log}.${durable}`,
      `${JS}.CONSUMER.MSG.NEXT.${log}.${durable}`,
      `$JS.ACK.${log}.${durable}.>`,
      ...streamRead(blobs),
    ],
    subscribe: [inbox],
    allowResponses: false,
  };
}

/** Each role's grants, by role: a table, so a new role without grants is a compile error. */
const ROLE_GRANTS: Record<AuthRole, (scope: Scope, user: AuthUser) => Grants> = {
  agent: agentGrants,
  worker: workerGrants,
  coordinator: coordinatorGrants,
  operator: operatorGrants,
  auditor: auditorGrants,
  sealer: sealerGrants,
  approver: approverGrants,
  indexer: indexerGrants,
  privacy: privacyGrants,
};
