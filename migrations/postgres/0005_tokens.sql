-- Access (issue 27): named API tokens, each with a role, kept as the SHA-256 of their secret
-- (hex), never the secret; and the holder's name on every run they submit (NULL on a server
-- open to all, and for runs stored before).
--
-- A name is unique among unrevoked tokens only, so that a holder's token can be revoked and
-- made anew under the same name. Times are RFC 3339 text in UTC, as everywhere.

CREATE TABLE tokens (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('read', 'submit', 'admin')),
    hash TEXT NOT NULL,
    created_at TEXT NOT NULL,
    revoked_at TEXT
);
CREATE UNIQUE INDEX tokens_unrevoked_name ON tokens (name) WHERE revoked_at IS NULL;

ALTER TABLE runs ADD COLUMN submitter TEXT;
