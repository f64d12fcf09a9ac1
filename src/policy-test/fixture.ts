/**
 * Policy test fixtures (`hookbus policy test`): recorded-style inputs with the decision they must
 * get. JSON (`{ policies?, registry?, context?, cases: [...] }` or a bare array of cases) or
 * NDJSON (one case per line). Paths in a fixture are relative to the fixture file.
 */
import { dirname, resolve } from "node:path";
import { z } from "zod";
import { HOOK_NAMES } from "../catalog/catalog.js";
import { toValidationIssues } from "../catalog/validate.js";
import { parseJsonText } from "../foundation/json-text.js";
import { HookbusError } from "../foundation/errors.js";

/** Fixture files are read whole; cases run in process, so this bounds memory, not the wire. */
export const MAX_FIXTURE_FILE_BYTES = 16 * 1024 * 1024;
export const MAX_CASES_PER_FILE = 10_000;
export const MAX_HISTORY_PER_CASE = 1_000;

const JsonObject = z.record(z.string(), z.unknown());
const HookName = z.enum(HOOK_NAMES);

const Step = z.strictObject({
  hook: HookName,
  event: JsonObject,
  /** Merged over the case's context. */
  context: JsonObject.optional(),
});

export const FixtureCase = z.strictObject({
  name: z.string().min(1).max(200),
  hook: HookName,
  event: JsonObject,
  context: JsonObject.optional(),
  /** Calls and observations run first, in order, in the same session: they build policy state. */
  history: z.array(Step).max(MAX_HISTORY_PER_CASE).optional(),
  /**
   * `outcome` and any decision field (`blockedBy`, `blockReason`, `params`, `content`, `tools`,
   * ...) compared exactly; `blockReasonIncludes` matches part of the block reason.
   */
  expect: z
    .object({
      // pending_approval: the policies asked for a person (compare `requireApproval` to check the terms).
      outcome: z.enum(["allow", "modify", "block", "reply", "pending_approval"]),
      blockReasonIncludes: z.string().optional(),
    })
    .catchall(z.unknown()),
});
export type FixtureCase = z.infer<typeof FixtureCase>;

const FixtureFile = z.strictObject({
  policies: z.array(z.string().min(1)).optional(),
  registry: z.string().min(1).optional(),
  context: JsonObject.optional(),
  cases: z.array(z.unknown()).max(MAX_CASES_PER_FILE),
});

export interface Fixture {
  path: string;
  /** Absolute paths of policy modules the file names (may be empty: then --policies). */
  policies: string[];
  registry: string | undefined;
  context: Record<string, unknown>;
  cases: FixtureCase[];
}

function invalid(message: string, details: Record<string, unknown> = {}): HookbusError {
  return new HookbusError("HOOKBUS_INVALID_FIXTURE", message, details);
}

function parseCase(raw: unknown, where: string): FixtureCase {
  const parsed = FixtureCase.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issues = toValidationIssues(parsed.error);
  const list = issues.map((i) => `${i.path || "(case)"}: ${i.message}`).join("; ");
  throw invalid(`${where}: ${list}`, { issues });
}

/** Parse a fixture file's text (`path` names it in errors and anchors its relative paths). */
export function parseFixture(path: string, text: string): Fixture {
  const base = dirname(resolve(path));
  if (path.endsWith(".ndjson")) {
    const cases: FixtureCase[] = [];
    text.split("\n").forEach((line, index) => {
      if (line.trim() === "") return;
      if (cases.length >= MAX_CASES_PER_FILE)
        throw invalid(`${path}: more than ${MAX_CASES_PER_FILE} cases`);
      const raw = parseJsonText(line, {
        code: "HOOKBUS_INVALID_FIXTURE",
        source: path,
        lineOffset: index,
      });
      cases.push(parseCase(raw, `${path}:${index + 1}`));
    });
    return { path, policies: [], registry: undefined, context: {}, cases };
  }
  const raw = parseJsonText(text, { code: "HOOKBUS_INVALID_FIXTURE", source: path });
  const file = FixtureFile.safeParse(Array.isArray(raw) ? { cases: raw } : raw);
  if (!file.success) {
    const list = toValidationIssues(file.error)
      .map((i) => `${i.path || "(root)"}: ${i.message}`)
      .join("; ");
    throw invalid(`${path}: ${list}`);
  }
  const names = new Set<string>();
  const cases = file.data.cases.map((c, i) => {
    const parsed = parseCase(c, `${path} cases.${i}`);
    if (names.has(parsed.name))
      throw invalid(`${path} cases.${i}: a second case named "${parsed.name}"`);
    names.add(parsed.name);
    return parsed;
  });
  return {
    path,
    policies: (file.data.policies ?? []).map((p) => resolve(base, p)),
    registry: file.data.registry === undefined ? undefined : resolve(base, file.data.registry),
    context: file.data.context ?? {},
    cases,
  };
}
