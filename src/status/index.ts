/**
 * hookbus/status: operating hookbus. `hookbus status` as a library (read, analyse, format),
 * discovery of live coordinators and workers, and the metrics and health endpoints a service of
 * your own can serve (README "Operating it").
 */
export { readStatus, type ReadStatusOptions } from "./read.js";
export {
  buildStatusReport,
  type StatusReport,
  type StatusReportOptions,
  type PolicyReport,
  type HookStatus,
} from "./report.js";
export { formatStatus } from "./format.js";
export type { CedarEntryStatus } from "./cedar.js";
export type { PolicyKind } from "../registry/document.js";
export {
  discover,
  discoverySubject,
  serveDiscovery,
  DISCOVERY_DEFAULTS,
  type DiscoverOptions,
  type Discovered,
  type DiscoveryResponder,
} from "../observability/discovery.js";
export {
  DiscoveryReply,
  WorkerDescription,
  CoordinatorDescription,
  CedarSetState,
  DISCOVERY_ROLES,
  type DiscoveryRole,
} from "../observability/discovery-schema.js";
export { RecentStats } from "../observability/recent-window.js";
export {
  serveHttp,
  parseHttpAddress,
  type HttpEndpoints,
  type HttpEndpointsOptions,
  type Readiness,
} from "../observability/http.js";
