/**
 * The permission matrix: every JetStream API verb, KV and stream write × every stream, bucket and
 * consumer hookbus uses × every user of a description, and whether the generated permissions allow
 * it. Pure, so the same table is what test/integration/auth/matrix.test.ts checks against a live
 * server and what docs/security.md shows (`npm run security:matrix` rewrites it).
 */
import type { AuthDescription, AuthUser } from "./description.js";
import { usersOf } from "./description.js";
import { logDurables, permissionsFor, type Permissions } from "./permissions.js";
import { Subjects } from "../bus/subjects.js";

export interface Probe {
  /** What the subject does, e.g. `CONSUMER.DELETE`. */
  verb: string;
  /** The stream (and consumer) it names, e.g. `NS_LOG ns-indexer`. */
  target: string;
  subject: string;
}

const JS = "$JS.API";

/** Whole-token NATS matching: `*` is one token, a final `>` one or more. */
export function subjectMatches(pattern: string, subject: string): boolean {
  const p = pattern.split(".");
  const s = subject.split(".");
  for (let i = 0; i < p.length; i++) {
    if (p[i] === ">") return s.length > i;
    if (i >= s.length) return false;
    if (p[i] !== "*" && p[i] !== s[i]) return false;
  }
  return p.length === s.length;
}

export function publishAllowed(permissions: Permissions, subject: string): boolean {
  return (
    permissions.publish.some((p) => subjectMatches(p, subject)) &&
    !permissions.denyPublish.some((p) => subjectMatches(p, subject))
  );
}

interface StreamTarget {
  stream: string;
  /** A literal subject stored in the stream (for direct gets by subject and writes). */
  sample: string;
  /** The filter an ordered reader of the whole stream sends in its create subject. */
  filter: string;
  consumers: string[];
}

function streamTargets(d: AuthDescription): StreamTarget[] {
  const s = new Subjects(d.namespace);
  const ns = d.namespace;
  const agent = d.agents[0] ?? "agent";
  const kv = (bucket: string, key: string): StreamTarget => ({
    stream: `KV_${bucket}`,
    sample: `$KV.${bucket}.${key}`,
    filter: `$KV.${bucket}.>`,
    consumers: ["other"],
  });
  return [
    {
      stream: s.logStream,
      sample: `${ns}.audit.${agent}.s.before_tool_call.decided`,
      filter: `${ns}.audit.>`,
      consumers: [...logDurables(ns, d.policies.slice(0, 1)).slice(0, 2), "other"],
    },
    {
      stream: s.blobStream,
      sample: `${ns}.blob.${agent}.b`,
      filter: `${ns}.blob.>`,
      consumers: ["other"],
    },
    {
      stream: `${ns.toUpperCase()}_SEALS`,
      sample: `${ns}.seals`,
      filter: `${ns}.seals`,
      consumers: ["other"],
    },
    {
      stream: `${ns.toUpperCase()}_SIGNATURES`,
      sample: `${ns}.signatures`,
      filter: `${ns}.signatures`,
      consumers: ["other"],
    },
    kv(s.registryBucket, "registry"),
    kv(s.stateBucket, `${d.policies[0] ?? "policy"}.k`),
    kv(s.approvalsBucket, "k"),
    kv(`${ns}_seal_heads`, "k"),
    kv(`${ns}_sealer`, "lease"),
    kv(`${ns}_privacy_keys`, "k.0"),
  ];
}

const STREAM_VERBS = [
  "STREAM.CREATE",
  "STREAM.UPDATE",
  "STREAM.DELETE",
  "STREAM.PURGE",
  "STREAM.INFO",
  "STREAM.MSG.GET",
  "STREAM.MSG.DELETE",
  "STREAM.SNAPSHOT",
  "DIRECT.GET",
  "CONSUMER.CREATE",
  "CONSUMER.LIST",
  "CONSUMER.NAMES",
];

function probesOf(t: StreamTarget): Probe[] {
  const probes: Probe[] = STREAM_VERBS.map((verb) => ({
    verb: verb === "CONSUMER.CREATE" ? "CONSUMER.CREATE (legacy, unnamed)" : verb,
    target: t.stream,
    subject: `${JS}.${verb}.${t.stream}`,
  }));
  probes.push(
    {
      verb: "DIRECT.GET by subject",
      target: t.stream,
      subject: `${JS}.DIRECT.GET.${t.stream}.${t.sample}`,
    },
    { verb: "publish (store)", target: t.stream, subject: t.sample },
  );
  for (const c of t.consumers) {
    const target = `${t.stream} ${c}`;
    const on = `${t.stream}.${c}`;
    probes.push(
      { verb: "CONSUMER.CREATE named", target, subject: `${JS}.CONSUMER.CREATE.${on}` },
      {
        verb: "CONSUMER.CREATE filtered",
        target,
        subject: `${JS}.CONSUMER.CREATE.${on}.${t.filter}`,
      },
      { verb: "CONSUMER.DURABLE.CREATE", target, subject: `${JS}.CONSUMER.DURABLE.CREATE.${on}` },
      { verb: "CONSUMER.DELETE", target, subject: `${JS}.CONSUMER.DELETE.${on}` },
      { verb: "CONSUMER.INFO", target, subject: `${JS}.CONSUMER.INFO.${on}` },
      { verb: "CONSUMER.MSG.NEXT", target, subject: `${JS}.CONSUMER.MSG.NEXT.${on}` },
      { verb: "ACK", target, subject: `$JS.ACK.${on}.1.1.1.0.0` },
    );
  }
  return probes;
}

export function permissionProbes(d: AuthDescription): Probe[] {
  return [
    { verb: "INFO", target: "account", subject: `${JS}.INFO` },
    { verb: "STREAM.NAMES", target: "account", subject: `${JS}.STREAM.NAMES` },
    { verb: "STREAM.LIST", target: "account", subject: `${JS}.STREAM.LIST` },
    ...streamTargets(d).flatMap(probesOf),
  ];
}

export interface PermissionMatrix {
  probes: Probe[];
  users: AuthUser[];
  /** `allowed[i][j]`: probe i by user j. */
  allowed: boolean[][];
}

export function permissionMatrix(d: AuthDescription): PermissionMatrix {
  const probes = permissionProbes(d);
  const users = usersOf(d);
  const permissions = users.map((u) => permissionsFor(d.namespace, u, d.policies));
  return {
    probes,
    users,
    allowed: probes.map((probe) => permissions.map((p) => publishAllowed(p, probe.subject))),
  };
}

/** The matrix as a Markdown table: one row per probe, one column per user (✓ allowed). */
export function renderPermissionMatrix(m: PermissionMatrix): string {
  const head = ["verb", "target", ...m.users.map((u) => `${u.role} ${u.name}`)];
  const rows = m.probes.map((probe, i) => [
    `\`${probe.verb}\``,
    `\`${probe.target}\``,
    ...(m.allowed[i] ?? []).map((ok) => (ok ? "✓" : "")),
  ]);
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  return [line(head), line(head.map(() => "---")), ...rows.map(line)].join("\n");
}

/** The deployment docs/security.md shows the matrix for: one user of each role. */
export const MATRIX_EXAMPLE = {
  namespace: "ns",
  agents: ["A"],
  policies: ["p1"],
  coordinators: ["c1"],
  operators: ["ops"],
  auditors: ["aud"],
  sealers: ["seal"],
  indexers: ["idx"],
  approvers: ["alice"],
  privacy: ["dpo"],
} as const;

export const MATRIX_START = "<!-- permission-matrix:start (npm run security:matrix) -->";
export const MATRIX_END = "<!-- permission-matrix:end -->";

/** `doc` with the text between the matrix markers replaced by `table`; undefined without markers. */
export function withMatrix(doc: string, table: string): string | undefined {
  const start = doc.indexOf(MATRIX_START);
  const end = doc.indexOf(MATRIX_END);
  if (start < 0 || end < start) return undefined;
  return `${doc.slice(0, start + MATRIX_START.length)}\n\n${table}\n\n${doc.slice(end)}`;
}
