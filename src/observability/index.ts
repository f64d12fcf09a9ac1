/** Operating hookbus: discovery, `hookbus status`, metrics, health endpoints and traces. */
export {
  discover,
  discoverySubject,
  serveDiscovery,
  DISCOVERY_DEFAULTS,
  type DiscoverOptions,
  type Discovered,
  type DiscoveryResponder,
} from "./discovery.js";
export {
  DiscoveryReply,
  WorkerDescription,
  CoordinatorDescription,
  DISCOVERY_ROLES,
  type DiscoveryRole,
} from "./discovery-schema.js";
export { RecentStats } from "./recent-window.js";
export { readStatus, type ReadStatusOptions } from "./status-read.js";
export {
  buildStatusReport,
  type StatusReport,
  type PolicyStatus,
  type HookStatus,
} from "./status-report.js";
export { formatStatus } from "./status-format.js";
export {
  serveHttp,
  parseHttpAddress,
  type HttpEndpoints,
  type HttpEndpointsOptions,
  type Readiness,
} from "./http.js";
export { HOOKBUS_VERSION } from "./version.js";
export { agentMetrics, type FastPathCounted } from "./agent-metrics.js";
