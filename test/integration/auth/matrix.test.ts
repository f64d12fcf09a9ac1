/**
 * The permission matrix on a live server: every probe of src/auth/matrix.ts published by every
 * user `hookbus auth` generates, against a nats-server running that configuration. The server's
 * answer (a "Permissions Violation" or none) must equal the table docs/security.md shows, cell
 * for cell. Nothing on this private server has streams, so an allowed probe does nothing.
 */
import { PermissionViolationError, type NatsConnection } from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";
import { permissionMatrix } from "../../../src/auth/matrix.js";
import { parseAuthDescription } from "../../../src/auth/description.js";
import { uniqueNamespace } from "../../support/nats.js";
import { useAuthServer } from "./harness.js";

const description = {
  namespace: uniqueNamespace("matrix"),
  agents: ["A"],
  policies: ["p1"],
  coordinators: ["c1"],
  operators: ["ops"],
  auditors: ["aud"],
  sealers: ["seal"],
  indexers: ["idx"],
  approvers: ["alice"],
};
const server = useAuthServer(description);
/** Denied to every role: once its violation is back, every earlier one is too (one connection). */
const SENTINEL = "matrix.sentinel.never-allowed";
const SENTINEL_TIMEOUT_MS = 10_000;

/** Publishes every subject (no reply: JetStream ignores an API request it cannot answer). */
async function deniedSubjects(nc: NatsConnection, subjects: string[]): Promise<Set<string>> {
  const denied = new Set<string>();
  const sentinel = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error("no violation for the sentinel")),
      SENTINEL_TIMEOUT_MS,
    );
    void (async () => {
      for await (const status of nc.status()) {
        if (status.type !== "error" || !(status.error instanceof PermissionViolationError))
          continue;
        if (status.error.operation !== "publish") continue;
        if (status.error.subject === SENTINEL) {
          clearTimeout(timer);
          resolve();
          return;
        }
        denied.add(status.error.subject);
      }
    })();
  });
  for (const subject of subjects) nc.publish(subject, "{}");
  nc.publish(SENTINEL, "");
  await nc.flush();
  await sentinel;
  return denied;
}

describe("the permission matrix on a live server", () => {
  it("the server allows exactly what the table in docs/security.md says, for every role", async () => {
    const matrix = permissionMatrix(parseAuthDescription(description));
    const subjects = matrix.probes.map((p) => p.subject);
    const mismatches: string[] = [];
    for (const [j, user] of matrix.users.entries()) {
      const nc = await server.as(user.role, user.name);
      const denied = await deniedSubjects(nc, subjects);
      matrix.probes.forEach((probe, i) => {
        const expected = matrix.allowed[i]?.[j] === true;
        if (expected === denied.has(probe.subject))
          mismatches.push(
            `${user.role} ${user.name}: ${probe.subject} ${expected ? "denied" : "allowed"}`,
          );
      });
      await nc.close();
    }
    expect(mismatches).toEqual([]);
    // The table is not vacuous: every role is allowed something and denied something.
    matrix.users.forEach((_, j) => {
      const column = matrix.allowed.map((row) => row[j]);
      expect(column).toContain(true);
      expect(column).toContain(false);
    });
  }, 120_000);
});
