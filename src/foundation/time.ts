/** Waiting, in one place: every retry loop in hookbus pauses through this. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}
