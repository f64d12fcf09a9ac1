-- hookbus index: one row per log record, keyed by (namespace, stream sequence), so a redelivered
-- or replayed record is written once. `record` keeps the whole record; the columns are what the
-- audit queries filter on. One database may index several namespaces.
CREATE TABLE hookbus_records (
  ns                text        NOT NULL,
  seq               bigint      NOT NULL,
  subject           text        NOT NULL,
  stored_at         timestamptz NOT NULL,
  -- decision | error | late | observation, or `invalid` for a record that could not be decoded
  kind              text        NOT NULL,
  -- the subject's outcome token: allow | modify | block | reply | error | late | observed
  outcome           text        NOT NULL,
  agent_id          text        NOT NULL,
  session_key       text        NOT NULL,
  run_id            text,
  hook              text        NOT NULL,
  call_id           text,
  blocked_by        text,
  registry_revision bigint,
  received_at       timestamptz,
  decided_at        timestamptz,
  latency_ms        double precision,
  shadow_changed    boolean     NOT NULL DEFAULT false,
  -- why an `invalid` record could not be indexed (its code and message)
  index_error       text,
  record            jsonb,
  PRIMARY KEY (ns, seq)
);

-- Session timelines.
CREATE INDEX hookbus_records_session ON hookbus_records (ns, session_key, seq);
-- One agent, optionally one outcome.
CREATE INDEX hookbus_records_agent ON hookbus_records (ns, agent_id, outcome, seq);
-- Time ranges become sequence ranges through this index (stored_at grows with seq).
CREATE INDEX hookbus_records_time ON hookbus_records (ns, stored_at, seq);
CREATE INDEX hookbus_records_blocked_by ON hookbus_records (ns, blocked_by, seq)
  WHERE blocked_by IS NOT NULL;
CREATE INDEX hookbus_records_shadow_changed ON hookbus_records (ns, seq) WHERE shadow_changed;

-- What each policy did in a decision (and its late verdicts, status `late`).
CREATE TABLE hookbus_policy_outcomes (
  ns          text             NOT NULL,
  seq         bigint           NOT NULL,
  policy      text             NOT NULL,
  version     text,
  mode        text,
  status      text             NOT NULL,
  effect      text,
  latency_ms  double precision,
  -- No foreign key: both rows are written in one transaction, and the check would cost writes.
  PRIMARY KEY (ns, seq, policy)
);

CREATE INDEX hookbus_policy_outcomes_policy ON hookbus_policy_outcomes (ns, policy, status, seq);
CREATE INDEX hookbus_policy_outcomes_status ON hookbus_policy_outcomes (ns, status, seq);
