/** Where CLI commands write, injectable so tests read what a user would see. */
export interface Output {
  print(line: string): void;
  error(line: string): void;
}

export const consoleOutput: Output = {
  print: (line) => process.stdout.write(`${line}\n`),
  error: (line) => process.stderr.write(`${line}\n`),
};

let guarded = false;

/**
 * `hookbus audit query --json | head -1`: once the reader has gone, every further write fails
 * with EPIPE. That is the reader's choice, not an error: stop at once, quietly, with status 0.
 */
export function exitQuietlyOnClosedStdout(): void {
  if (guarded) return;
  guarded = true;
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(0);
    throw error;
  });
}
