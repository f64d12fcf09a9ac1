/** `hookbus status` on emergency stops: the list shown, and coordinators not enforcing it as problems. */
import { describe, expect, it } from "vitest";
import { formatStops, stopProblems } from "../../../src/status/stops.js";
import type { CoordinatorDescription } from "../../../src/observability/discovery-schema.js";

const coordinator = (id: string, stopsRevision?: number) =>
  ({ id, ...(stopsRevision === undefined ? {} : { stopsRevision }) }) as CoordinatorDescription;
const stop = {
  kind: "tool",
  name: "exec",
  by: "alice",
  at: "2026-11-26T20:00:00.000Z",
  reason: "drill",
} as const;

describe("emergency stops in hookbus status", () => {
  it("lists the stops in force", () => {
    expect(formatStops({ revision: 4, stops: [stop] })).toEqual([
      "",
      "emergency stops: 1 in force (stop list revision 4)",
      "  STOPPED tool exec  by alice at 2026-11-26T20:00:00.000Z: drill",
    ]);
    expect(formatStops({ revision: 0, stops: [] })).toEqual(["", "emergency stops: none"]);
    expect(formatStops({ unreadable: "timeout" })).toEqual(["", "emergency stops: UNREADABLE"]);
  });

  it("names coordinators behind the list, or not reporting it, and an unreadable list", () => {
    const problems = stopProblems({ revision: 4, stops: [stop] }, [
      coordinator("c1", 4),
      coordinator("c2", 3),
      coordinator("c3"),
    ]);
    expect(problems).toEqual([
      'coordinator "c2" enforces stop list revision 3, the list is at 4: if it stays behind (hookbus status again), restart it',
      'coordinator "c3" does not report the emergency stop list (too old, or it cannot read it and blocks every call): read its log, then upgrade or restart it (hookbus coordinator)',
    ]);
    expect(stopProblems({ unreadable: "denied" }, [])[0]).toMatch(/cannot be read \(denied\)/);
  });
});
