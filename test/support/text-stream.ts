/** Reading a streamed answer in the adapters' stream tests, up to its end or the error that cut it. */

/**
 * Reads a text stream into `seen` until it ends or fails: the error it failed with (or the one
 * `completed` resolves to), else undefined.
 */
export async function readText(
  stream: AsyncIterable<string>,
  seen: string[],
  completed: () => Promise<unknown> = () => Promise.resolve(undefined),
): Promise<unknown> {
  try {
    for await (const chunk of stream) seen.push(chunk);
    return await completed();
  } catch (error) {
    return error;
  }
}
