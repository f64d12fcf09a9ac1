/**
 * Issue 21, findings 1 and 2, replayed with the generated credentials: an agent cannot delete a
 * coordinator's registry watch, and the read-only roles cannot create, alter, delete, pull from or
 * ack the durables on the log. Each refusal is the server's own, for the exact subject.
 */
import { describe, expect, it } from "vitest";
import { Subjects } from "../../../src/bus/subjects.js";
import { observerDurableName } from "../../../src/worker/observer.js";
import { uniqueNamespace } from "../../support/nats.js";
import { publishDenied, requestDenied, useAuthServer } from "./harness.js";

const ns = uniqueNamespace("consumers");
const s = new Subjects(ns);
const server = useAuthServer({
  namespace: ns,
  agents: ["mallory"],
  policies: ["p1"],
  coordinators: ["c1"],
  auditors: ["aud"],
  sealers: ["seal1"],
});
const API = "$JS.API";
const log = s.logStream;
const indexer = `${ns}-indexer`;
const observer = observerDurableName(ns, "p1", "after_tool_call");
const createAs = (durable: string, filter: string) =>
  JSON.stringify({
    stream_name: log,
    config: {
      durable_name: durable,
      name: durable,
      filter_subject: filter,
      ack_policy: "explicit",
    },
  });

describe("nobody alters a consumer it does not own", () => {
  it("an agent cannot delete anyone's registry watch (it froze the policy set)", async () => {
    const agent = await server.as("agent", "mallory");
    const subject = `${API}.CONSUMER.DELETE.KV_${s.registryBucket}.KV_WATCHER_abc_1`;
    expect((await requestDenied(agent, subject)).subject).toBe(subject);
  });

  it("a coordinator cannot delete a registry or approvals consumer either", async () => {
    const coordinator = await server.as("coordinator", "c1");
    for (const bucket of [s.registryBucket, s.approvalsBucket]) {
      const subject = `${API}.CONSUMER.DELETE.KV_${bucket}.KV_WATCHER_abc_1`;
      expect((await requestDenied(coordinator, subject)).subject).toBe(subject);
    }
  });

  for (const role of ["auditor", "sealer"] as const) {
    const name = role === "auditor" ? "aud" : "seal1";
    it(`the ${role} cannot create the indexer's durable first, with its own filter`, async () => {
      const nc = await server.as(role, name);
      const filter = `${ns}.audit.mallory.>`;
      const subject = `${API}.CONSUMER.CREATE.${log}.${indexer}.${filter}`;
      expect((await requestDenied(nc, subject, createAs(indexer, filter))).subject).toBe(subject);
      const plain = `${API}.CONSUMER.CREATE.${log}.${indexer}`;
      expect((await requestDenied(nc, plain, createAs(indexer, ""))).subject).toBe(plain);
      const durable = `${API}.CONSUMER.DURABLE.CREATE.${log}.${indexer}`;
      expect((await requestDenied(nc, durable, createAs(indexer, ""))).subject).toBe(durable);
      // The legacy subject takes the consumer's name from the payload: nobody may use it.
      const legacy = `${API}.CONSUMER.CREATE.${log}`;
      expect((await requestDenied(nc, legacy, createAs(indexer, ""))).subject).toBe(legacy);
    });

    it(`the ${role} cannot delete, pull from or ack an observer's durable`, async () => {
      const nc = await server.as(role, name);
      for (const subject of [
        `${API}.CONSUMER.DELETE.${log}.${observer}`,
        `${API}.CONSUMER.MSG.NEXT.${log}.${observer}`,
        `${API}.CONSUMER.CREATE.${log}.${observer}.${ns}.audit.*.*.after_tool_call.observed`,
      ])
        expect((await requestDenied(nc, subject, "{}")).subject).toBe(subject);
      const ack = `$JS.ACK.${log}.${observer}.1.7.7.0.0`;
      expect((await publishDenied(nc, ack)).subject).toBe(ack);
      const anyAck = `$JS.ACK.${log}.someone.1.7.7.0.0`;
      expect((await publishDenied(nc, anyAck)).subject).toBe(anyAck);
    });
  }
});
