import { mkdir, mkdtemp, rm, writeFile, chmod } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installSource, natsStart } from "../../../src/cli/commands/init-source.js";

const checkout = fileURLToPath(new URL("../../../", import.meta.url));
let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "hookbus-init-source-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** A copy of hookbus as npm installs it into an owning project whose package.json names `spec`. */
async function installedWith(spec: string): Promise<string> {
  const owner = await mkdtemp(join(scratch, "owner-"));
  const root = join(owner, "node_modules", "hookbus");
  await mkdir(root, { recursive: true });
  await writeFile(join(owner, "package.json"), JSON.stringify({ dependencies: { hookbus: spec } }));
  return root;
}

describe("where init says to install hookbus from", () => {
  it("a checkout: packs it into the project first, then installs that tarball", () => {
    const source = installSource(checkout, "0.1.0", "/tmp/my-agent");
    expect(source.spec).toBe("file:./hookbus-0.1.0.tgz");
    expect(source.before).toEqual([
      `(cd ${checkout.replace(/\/$/, "")} && npm pack --silent --pack-destination /tmp/my-agent)`,
    ]);
  });

  it("a tarball npx or npm install fetched: the same tarball, as an absolute path", async () => {
    const root = await installedWith("file:../../tmp/hookbus-0.1.0.tgz");
    const source = installSource(root, "0.1.0", "/tmp/my-agent");
    expect(source.spec).toBe(
      `file:${join(root, "..", "..", "..", "..", "tmp", "hookbus-0.1.0.tgz")}`,
    );
    expect(source.before).toEqual([]);
  });

  it("the registry: the version range npm recorded, else this version", async () => {
    expect(installSource(await installedWith("^0.1.0"), "0.1.0", "/p").spec).toBe("^0.1.0");
    const orphan = join(scratch, "global", "lib", "hookbus");
    await mkdir(orphan, { recursive: true });
    expect(installSource(orphan, "0.2.0", "/p")).toMatchObject({ spec: "^0.2.0", before: [] });
  });
});

describe("how init says to get NATS", () => {
  it("says nothing needs starting when NATS_URL answers", async () => {
    const server = createServer((socket) => socket.end());
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as { port: number };
    try {
      const start = await natsStart({ NATS_URL: `nats://127.0.0.1:${port}`, PATH: "" });
      expect(start.line).toBe(
        `# NATS already answers at nats://127.0.0.1:${port}: nothing to start`,
      );
    } finally {
      server.close();
    }
  });

  it("starts nats-server when it is installed and nothing answers", async () => {
    const bin = join(scratch, "bin");
    await mkdir(bin, { recursive: true });
    await writeFile(join(bin, "nats-server"), "#!/bin/sh\n");
    await chmod(join(bin, "nats-server"), 0o755);
    const start = await natsStart({ NATS_URL: "nats://127.0.0.1:1", PATH: bin });
    expect(start.script).toBe("nats-server -js -sd .nats");
    expect(start.line).toMatch(/^npm run nats & /);
  });
});
