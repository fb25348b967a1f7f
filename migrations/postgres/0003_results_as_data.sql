-- Results as data (issue 26): a run's result is its summary, whose size does not grow with
-- the processes; per-label aggregates and per-process rows live in tables of their own,
-- queried by SQL and paginated. Traces are recorded only when a submission asks.
--
-- Results stored before this migration hold the whole report (`format` 1: every process in
-- the JSON); the server moves them to the new tables when it starts (Store::upgrade_results),
-- as the percentiles of the summary are computed in Rust, and marks them `format` 2.

ALTER TABLE inputs ADD COLUMN trace BIGINT NOT NULL DEFAULT 0;

ALTER TABLE results ADD COLUMN format BIGINT NOT NULL DEFAULT 1;
-- Spans left out of a capped trace (0: the trace is whole, or there is none).
ALTER TABLE results ADD COLUMN trace_dropped BIGINT NOT NULL DEFAULT 0;

CREATE TABLE run_labels (
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    label TEXT NOT NULL,
    processes BIGINT NOT NULL,
    finish_min DOUBLE PRECISION NOT NULL, finish_mean DOUBLE PRECISION NOT NULL, finish_p50 DOUBLE PRECISION NOT NULL,
    finish_p99 DOUBLE PRECISION NOT NULL, finish_max DOUBLE PRECISION NOT NULL,
    compute_min DOUBLE PRECISION NOT NULL, compute_mean DOUBLE PRECISION NOT NULL, compute_p50 DOUBLE PRECISION NOT NULL,
    compute_p99 DOUBLE PRECISION NOT NULL, compute_max DOUBLE PRECISION NOT NULL,
    wait_min DOUBLE PRECISION NOT NULL, wait_mean DOUBLE PRECISION NOT NULL, wait_p50 DOUBLE PRECISION NOT NULL,
    wait_p99 DOUBLE PRECISION NOT NULL, wait_max DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (run_id, label)
);

CREATE TABLE run_processes (
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    pid BIGINT NOT NULL,
    label TEXT NOT NULL,
    rank BIGINT NOT NULL,
    node TEXT NOT NULL,
    finish_time DOUBLE PRECISION NOT NULL,
    finish_low DOUBLE PRECISION NOT NULL,
    finish_high DOUBLE PRECISION NOT NULL,
    compute_time DOUBLE PRECISION NOT NULL,
    wait_time DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (run_id, pid)
);
CREATE INDEX run_processes_by_label ON run_processes (run_id, label, rank);
