/**
 * `~` and `$HOME` when nobody said where the home is (the coordinator takes no home from a call):
 * a path that climbs out of the home reaches some place nobody knows — `/home`, `/Users`, `/`
 * itself — so it is `unknown`, never the project (`~/..` normalised as a relative path was `.`).
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { loadShellParser, shellFacts } from "../../../../src/facts/shell/index.js";

beforeAll(async () => {
  await loadShellParser();
});

const targets = (command: string) => shellFacts(command, {}).deletions.flatMap((d) => d.targets);

describe("paths from an unknown home", () => {
  it("are unknown once they climb out of it, however they are spelt", () => {
    for (const command of [
      "rm -rf ~/..",
      "rm -rf ~/../..",
      "rm -rf $HOME/../..",
      'rm -rf "${HOME}/.."',
      "rm -rf ~/x/../../..",
      "cd ~ && rm -rf ..",
      "cd && rm -rf ../x",
    ]) {
      const facts = shellFacts(command, {});
      expect(facts.deletesUnknownTarget, command).toBe(true);
      expect(
        targets(command).map((t) => t.class),
        command,
      ).toEqual(["unknown"]);
    }
  });

  it("stay the home, or inside it, while they do not climb out", () => {
    expect(targets("rm -rf ~")).toEqual([{ path: "~", class: "home", glob: false }]);
    expect(targets("rm -rf ~/a/../b")).toEqual([
      { path: "~/b", class: "inside-home", glob: false },
    ]);
    expect(targets("cd ~/app && rm -rf .")).toEqual([
      { path: "~/app", class: "inside-home", glob: false },
    ]);
  });

  // However many levels go down and up, a target is never the project, and never a known place
  // unless it stays inside the home.
  it("is never the project (property)", () => {
    const segment = fc.constantFrom("..", "a", "b", ".");
    fc.assert(
      fc.property(fc.array(segment, { minLength: 1, maxLength: 6 }), (parts) => {
        const [target] = targets(`rm -rf ~/${parts.join("/")}`);
        let depth = 0;
        let climbs = false;
        for (const p of parts) {
          if (p === "..") depth--;
          else if (p !== ".") depth++;
          if (depth < 0) climbs = true;
        }
        expect(target?.class).not.toBe("project");
        if (climbs) expect(target?.class).toBe("unknown");
        else expect(["home", "inside-home"]).toContain(target?.class);
      }),
    );
  });
});
