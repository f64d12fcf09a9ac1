/** The checks every case shares; each throws a CaseFailure that names the first difference. */
import { isDeepStrictEqual } from "node:util";
import { z } from "zod";
import { PolicyReply } from "../bus/envelope.js";
import type { ModifyingHookName } from "../catalog/catalog.js";
import { parseVerdict } from "../catalog/validate.js";
import type { Reply } from "./probe.js";

export class CaseFailure extends Error {
  override readonly name = "CaseFailure";
}

export function fail(difference: string): never {
  throw new CaseFailure(difference);
}

/** Exactly one reply, a valid PolicyReply from this policy. */
export function single(all: readonly Reply[], policy: string): z.infer<typeof PolicyReply> {
  const replies = all.filter((r) => r.status === undefined);
  if (replies.length === 0 && all.length > 0) fail("no worker subscribed (status 503)");
  if (replies.length !== 1) {
    fail(
      replies.length === 0
        ? "no reply"
        : `answered ${replies.length} times (at ${replies.map((r) => Math.round(r.atMs)).join(", ")} ms)`,
    );
  }
  const reply = replies[0]!;
  if (reply.decodeError !== undefined) fail(`reply cannot be decoded: ${reply.decodeError}`);
  const parsed = PolicyReply.safeParse(reply.body);
  if (!parsed.success) fail(`not a PolicyReply: ${z.prettifyError(parsed.error)}`);
  if (parsed.data.policy !== policy)
    fail(`reply names policy ${JSON.stringify(parsed.data.policy)}`);
  const header = reply.errorHeader;
  const code = parsed.data.error?.code;
  if (header !== code) fail(`Hookbus-Error-Code header ${String(header)} but body code ${code}`);
  return parsed.data;
}

/** A reply with a verdict (or none) valid for the hook; returns the verdict. */
export function verdictOf(
  replies: readonly Reply[],
  policy: string,
  hook: ModifyingHookName,
): unknown {
  const reply = single(replies, policy);
  if (reply.error !== undefined) fail(`error ${reply.error.code}: ${reply.error.message}`);
  if (reply.verdict === undefined || reply.verdict === null) return undefined;
  try {
    parseVerdict(hook, reply.verdict);
  } catch (error) {
    fail(`verdict not allowed for ${hook}: ${String(error)}`);
  }
  return reply.verdict;
}

export function errorCode(replies: readonly Reply[], policy: string, codes: string[]): void {
  const reply = single(replies, policy);
  if (reply.error === undefined)
    fail(`expected error ${codes.join(" or ")}, got verdict ${JSON.stringify(reply.verdict)}`);
  if (!codes.includes(reply.error.code))
    fail(`expected error ${codes.join(" or ")}, got ${reply.error.code}: ${reply.error.message}`);
}

export function equal(actual: unknown, expected: unknown, what: string): void {
  if (!isDeepStrictEqual(actual, expected))
    fail(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
}

/** Polls `probe` until it is truthy or `ms` passes. */
export async function eventually<T>(
  probe: () => Promise<T | undefined>,
  ms: number,
  what: string,
): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > until) fail(`${what} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
