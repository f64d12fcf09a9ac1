-- The index at 20,000 records/s (issue 35.3): PostgreSQL's work per record cut.
--
-- `record` becomes `json`: PostgreSQL still checks that it is JSON when it is stored, but no
-- longer converts it to jsonb's binary form, which cost about a quarter of its CPU per record
-- (docs/audit.md, "What the index costs"). Nothing filters inside the record any more: the two
-- queries that did read from it get columns of their own, set by the indexer.
--
-- Upgrading in place: stop the indexers, migrate, start the new ones. The migration rewrites the
-- table once (each record converted to its JSON text) and backfills the new columns; no row is
-- lost (test/integration/indexer/migrate-004.test.ts).

-- The sequence of the pending_approval decision an approval record settles (its `decisionSeq`),
-- for the approvals page's "still pending" (NOT EXISTS an approval naming that decision). A
-- positive integer only, as the indexer reads it (projection.ts).
ALTER TABLE hookbus_records ADD COLUMN decision_seq bigint;
-- The subject (its hash) whose sealed values the record still holds (`encrypted.subject`, while
-- its ciphertext is there); null for a plain record and once an erasure scrubbed it. Erasing a
-- subject reads this column instead of every record's JSON.
ALTER TABLE hookbus_records ADD COLUMN sealed_for text;

-- Only the rows concerned (approvals, sealed records) are updated: the type change below rewrites
-- the table anyway.
UPDATE hookbus_records
   SET decision_seq = CASE
         WHEN kind = 'approval' AND jsonb_typeof(record -> 'decisionSeq') = 'number'
              AND record ->> 'decisionSeq' ~ '^[1-9][0-9]{0,15}$'
         THEN (record ->> 'decisionSeq')::bigint END,
       sealed_for = CASE
         WHEN jsonb_typeof(record -> 'encrypted' -> 'subject') = 'string'
              AND record -> 'encrypted' ? 'ct'
         THEN record -> 'encrypted' ->> 'subject' END
 WHERE kind = 'approval' OR record ? 'encrypted';

ALTER TABLE hookbus_records ALTER COLUMN record TYPE json USING record::json;

CREATE INDEX hookbus_records_decision ON hookbus_records (ns, decision_seq)
  WHERE decision_seq IS NOT NULL;

-- Policy rows by status serve the rare statuses (timeout, error, invalid, unavailable, late):
-- `ok` is most rows, and a query for it reads the records in log order and probes the primary
-- key. Indexing only the other statuses spares an index insert per policy row.
DROP INDEX hookbus_policy_outcomes_status;
CREATE INDEX hookbus_policy_outcomes_status ON hookbus_policy_outcomes (ns, status, seq)
  WHERE status <> 'ok';
