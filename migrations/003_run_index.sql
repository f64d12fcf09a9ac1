-- `--run ID` (audit query, tail, session, stats, the UI) reads one run's records: an index on the
-- context's runId, so an incident's "what did this run do" does not scan the namespace. Records
-- without a run id (observations of some adapters, failure records) are left out of it.
CREATE INDEX hookbus_records_run ON hookbus_records (ns, run_id, seq) WHERE run_id IS NOT NULL;
