/** `--nkey`, `HOOKBUS_NKEY_SEED` and `--inbox-prefix` / `HOOKBUS_INBOX_PREFIX` in the connection options. */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createUser } from "@nats-io/nkeys";
import { describe, expect, it } from "vitest";
import { inboxPrefixFor } from "../../../src/auth/inbox.js";
import { connectionOptions } from "../../../src/bus/connect.js";

const pair = createUser();
const seed = new TextDecoder().decode(pair.getSeed());

function thrownCode(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return (error as { code?: string }).code;
  }
  return undefined;
}

describe("connection options for generated users", () => {
  it("signs the server's nonce with the seed from --nkey FILE or HOOKBUS_NKEY_SEED", () => {
    const file = join(mkdtempSync(join(tmpdir(), "hookbus-nkey-")), "user.nk");
    writeFileSync(file, `# a comment\n${seed}\n`);
    for (const options of [
      connectionOptions({ nkey: file }, {}),
      connectionOptions({}, { HOOKBUS_NKEY_FILE: file }),
      connectionOptions({}, { HOOKBUS_NKEY_SEED: seed }),
    ]) {
      const auth = (options.authenticator as (nonce?: string) => { nkey: string; sig: string })(
        "nonce",
      );
      expect(auth.nkey).toBe(pair.getPublicKey());
      expect(
        pair.verify(new TextEncoder().encode("nonce"), Buffer.from(auth.sig, "base64url")),
      ).toBe(true);
    }
  });

  it("refuses a file without a valid seed, with a coded error", () => {
    const file = join(mkdtempSync(join(tmpdir(), "hookbus-nkey-")), "bad.nk");
    // A middle character: the last one's low bits can be base32 padding, still a valid seed.
    const i = Math.floor(seed.length / 2);
    writeFileSync(file, seed.slice(0, i) + (seed[i] === "A" ? "B" : "A") + seed.slice(i + 1));
    expect(thrownCode(() => connectionOptions({ nkey: file }, {}))).toBe(
      "HOOKBUS_INVALID_ARGUMENT",
    );
    expect(thrownCode(() => connectionOptions({ nkey: "/nonexistent/x.nk" }, {}))).toBe(
      "HOOKBUS_INVALID_ARGUMENT",
    );
  });

  it("takes the inbox prefix from the flag, then the environment, and refuses wildcards", () => {
    const prefix = inboxPrefixFor("hookbus", "agent", "support.bot");
    expect(prefix).toBe("_INBOX_hookbus.agent.support=2Ebot");
    expect(connectionOptions({ "inbox-prefix": prefix }, {}).inboxPrefix).toBe(prefix);
    expect(connectionOptions({}, { HOOKBUS_INBOX_PREFIX: prefix }).inboxPrefix).toBe(prefix);
    expect(connectionOptions({}, {}).inboxPrefix).toBeUndefined();
    for (const bad of ["_INBOX.>", "a..b", "a b", "x.*"])
      expect(thrownCode(() => connectionOptions({ "inbox-prefix": bad }, {}))).toBe(
        "HOOKBUS_INVALID_ARGUMENT",
      );
  });
});
