/**
 * The discovery reply: what a worker or coordinator says about itself when asked on
 * `<ns>.discover` / `<ns>.discover.<role>` (docs/protocol.md, "Discovery";
 * schemas/discovery/reply.schema.json).
 */
import { z } from "zod";
import { RecentStats } from "./recent-window.js";

export const DISCOVERY_ROLES = ["worker", "coordinator"] as const;
export type DiscoveryRole = (typeof DISCOVERY_ROLES)[number];

/** Bounds of one reply: a process serving more than this many policies lists the first ones. */
export const MAX_DESCRIBED_POLICIES = 256;

const common = {
  id: z.string().min(1).max(256).describe("This process's name (random unless configured)."),
  hookbus: z.string().max(64).describe("The hookbus version the process runs."),
  namespace: z.string().max(64),
  host: z.string().max(256).describe("Host name of the machine."),
  pid: z.number().int().nonnegative(),
  startedAt: z.iso.datetime().describe("When the process started serving."),
  inFlight: z.number().int().nonnegative().describe("Requests being handled right now."),
};

export const DescribedPolicy = z.object({
  name: z.string().min(1).max(64),
  version: z.string().max(256).optional(),
  hooks: z.array(z.string().max(64)).max(64).describe("Every hook the policy handles."),
  stats: z
    .record(z.string().max(64), RecentStats)
    .describe("Per modifying hook: the handler's recent latency and error rate in this process."),
});
export type DescribedPolicy = z.infer<typeof DescribedPolicy>;

export const WorkerDescription = z.object({
  role: z.literal("worker"),
  ...common,
  policies: z.array(DescribedPolicy).max(MAX_DESCRIBED_POLICIES),
});
export type WorkerDescription = z.infer<typeof WorkerDescription>;

export const LogLag = z.union([
  z.object({
    streamLastSeq: z.number().int().nonnegative(),
    lastWrittenSeq: z.number().int().nonnegative().optional(),
    lag: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe("Records stored in the log after the last one this coordinator wrote."),
  }),
  z.object({ omitted: z.string().max(512).describe("Why the lag is not reported.") }),
]);
export type LogLag = z.infer<typeof LogLag>;

/**
 * One Cedar policy of the registry revision a coordinator has in force, as that coordinator holds
 * it: `loaded` (parsed, type-checked, evaluated on every call to its hooks) with the set's hash,
 * `failed` (every call gets the policy's failure mode) with the coded error, or `loading` (not
 * parsed yet: the first call to it parses it).
 */
export const CedarSetState = z.object({
  policy: z.string().min(1).max(64),
  state: z.enum(["loaded", "loading", "failed"]),
  hash: z
    .string()
    .max(80)
    .optional()
    .describe("sha256:<hex> of the set's text, as stored in the registry (loaded sets)."),
  error: z
    .object({ code: z.string().max(64), message: z.string().max(1024) })
    .optional()
    .describe("Why the set does not load (failed sets)."),
});
export type CedarSetState = z.infer<typeof CedarSetState>;

export const CoordinatorDescription = z.object({
  role: z.literal("coordinator"),
  ...common,
  callsHandled: z.number().int().nonnegative(),
  registryRevision: z
    .number()
    .int()
    .nonnegative()
    .describe("The registry revision in force (0: none)."),
  stopsRevision: z
    .number()
    .int()
    .nonnegative()
    .optional()
    .describe(
      "The emergency stop list revision in force (0: never written); absent from older coordinators.",
    ),
  calls: RecentStats.describe("Recent call latency; an error is a call answered with an error."),
  log: LogLag,
  signingKey: z
    .string()
    .max(64)
    .optional()
    .describe("The public key the coordinator signs its records with (absent: it does not sign)."),
  cedar: z
    .array(CedarSetState)
    .max(MAX_DESCRIBED_POLICIES)
    .optional()
    .describe(
      "Every Cedar policy of the registry revision in force, as this coordinator holds it; absent from older coordinators.",
    ),
});
export type CoordinatorDescription = z.infer<typeof CoordinatorDescription>;

export const DiscoveryReply = z
  .discriminatedUnion("role", [WorkerDescription, CoordinatorDescription])
  .describe("A worker's or coordinator's answer on <ns>.discover.");
export type DiscoveryReply = z.infer<typeof DiscoveryReply>;
