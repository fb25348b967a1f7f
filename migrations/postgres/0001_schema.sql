-- hetsim schema (postgres). Times are RFC 3339 text in UTC; ids are UUIDs as text; structured
-- values (labels, variables, results, traces) are JSON text, so both dialects read the same.

CREATE TABLE components (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    vendor TEXT NOT NULL DEFAULT '',
    kind TEXT NOT NULL,
    comment TEXT NOT NULL DEFAULT '',
    source TEXT NOT NULL DEFAULT ''
);

-- An attribute is a number or a text, never both.
CREATE TABLE attributes (
    component_id TEXT NOT NULL REFERENCES components(id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    number DOUBLE PRECISION,
    text TEXT,
    PRIMARY KEY (component_id, key)
);

-- Computational models (Rhai sources defining compute_time or transfer_time).
CREATE TABLE models (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    source TEXT NOT NULL
);

-- System models as submitted (TOML text or JSON).
CREATE TABLE systems (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    definition TEXT NOT NULL
);

-- Application models (Rhai sources).
CREATE TABLE apps (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    source TEXT NOT NULL
);

CREATE TABLE sweeps (
    id TEXT PRIMARY KEY,
    queue TEXT NOT NULL,
    created_at TEXT NOT NULL
);

-- A run carries its inputs as submitted, resolved to be self-contained (the system with
-- its components and models inline), so a result can be reproduced after edits.
CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    sweep_id TEXT REFERENCES sweeps(id),
    queue TEXT NOT NULL,
    app TEXT NOT NULL,
    system TEXT NOT NULL,
    labels TEXT NOT NULL,
    variables TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed')),
    attempts BIGINT NOT NULL DEFAULT 0,
    error TEXT,
    worker TEXT,
    -- Transactional outbox: 0 until the broker confirmed the run's message.
    published BIGINT NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    started_at TEXT,
    finished_at TEXT
);
CREATE INDEX runs_by_status ON runs (status);
CREATE INDEX runs_by_sweep ON runs (sweep_id);
CREATE INDEX runs_unpublished ON runs (published, status);

-- One result per run: written once, keyed by the run.
CREATE TABLE results (
    run_id TEXT PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    result TEXT NOT NULL,
    trace TEXT,
    log TEXT NOT NULL
);
