/**
 * The live tail as server-sent events: each browser gets its own follow of the log (tailLog over
 * NATS), ended when the browser goes away. Bounded: at most `max` tails at once, and a browser
 * that reads slower than the log grows is dropped once MAX_BUFFERED_BYTES are waiting for it
 * (its EventSource reconnects from the last sequence it saw).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AuditFilter, AuditOutcome } from "../audit/filter.js";
import { recordAction, recordRunId } from "../audit/action.js";
import { queryRow } from "../audit/format.js";
import { tailLog } from "../audit/query.js";
import type { Bus } from "../bus/bus.js";
import type { HookName } from "../catalog/catalog.js";
import { HookbusError } from "../foundation/errors.js";
import type { LogRecord } from "../log/record.js";
import { readParams } from "./params.js";
import { TAIL_PARAMS } from "./static-pages.js";

export const MAX_BUFFERED_BYTES = 1 << 20;
const KEEPALIVE_MS = 15_000;

/** What the tail page shows of a record (already summarized: the page renders text only). */
export interface TailRow {
  seq: number;
  /** The call id (or an observation's event id). */
  call: string;
  time: string;
  agent: string;
  session: string;
  /** The run the call belonged to ("" when its context names none). */
  run: string;
  hook: string;
  /** The tool the call was about, and the action's gist (command, URL, path, recipients). */
  tool: string;
  action: string;
  outcome: string;
  summary: string;
  latency: string;
}

function callOf(record: LogRecord): string {
  const id =
    record.kind === "observation"
      ? record.eventId
      : record.kind === "erasure"
        ? record.erasureId
        : record.callId;
  return typeof id === "string" ? id : "";
}

export class LiveTails {
  private readonly open = new Set<AbortController>();

  constructor(
    private readonly bus: Bus,
    private readonly max: number,
  ) {}

  /** Tails open now. */
  get size(): number {
    return this.open.size;
  }

  closeAll(): void {
    for (const c of this.open) c.abort();
  }

  async serve(
    url: URL,
    req: IncomingMessage,
    res: ServerResponse,
    headers: Record<string, string>,
  ): Promise<void> {
    const given = readParams(url, TAIL_PARAMS);
    const filter: AuditFilter = {
      agentId: given.get("agent"),
      sessionKey: given.get("session"),
      hook: given.get("hook") as HookName | undefined,
      outcome: given.get("outcome") as AuditOutcome | undefined,
      policy: given.get("policy"),
    };
    // EventSource resends the last id it saw: resume after it rather than from "now".
    const lastId = req.headers["last-event-id"];
    const fromSeq =
      typeof lastId === "string" && /^\d{1,15}$/.test(lastId) ? Number(lastId) + 1 : undefined;
    if (this.open.size >= this.max)
      throw new HookbusError(
        "HOOKBUS_LIMIT_EXCEEDED",
        `${this.max} live tails are open: close one, or start the UI with a higher --max-tails`,
        { limit: this.max },
      );
    const controller = new AbortController();
    this.open.add(controller);
    try {
      const records = await tailLog(this.bus, filter, {
        signal: controller.signal,
        ...(fromSeq === undefined ? {} : { fromSeq }),
      });
      res.writeHead(200, {
        ...headers,
        "Content-Type": "text/event-stream; charset=utf-8",
        Connection: "keep-alive",
      });
      res.write(": tail open\n\n");
      // The response closes when the browser goes away (or the server ends it).
      res.on("close", () => controller.abort());
      const keepalive = setInterval(() => res.write(": keepalive\n\n"), KEEPALIVE_MS);
      try {
        for await (const entry of records) {
          const [time, agent, session, hook, outcome, summary, latency] = queryRow(entry);
          const action = recordAction(entry.record);
          const row: TailRow = {
            seq: entry.seq,
            call: callOf(entry.record),
            time: time ?? "",
            agent: agent ?? "",
            session: session ?? "",
            run: recordRunId(entry.record) ?? "",
            hook: hook ?? "",
            tool: action.tool ?? "",
            action: action.gist ?? "",
            outcome: outcome ?? "",
            summary: summary ?? "",
            latency: latency ?? "",
          };
          res.write(`id: ${entry.seq}\ndata: ${JSON.stringify(row)}\n\n`);
          if (res.writableLength > MAX_BUFFERED_BYTES) break;
        }
      } finally {
        clearInterval(keepalive);
        res.end();
      }
    } finally {
      controller.abort();
      this.open.delete(controller);
    }
  }
}
