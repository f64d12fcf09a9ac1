/** The audit index: the indexer service, its schema, and the queries it answers. */
export {
  defaultIndexerConsumer,
  indexLag,
  startIndexer,
  type IndexLag,
  type Indexer,
  type IndexerOptions,
  type IndexerStats,
} from "./indexer.js";
export {
  assertIndexSchema,
  expectedSchemaVersion,
  migrateIndex,
  type MigrateResult,
} from "./migrate.js";
export { openIndexPool, type IndexPoolOptions, type PgPool } from "../audit/pg/pool.js";
export {
  checkIndexFilter,
  DEFAULT_INDEX_LIMIT,
  indexStats,
  MAX_INDEX_LIMIT,
  POLICY_STATUSES,
  queryIndex,
  queryIndexAll,
  tailIndex,
  type IndexFilter,
  type IndexPage,
  type IndexStats,
  type PolicyStatusFilter,
} from "../audit/pg/query.js";
export { INDEX_URL_ENV, indexUrlFrom } from "../audit/pg/url.js";
