-- Run lifecycle (issue 10): a run's app and system live once per submission in `inputs`
-- (a sweep of 10,000 runs stores its app once, not 10,000 times); runs can be cancelled;
-- each publication of a run to the broker has a number, so that a run re-published after
-- its message was lost never runs twice (a worker drops a message of an older publication).
--
-- SQLite cannot alter a CHECK constraint: `runs` is rebuilt. The migration runs in a
-- transaction with foreign keys on (sqlx), so `results`, which references `runs` with ON
-- DELETE CASCADE, is rebuilt first, referencing the new table: dropping the old `runs` then
-- cascades to nothing, and renaming `runs_new` updates the reference.

CREATE TABLE inputs (
    id TEXT PRIMARY KEY,
    app TEXT NOT NULL,
    system TEXT NOT NULL
);
INSERT INTO inputs (id, app, system) SELECT id, app, system FROM runs;

CREATE TABLE runs_new (
    id TEXT PRIMARY KEY,
    sweep_id TEXT REFERENCES sweeps(id),
    queue TEXT NOT NULL,
    input_id TEXT NOT NULL REFERENCES inputs(id),
    labels TEXT NOT NULL,
    variables TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed', 'cancelled')),
    attempts INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    worker TEXT,
    published INTEGER NOT NULL DEFAULT 0,
    publication INTEGER NOT NULL DEFAULT 0,
    published_at TEXT,
    created_at TEXT NOT NULL,
    started_at TEXT,
    finished_at TEXT
);
INSERT INTO runs_new (id, sweep_id, queue, input_id, labels, variables, status, attempts, error, worker,
                      published, created_at, started_at, finished_at)
    SELECT id, sweep_id, queue, id, labels, variables, status, attempts, error, worker,
           published, created_at, started_at, finished_at
    FROM runs;
CREATE TABLE results_new (
    run_id TEXT PRIMARY KEY REFERENCES runs_new(id) ON DELETE CASCADE,
    result TEXT NOT NULL,
    trace TEXT,
    log TEXT NOT NULL
);
INSERT INTO results_new (run_id, result, trace, log) SELECT run_id, result, trace, log FROM results;
DROP TABLE results;
DROP TABLE runs;
ALTER TABLE runs_new RENAME TO runs;
ALTER TABLE results_new RENAME TO results;
CREATE INDEX runs_by_status ON runs (status);
CREATE INDEX runs_by_sweep ON runs (sweep_id);
CREATE INDEX runs_unpublished ON runs (published, status);
CREATE INDEX runs_by_input ON runs (input_id);
