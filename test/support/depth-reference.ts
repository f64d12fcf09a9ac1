/**
 * The JSON depth scan as first written (one loop, every byte tested for every case): the
 * reference that src/foundation/limits.ts's faster `jsonDepthExceeds` must agree with on any
 * bytes (test/unit/limits.test.ts), and the "before" of its benchmark (bench/body-parse.ts).
 */
export function referenceDepthExceeds(text: Uint8Array, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const b = text[i]!;
    if (inString) {
      if (b === 0x5c) i++;
      else if (b === 0x22) inString = false;
      continue;
    }
    if (b === 0x22) inString = true;
    else if (b === 0x7b || b === 0x5b) {
      if (++depth > maxDepth) return true;
    } else if (b === 0x7d || b === 0x5d) depth--;
  }
  return false;
}
