/**
 * Where a problem is in the text a person wrote: Cedar reports byte offsets (into the whole set
 * for a syntax error, into one policy for a type error); people look for a line and a column.
 */
import type { ValidationIssue } from "../foundation/errors.js";
import type { CedarPolicySet } from "./policy-set.js";
import { cedarWasm, describeErrors } from "./wasm.js";

export interface Located {
  line: number;
  column: number;
}

/** Line and column (both from 1) of a character offset into `text`. */
export function lineAndColumn(text: string, offset: number): Located {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(Math.max(0, offset), text.length);
  for (let i = 0; i < end; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: end - lineStart + 1 };
}

export function atLine(at: Located, message: string): string {
  return `line ${at.line}, column ${at.column}: ${message}`;
}

/** Where each policy of a set starts in its text (policies are in the order they are written). */
export function policyOffsets(set: CedarPolicySet): Map<string, number> {
  const offsets = new Map<string, number>();
  let from = 0;
  for (const [id, policy] of set.policies) {
    const at = set.text.indexOf(policy.text, from);
    offsets.set(id, at < 0 ? 0 : at);
    if (at >= 0) from = at + policy.text.length;
  }
  return offsets;
}

type CedarError = {
  message: string;
  help?: string | null;
  sourceLocations?: readonly { start: number }[] | null;
};

/** Cedar counts UTF-8 bytes; a JavaScript string counts UTF-16 units. */
function charOffset(text: string, byteOffset: number): number {
  return Buffer.from(text, "utf8").subarray(0, byteOffset).toString("utf8").length;
}

/**
 * The first source location of a Cedar error as a line and column of `whole`: the location is in
 * bytes of `part`, which starts at character `base` of `whole`.
 */
function locationOf(
  error: CedarError,
  whole: string,
  part: string,
  base: number,
): Located | undefined {
  const start = error.sourceLocations?.[0]?.start;
  return start === undefined ? undefined : lineAndColumn(whole, base + charOffset(part, start));
}

/**
 * The syntax errors of a set's text with their lines and columns; empty when it parses (then the
 * parser's own issues stand).
 */
export function locatedSyntaxIssues(text: string): ValidationIssue[] {
  const parts = cedarWasm.policySetTextToParts(text);
  if (parts.type !== "failure") return [];
  return parts.errors.map((error: CedarError) => {
    const message = describeErrors([error])[0] ?? error.message;
    const start = error.sourceLocations?.[0]?.start;
    if (start === undefined) return { path: "", rule: "cedar", message };
    const offset = charOffset(text, start);
    const at = lineAndColumn(text, offset);
    return { path: policyAround(text, offset), rule: "cedar", message: atLine(at, message) };
  });
}

const ID_ANNOTATION = /@id\s*\(\s*"([^"\\]*)"/g;

/**
 * The policy an offset falls in, named as policy-set.ts names it: its `@id`, else `policy<N>` by
 * position. Policies end at a `;` outside strings and comments.
 */
export function policyAround(text: string, offset: number): string {
  let index = 0;
  let start = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    const ch = text[i];
    if (ch === '"') {
      for (i++; i < offset && text[i] !== '"'; i++) if (text[i] === "\\") i++;
    } else if (ch === "/" && text[i + 1] === "/") {
      while (i < offset && text[i] !== "\n") i++;
    } else if (ch === ";") {
      index++;
      start = i + 1;
    }
  }
  const ids = [...text.slice(start, offset).matchAll(ID_ANNOTATION)];
  return ids.at(-1)?.[1] ?? `policy${index}`;
}

/** A type error of one policy, with the line and column in the set's text. */
export function locatedTypeMessage(
  set: CedarPolicySet,
  policyId: string,
  error: CedarError,
  offsets: Map<string, number>,
): string {
  const message = describeErrors([error])[0] ?? error.message;
  const policy = set.policies.get(policyId);
  const at =
    policy === undefined
      ? undefined
      : locationOf(error, set.text, policy.text, offsets.get(policyId) ?? 0);
  return at === undefined ? message : atLine(at, message);
}
