/** Where CLI commands write, injectable so tests read what a user would see. */
export interface Output {
  print(line: string): void;
  error(line: string): void;
}

export const consoleOutput: Output = {
  print: (line) => process.stdout.write(`${line}\n`),
  error: (line) => process.stderr.write(`${line}\n`),
};
