/**
 * What `hookbus indexer` (the ingest's own command) needs, in one face: start the ingest, serve
 * its telemetry, migrate and create its database. The CLI reaches the indexer through this file
 * and index.ts only (.dependency-cruiser.cjs, "surfaces-read-through-audit"); readers use
 * src/audit's AuditSource instead.
 */
export { startIndexer, type IndexerOptions } from "./indexer.js";
export { indexerTelemetry } from "./telemetry.js";
export { migrateIndex, type MigrateResult } from "./migrate.js";
export { createIndexDatabase, databaseOf, isMissingDatabase, missingDatabase } from "./database.js";
