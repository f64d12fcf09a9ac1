-- The index at 20,000 records/s with margin (issue 35.3): the policy rows of status `ok` become
-- two columns of their record.
--
-- A policy row was three heap rows per record, each in three btrees: half of PostgreSQL's CPU
-- per record written (docs/performance.md, "Policy rows as columns"). Almost every row says
-- `ok`; the queries that name a rare status (timeout, error, invalid, unavailable, late, or
-- anything else a record says) are the ones an operator asks newest first, through
-- hookbus_policy_outcomes' btrees. So that table keeps the rows of every status but `ok`, and a
-- record's `ok` rows are two aligned arrays on the record itself: the policies' names, and their
-- latencies (for `audit stats` counted from rows). NULL when the record has no `ok` row. The
-- version, mode and effect of an `ok` row stay in the record's JSON; nothing queried them.
--
-- Upgrading in place: stop the indexers, migrate, start the new ones (an indexer of version 4
-- would go on writing `ok` rows to the table, which the queries no longer read). The migration
-- moves the `ok` rows into the columns and deletes them; the per-minute rollups are unchanged
-- (test/integration/indexer/migrate-005.test.ts).

ALTER TABLE hookbus_records ADD COLUMN ok_policies text[];
ALTER TABLE hookbus_records ADD COLUMN ok_latencies double precision[];

UPDATE hookbus_records r
   SET ok_policies = o.policies, ok_latencies = o.latencies
  FROM (SELECT ns, seq, array_agg(policy ORDER BY policy) AS policies,
               array_agg(latency_ms ORDER BY policy) AS latencies
          FROM hookbus_policy_outcomes WHERE status = 'ok' GROUP BY ns, seq) o
 WHERE r.ns = o.ns AND r.seq = o.seq;

DELETE FROM hookbus_policy_outcomes WHERE status = 'ok';

-- The table holds only rare statuses now: the partial status index becomes a plain one.
DROP INDEX hookbus_policy_outcomes_status;
CREATE INDEX hookbus_policy_outcomes_status ON hookbus_policy_outcomes (ns, status, seq);

-- "Which decisions did this policy answer ok" for a policy few records ask (a common one is
-- found by reading the records in log order). GIN with its pending list: an insert appends the
-- record's few names, merged into the index in bulk.
CREATE INDEX hookbus_records_ok_policies ON hookbus_records USING gin (ok_policies);

-- Every policy row in one shape, as the table held them up to schema 4 (for an operator's own
-- SQL and the tests' recounts; the queries read the two forms directly).
CREATE VIEW hookbus_policy_rows AS
SELECT ns, seq, policy, status, latency_ms FROM hookbus_policy_outcomes
UNION ALL
SELECT r.ns, r.seq, o.policy, 'ok'::text, o.latency_ms
  FROM hookbus_records r, unnest(r.ok_policies, r.ok_latencies) AS o(policy, latency_ms)
 WHERE r.ok_policies IS NOT NULL;
