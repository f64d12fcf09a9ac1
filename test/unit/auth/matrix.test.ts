import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseAuthDescription } from "../../../src/auth/description.js";
import {
  MATRIX_EXAMPLE,
  permissionMatrix,
  publishAllowed,
  subjectMatches,
} from "../../../src/auth/matrix.js";
import { logDurables, permissionsFor } from "../../../src/auth/permissions.js";
import { OBSERVATIONAL_HOOK_NAMES } from "../../../src/catalog/catalog.js";
import { Subjects } from "../../../src/bus/subjects.js";
import { observerDurableName } from "../../../src/worker/observer.js";
import { SECURITY_DOC, securityDocWithMatrix } from "../../../scripts/security-matrix.js";

const d = parseAuthDescription(MATRIX_EXAMPLE);

describe("the permission matrix", () => {
  it("docs/security.md shows the matrix the code generates (npm run security:matrix)", async () => {
    const doc = readFileSync(SECURITY_DOC, "utf8");
    expect(await securityDocWithMatrix(doc)).toBe(doc);
  });

  it("matches subjects token by token, as nats-server does", () => {
    expect(subjectMatches("a.*.c", "a.b.c")).toBe(true);
    expect(subjectMatches("a.*", "a.b.c")).toBe(false);
    expect(subjectMatches("a.>", "a")).toBe(false);
    expect(subjectMatches("a.>", "a.b.c")).toBe(true);
    expect(subjectMatches("a.b", "a.b.c")).toBe(false);
    expect(subjectMatches("a.b.c", "a.b")).toBe(false);
  });

  it("a deny wins over an allow", () => {
    const p = { publish: ["x.>"], denyPublish: ["x.y"], subscribe: [], allowResponses: false };
    expect(publishAllowed(p, "x.y")).toBe(false);
    expect(publishAllowed(p, "x.z")).toBe(true);
  });

  it("no role may delete any consumer", () => {
    const m = permissionMatrix(d);
    m.probes.forEach((probe, i) => {
      if (probe.verb === "CONSUMER.DELETE") expect(m.allowed[i]).not.toContain(true);
    });
  });

  it("only a durable's owner may create, pull from or ack it", () => {
    const m = permissionMatrix(d);
    const owners: Record<string, string> = { "ns-indexer": "indexer", ns_p1_: "worker" };
    const verbs = /CONSUMER\.(CREATE|DURABLE|MSG\.NEXT)|ACK/;
    m.probes.forEach((probe, i) => {
      const durable = Object.keys(owners).find((name) => probe.target.includes(` ${name}`));
      if (durable === undefined || !verbs.test(probe.verb)) return;
      m.users.forEach((user, j) => {
        if (user.role !== owners[durable]) expect(m.allowed[i]?.[j], probe.subject).toBe(false);
      });
    });
  });

  it("only the privacy role may delete or purge data keys; agents, workers and operators cannot even read them", () => {
    const m = permissionMatrix(d);
    const keys = "KV_ns_privacy_keys";
    const deletes = ["STREAM.MSG.DELETE", "STREAM.PURGE", "STREAM.DELETE", "STREAM.UPDATE"];
    const checked = m.probes.flatMap((probe, i) =>
      probe.target === keys && deletes.includes(probe.verb) ? [i] : [],
    );
    expect(checked).toHaveLength(deletes.length);
    for (const i of checked)
      m.users.forEach((user, j) => {
        const allowed = m.allowed[i]?.[j] === true;
        expect(allowed, `${m.probes[i]!.verb} by ${user.role}`).toBe(
          user.role === "privacy" && m.probes[i]!.verb === "STREAM.MSG.DELETE",
        );
      });
    const read = m.probes.findIndex((p) => p.target === keys && p.verb === "DIRECT.GET by subject");
    m.users.forEach((user, j) => {
      const mayRead = ["coordinator", "auditor", "privacy"].includes(user.role);
      expect(m.allowed[read]?.[j], `read by ${user.role}`).toBe(mayRead);
    });
  });

  it("the privacy role appends only erasure records to the log", () => {
    const privacy = permissionsFor("ns", { role: "privacy", name: "dpo" }, []);
    expect(publishAllowed(privacy, "ns.audit._erasure.e1.unknown.erasure")).toBe(true);
    expect(publishAllowed(privacy, "ns.audit.A.s.before_tool_call.allow")).toBe(false);
  });

  it("nobody may use the unnamed legacy consumer create (its name comes from the payload)", () => {
    const m = permissionMatrix(d);
    m.probes.forEach((probe, i) => {
      if (probe.verb.startsWith("CONSUMER.CREATE (legacy"))
        expect(m.allowed[i]).not.toContain(true);
    });
  });

  it("denies the durables the workers really create", () => {
    const ns = "acme-prod";
    const log = new Subjects(ns).logStream;
    const names = OBSERVATIONAL_HOOK_NAMES.map((hook) => observerDurableName(ns, "p1", hook));
    expect(logDurables(ns, ["p1"])).toEqual([`${ns}-indexer`, ...names]);
    const auditor = permissionsFor(ns, { role: "auditor", name: "aud" }, ["p1"]);
    for (const name of names) {
      const create = `$JS.API.CONSUMER.CREATE.${log}.${name}.${ns}.audit.>`;
      expect(publishAllowed(auditor, create)).toBe(false);
    }
  });
});
