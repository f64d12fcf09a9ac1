-- Per-minute rollups, so `audit stats` and the UI's charts over a day add up a few thousand rows
-- instead of counting a million. The indexer maintains them in the transaction that inserts the
-- records, from the rows that insert really added (INSERT … ON CONFLICT DO NOTHING RETURNING),
-- so a redelivered or replayed record, or one two indexers race on, is counted once.
--
-- Upgrading: stop the indexers, migrate, start the new ones (an indexer of the previous version
-- would go on inserting rows without counting them). The migration counts the rows already there.

-- The minute of a stored time, in UTC whatever the session's TimeZone (date_trunc on a
-- timestamptz truncates in the session's zone, and a zone's offset need not be whole minutes).
CREATE FUNCTION hookbus_minute(t timestamptz) RETURNS timestamptz
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT date_trunc('minute', t AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' $$;

-- A latency's histogram bucket: -1 for none, 0 below 1 µs, else 1 + floor(log_1.1(ms / 0.001)),
-- so bucket b holds [0.001 · 1.1^(b-1), 0.001 · 1.1^b) ms: p50/p99 read from the buckets are within
-- 5 % of the exact value (src/indexer/rollup.ts takes each bucket's geometric middle). Capped at
-- 300 (about 2.6 · 10^9 ms: a month).
CREATE FUNCTION hookbus_latency_bucket(ms double precision) RETURNS integer
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT CASE WHEN ms IS NULL THEN -1 WHEN ms < 0.001 THEN 0
                    ELSE least(300, 1 + floor(ln(ms / 0.001) / ln(1.1)))::integer END $$;

-- Records per minute, hook and outcome (records of kind `invalid` are not counted: queries
-- leave them out too).
CREATE TABLE hookbus_minute_records (
  ns      text        NOT NULL,
  minute  timestamptz NOT NULL,
  hook    text        NOT NULL,
  outcome text        NOT NULL,
  records bigint      NOT NULL,
  PRIMARY KEY (ns, minute, hook, outcome)
);

-- Policy rows per minute (of their record's stored time), policy, status and latency bucket.
CREATE TABLE hookbus_minute_policies (
  ns       text        NOT NULL,
  minute   timestamptz NOT NULL,
  policy   text        NOT NULL,
  status   text        NOT NULL,
  bucket   integer     NOT NULL,
  outcomes bigint      NOT NULL,
  PRIMARY KEY (ns, minute, policy, status, bucket)
);

INSERT INTO hookbus_minute_records (ns, minute, hook, outcome, records)
SELECT ns, hookbus_minute(stored_at), hook, outcome, count(*)
FROM hookbus_records WHERE kind <> 'invalid'
GROUP BY 1, 2, 3, 4;

INSERT INTO hookbus_minute_policies (ns, minute, policy, status, bucket, outcomes)
SELECT p.ns, hookbus_minute(r.stored_at), p.policy, p.status, hookbus_latency_bucket(p.latency_ms),
  count(*)
FROM hookbus_policy_outcomes p JOIN hookbus_records r ON r.ns = p.ns AND r.seq = p.seq
WHERE r.kind <> 'invalid'
GROUP BY 1, 2, 3, 4, 5;

-- The approvals page: pending requests and settlements, newest first, without walking the log's
-- other records (both are a small share of it).
CREATE INDEX hookbus_records_pending_approval ON hookbus_records (ns, seq)
  WHERE kind = 'decision' AND outcome = 'pending_approval';
CREATE INDEX hookbus_records_approval ON hookbus_records (ns, seq) WHERE kind = 'approval';
