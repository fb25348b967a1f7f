-- Run lifecycle (issue 10): a run's app and system live once per submission in `inputs`
-- (a sweep of 10,000 runs stores its app once, not 10,000 times); runs can be cancelled;
-- each publication of a run to the broker has a number, so that a run re-published after
-- its message was lost never runs twice (a worker drops a message of an older publication).

CREATE TABLE inputs (
    id TEXT PRIMARY KEY,
    app TEXT NOT NULL,
    system TEXT NOT NULL
);
INSERT INTO inputs (id, app, system) SELECT id, app, system FROM runs;

ALTER TABLE runs ADD COLUMN input_id TEXT REFERENCES inputs(id);
UPDATE runs SET input_id = id;
ALTER TABLE runs ALTER COLUMN input_id SET NOT NULL;
ALTER TABLE runs DROP COLUMN app;
ALTER TABLE runs DROP COLUMN system;
ALTER TABLE runs ADD COLUMN publication BIGINT NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN published_at TEXT;
ALTER TABLE runs DROP CONSTRAINT runs_status_check;
ALTER TABLE runs ADD CONSTRAINT runs_status_check
    CHECK (status IN ('queued', 'running', 'done', 'failed', 'cancelled'));
CREATE INDEX runs_by_input ON runs (input_id);
