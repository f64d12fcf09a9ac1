/** `hookbus registry apply|show|validate|diff`. */
import { readFile } from "node:fs/promises";
import { Subjects } from "../../bus/subjects.js";
import { HookbusError } from "../../foundation/errors.js";
import { diffRegistry, formatRegistryDiff } from "../../registry/diff.js";
import {
  isCedarPolicy,
  parseRegistryDocument,
  type ValidRegistryDocument,
} from "../../registry/document.js";
import { inlineCedarSources } from "../../registry/cedar-source.js";
import { checkCedarEntries } from "../../cedar/check.js";
import { RegistryStore } from "../../registry/store.js";
import {
  awaitRevision,
  coordinatorsBefore,
  isEnforced,
  type Propagation,
} from "../../registry/propagation.js";
import type { RegistrySnapshot } from "../../registry/snapshot.js";
import { parseCommand, type Command } from "../command.js";
import type { Output } from "../output.js";
import type { NatsConnection } from "@nats-io/transport-node";
import { connectNats } from "../../bus/connect.js";
import { unreadableFile } from "../../foundation/failure.js";
import { parseJsonText } from "../../foundation/json-text.js";

/** A registry is stored in one KV value, which must fit one NATS message (1 MiB by default). */
export const MAX_REGISTRY_FILE_BYTES = 1024 * 1024;

/** Read a JSON file a person wrote: line and column on a mistake, duplicate keys refused. */
export async function readJsonFile(
  path: string,
  what: string,
  code: "HOOKBUS_INVALID_REGISTRY" | "HOOKBUS_INVALID_FIXTURE",
  maxBytes: number,
): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw unreadableFile(path, what, error, code);
  }
  if (Buffer.byteLength(text) > maxBytes) {
    throw new HookbusError(code, `${path} is larger than ${maxBytes} bytes`, { path });
  }
  return parseJsonText(text, { code, source: path });
}

/** A registry file as JSON, with each cedar policy's `source` file read into its `cedar` text. */
export async function readRegistryFile(path: string): Promise<unknown> {
  const raw = await readJsonFile(
    path,
    "registry file",
    "HOOKBUS_INVALID_REGISTRY",
    MAX_REGISTRY_FILE_BYTES,
  );
  return inlineCedarSources(raw, path);
}

/** Parse a registry file's document and check its Cedar sets (parse and type-check). */
export function checkedRegistryDocument(raw: unknown, source: string): ValidRegistryDocument {
  const valid = parseRegistryDocument(raw, source);
  checkCedarEntries(valid.policies.filter(isCedarPolicy));
  return valid;
}

export function formatSnapshot(snapshot: RegistrySnapshot): string {
  const rows = snapshot.document.policies.map((p) => [
    p.name,
    String(p.priority),
    p.mode,
    p.failMode ?? "(hook default)",
    `${p.timeoutMs}ms`,
    p.hooks.join(","),
    p.kind ?? "worker",
  ]);
  const header = ["policy", "priority", "mode", "failMode", "timeout", "hooks", "kind"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  return [`registry revision ${snapshot.revision}`, line(header), ...rows.map(line)].join("\n");
}

const HELP = `usage: hookbus registry apply FILE [--wait-ms N] [--json]
       hookbus registry show [--json]
       hookbus registry validate FILE [--json]
       hookbus registry diff FILE [--json]

apply     validate a policy set (JSON, schemas/registry.schema.json) and store it as the next
          registry revision; every mistake is reported with its path and nothing is stored.
          A policy of kind cedar has its \`source\` file read, parsed and type-checked, and its
          text stored (docs/cedar.md).
          A file identical to the set in force stores nothing (the revision stays).
          Then waits (--wait-ms, default 5000; 0: not at all) until every live coordinator
          reports the revision in force, and prints how long that took; exit 1, naming them,
          when some did not. A coordinator that answered before the change and is silent while
          it loads it (a large Cedar set) is waited for, not taken for absent.
show      print the policy set in force and its revision
validate  check a file offline (no NATS): JSON syntax (line and column), duplicate keys, the
          schema, hook names; exit 0 when valid, 1 when not
diff      what applying the file would change against the set in force, policy by policy;
          exit 0 when nothing would change, 1 when something would (like diff(1))`;

/** How long `apply` waits for every live coordinator to enforce the new revision by default. */
const DEFAULT_WAIT_MS = 5000;

export function parseWaitMs(value: string | undefined): number {
  if (value === undefined) return DEFAULT_WAIT_MS;
  const ms = Number(value);
  if (!Number.isSafeInteger(ms) || ms < 0 || ms > 600_000)
    throw new HookbusError("HOOKBUS_USAGE", `--wait-ms takes 0-600000 milliseconds, not ${value}`);
  return ms;
}

export function formatPropagation(p: Propagation): string {
  if (p.unanswered === true)
    return `NOT CONFIRMED after ${p.elapsedMs} ms: something listens for coordinators but none answered (one may still be loading the revision): run hookbus status, or apply again with a longer --wait-ms`;
  if (p.coordinators.length === 0)
    return "no live coordinator: the revision is enforced when one starts (hookbus coordinator)";
  if (p.laggards.length === 0)
    return `enforced by ${p.coordinators.length} coordinator(s) in ${p.elapsedMs} ms`;
  const names = p.laggards
    .map(
      (c) =>
        `${c.id} (revision ${c.revision}, ${c.answered === false ? "no answer since the change: still loading it, or stopped" : "still enforcing it: the change is loading, or failed to load (hookbus status says which)"})`,
    )
    .join(", ");
  return `NOT ENFORCED after ${p.elapsedMs} ms by ${p.laggards.length} of ${p.coordinators.length} coordinator(s): ${names}`;
}

/**
 * `registry apply`: check, store, then wait until every live coordinator enforces the revision.
 * Who must confirm it is asked before the change: a coordinator busy loading it may not answer
 * for a while, and silence is not absence.
 */
async function applyAndConfirm(
  nc: NatsConnection,
  store: RegistryStore,
  args: {
    raw: unknown;
    file: string;
    namespace: string;
    waitMs: string | undefined;
    json: boolean;
  },
  out: Output,
): Promise<number> {
  const { raw, file } = args;
  checkedRegistryDocument(raw, file); // Cedar sets are refused before anything is stored
  const waitMs = parseWaitMs(args.waitMs);
  const namespace = args.namespace;
  const before = waitMs === 0 ? undefined : await coordinatorsBefore(nc, namespace);
  const { snapshot, changed } = await store.applyChange(raw, file);
  const propagation =
    before === undefined
      ? undefined
      : await awaitRevision(nc, namespace, snapshot.revision, waitMs, "registry", before);
  if (args.json)
    out.print(
      JSON.stringify(
        { revision: snapshot.revision, changed, ...snapshot.document, propagation },
        null,
        2,
      ),
    );
  else {
    out.print(
      changed
        ? `applied ${file}: ${snapshot.document.policies.length} policies, revision ${snapshot.revision}`
        : `unchanged: ${file} matches revision ${snapshot.revision}, nothing stored`,
    );
    if (propagation !== undefined) out.print(formatPropagation(propagation));
  }
  return propagation !== undefined && !isEnforced(propagation) ? 1 : 0;
}

const ACTIONS = new Set(["apply", "show", "validate", "diff"]);

/** What is wrong with the action and file arguments (undefined: nothing). */
function usageProblem(
  action: string | undefined,
  file: string | undefined,
  extra: readonly string[],
): string | undefined {
  const needsFile = action !== "show";
  if (action === undefined || !ACTIONS.has(action))
    return `hookbus registry takes apply FILE, show, validate FILE or diff FILE${action === undefined ? "" : `, not ${JSON.stringify(action)}`} (hookbus registry --help)`;
  if ((needsFile && file === undefined) || (!needsFile && file !== undefined) || extra.length > 0)
    return `hookbus registry ${action} ${needsFile ? "takes one FILE" : "takes no file"} (hookbus registry --help)`;
  return undefined;
}

export const registryCommand: Command = {
  summary: "apply, show, validate or diff a policy set",
  async run(argv, out) {
    const { values, positionals } = parseCommand(argv, {
      json: { type: "boolean" },
      "wait-ms": { type: "string" },
    });
    const [action, file, ...extra] = positionals;
    if (values.help === true) {
      out.print(HELP);
      return 0;
    }
    const needsFile = action !== "show";
    const problem = usageProblem(action, file, extra);
    if (problem !== undefined) throw new HookbusError("HOOKBUS_USAGE", problem);
    const json = values.json === true;
    const raw = needsFile ? await readRegistryFile(file!) : undefined;
    if (action === "validate") {
      const valid = checkedRegistryDocument(raw, file!);
      out.print(
        json
          ? JSON.stringify({ valid: true, policies: valid.policies.length })
          : `${file} is valid: ${valid.policies.length} policies`,
      );
      return 0;
    }
    const nc = await connectNats(values);
    try {
      const subjects = new Subjects(values.namespace);
      const store = await RegistryStore.open(nc, subjects);
      if (action === "diff") {
        const next = checkedRegistryDocument(raw, file!);
        const current = await store.current();
        const diff = diffRegistry(current.document, next);
        out.print(
          json
            ? JSON.stringify({ revision: current.revision, ...diff }, null, 2)
            : formatRegistryDiff(diff, current.revision),
        );
        return diff.same ? 0 : 1;
      }
      if (action === "apply")
        return await applyAndConfirm(
          nc,
          store,
          { raw, file: file!, namespace: subjects.namespace, waitMs: values["wait-ms"], json },
          out,
        );
      const snapshot = await store.current();
      out.print(
        json
          ? JSON.stringify({ revision: snapshot.revision, ...snapshot.document }, null, 2)
          : formatSnapshot(snapshot),
      );
      return 0;
    } finally {
      await nc.drain();
    }
  },
};
