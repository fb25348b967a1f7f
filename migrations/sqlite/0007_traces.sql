-- Stored Chakra execution traces (issue 44): a name, and each rank's file as it was given
-- (plain or gzip), with the node counts read when it was stored. A submission may replay a
-- stored trace instead of running an app: its input names the trace and the compute policy.

CREATE TABLE traces (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    ranks INTEGER NOT NULL,
    nodes INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    created_at TEXT NOT NULL
);

CREATE TABLE trace_files (
    trace_id TEXT NOT NULL REFERENCES traces(id),
    rank INTEGER NOT NULL,
    file_name TEXT NOT NULL,
    nodes INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (trace_id, rank)
);

ALTER TABLE inputs ADD COLUMN replay_trace_id TEXT;
ALTER TABLE inputs ADD COLUMN replay_compute TEXT;
