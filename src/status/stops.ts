/**
 * The emergency stops in `hookbus status`: the list in force (read from the registry bucket), and
 * as problems a list that cannot be read or coordinators that do not report its revision (they
 * may still let a stopped agent's or tool's calls through).
 */
import type { CoordinatorDescription } from "../observability/discovery-schema.js";
import type { Stop, StopStore } from "../registry/stops.js";

export type StopsStatus = { revision: number; stops: Stop[] } | { unreadable: string };

export async function readStops(store: Promise<StopStore>): Promise<StopsStatus> {
  try {
    const list = await (await store).current();
    return { revision: list.revision, stops: [...list.stops] };
  } catch (error) {
    return { unreadable: error instanceof Error ? error.message : String(error) };
  }
}

export function stopProblems(
  status: StopsStatus,
  coordinators: readonly CoordinatorDescription[],
): string[] {
  if ("unreadable" in status)
    return [
      `the emergency stop list cannot be read (${status.unreadable}): coordinators that cannot read it either block every call; check this user's permissions on the registry bucket (hookbus auth) and NATS, then hookbus status again`,
    ];
  return coordinators
    .filter((c) => (c.stopsRevision ?? -1) !== status.revision)
    .map((c) =>
      c.stopsRevision === undefined
        ? `coordinator "${c.id}" does not report the emergency stop list (too old, or it cannot read it and blocks every call): read its log, then upgrade or restart it (hookbus coordinator)`
        : `coordinator "${c.id}" enforces stop list revision ${c.stopsRevision}, the list is at ${status.revision}: if it stays behind (hookbus status again), restart it`,
    );
}

export function formatStops(status: StopsStatus): string[] {
  if ("unreadable" in status) return ["", "emergency stops: UNREADABLE"];
  if (status.stops.length === 0) return ["", "emergency stops: none"];
  return [
    "",
    `emergency stops: ${status.stops.length} in force (stop list revision ${status.revision})`,
    ...status.stops.map(
      (s) =>
        `  STOPPED ${s.kind} ${s.name}  by ${s.by} at ${s.at}${s.reason === "" ? "" : `: ${s.reason}`}`,
    ),
  ];
}
