/**
 * The convention of the decision path, written once. Code that runs per call, per policy or per
 * replayed record (the codec, the agent's transport, the coordinator's asks and record, the
 * worker's answer, merge, facts, Cedar requests, replay) follows two rules; a comment at such a
 * site says "hot path (foundation/hot-path.ts)" instead of explaining them again. Off that path,
 * write what reads best. The figures behind them are in docs/performance.md.
 *
 * 1. **Synchronous when it can be.** A step that usually has its result at once returns
 *    `MaybePromise<T>`: the value itself, and a promise only when it must wait (a gzip, a blob,
 *    a signature). The caller tests the result with `isPromise` and awaits only then. An await on
 *    a value that is already there costs a microtask turn, and a promise (or a deadline timer
 *    around one) per step and call was measurable (issue 12: 20-30 µs per call in all). `T` is
 *    never itself a promise: a decoded JSON value, a record or a verdict cannot be one.
 *
 * 2. **One shape per object, made at once.** An object made per call is one literal in a fixed
 *    key order (optional fields then set one by one in that order), or an instance of a class.
 *    Not a property added after a spread (`{ ...a, b }`, `{ ...a, ...b }`), not a spread of a
 *    conditional part (`...(x === undefined ? {} : { x })`: a throwaway object per field), not a
 *    literal with getters, and never an object made the prototype of another. On V8 (Node 20 to
 *    24) each of these gives objects maps of their own or dictionary-mode properties: about 1-3
 *    µs each, and every later reader of such objects goes megamorphic.
 */

/** A result that is usually there at once; a promise only when the work had to wait. */
export type MaybePromise<T> = T | Promise<T>;

/** Whether a `MaybePromise` must be awaited (rule 1). */
export function isPromise<T>(value: MaybePromise<T>): value is Promise<T> {
  return value instanceof Promise;
}
