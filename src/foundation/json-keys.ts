/**
 * A key twice in one JSON object, found without a parser of our own: the depth scan that runs
 * before JSON.parse anyway also counts the members of every object (limits.ts, `jsonMembers`),
 * and after the parse the parsed value's keys are counted. JSON.parse keeps one key of a pair, so
 * the two counts differ exactly when some object had a key twice; how the keys were spelled
 * (`"a"` or `"\u0061"`, two invalid UTF-8 sequences both read as U+FFFD) is the parser's answer.
 *
 * Why a key twice is refused: JSON.parse keeps the last of two `"params"`, other parsers (and
 * people reading the text) the first. A body is validated as JSON.parse reads it; once its text is
 * passed on as it came (a log record spliced from the call's bytes, docs/performance.md), a reader
 * with another parser could be shown params other than the ones validated and decided on.
 *
 * Measured against comparing each key with its object's earlier keys inside the byte loop (a hash,
 * a set for large objects): counting and walking cost about half as much on the bodies of one
 * bench call (bench/body-parse.ts, docs/performance.md).
 */

/**
 * Returned by parsedMembers for a value holding a number JSON.parse read as ±Infinity (`1e999`,
 * a number that overflows a double): the coordinator's facts and Cedar would see Infinity while
 * every body written from the value (policy requests, the record) carries `null`, so one call
 * would be decided on one value and recorded with another.
 */
export const NON_FINITE_NUMBER = -1;

/**
 * The keys of every object in a value JSON.parse returned (its depth already bounded by the
 * scan), or NON_FINITE_NUMBER. `for…in`, not Object.keys: no array per object. An enumerable
 * property someone added to Object.prototype would be counted in every object: the counts then
 * differ and the body is refused, never accepted.
 */
export function parsedMembers(value: unknown): number {
  if (typeof value !== "object" || value === null)
    return typeof value === "number" && !Number.isFinite(value) ? NON_FINITE_NUMBER : 0;
  let count = 0;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const inner = parsedMembers(value[i]);
      if (inner < 0) return inner;
      count += inner;
    }
    return count;
  }
  for (const key in value) {
    const inner = parsedMembers((value as Record<string, unknown>)[key]);
    if (inner < 0) return inner;
    count += 1 + inner;
  }
  return count;
}
