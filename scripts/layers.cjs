/**
 * The layers of src/, lowest first (docs/architecture.md draws them; .dependency-cruiser.cjs
 * enforces them). A folder may import folders of a lower rank only. Folders on one line are peers:
 * they may not import each other.
 */
const LAYERS = [
  { layer: "foundation", folders: ["foundation"] },
  { layer: "foundation", folders: ["observability"] },
  { layer: "core", folders: ["catalog"] },
  { layer: "core", folders: ["vocabulary"] },
  { layer: "core", folders: ["redact-stream"] },
  { layer: "core", folders: ["facts"] },
  { layer: "core", folders: ["merge"] },
  { layer: "bus", folders: ["bus"] },
  { layer: "log", folders: ["log"] },
  { layer: "log", folders: ["registry", "auth", "cedar", "privacy"] },
  { layer: "roles", folders: ["policy", "approvals", "testing"] },
  { layer: "roles", folders: ["worker", "agent", "coordinator", "sealer", "audit", "replay"] },
  { layer: "roles", folders: ["indexer", "policy-test", "conformance", "erasure"] },
  { layer: "roles", folders: ["status"] },
  { layer: "surfaces", folders: ["adapters", "ui", "contract"] },
  { layer: "surfaces", folders: ["cli"] },
];

module.exports = { LAYERS };
