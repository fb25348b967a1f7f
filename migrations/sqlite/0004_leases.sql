-- Leases (issue 27): a running run is held by the worker that claimed it until
-- `lease_until` (a UTC RFC 3339 timestamp, compared as text like every timestamp here).
-- The worker renews it while it simulates; the run's `attempts` at the claim is the fencing
-- token: only that attempt may write the outcome. The reaper takes back runs whose lease
-- expired, whatever the broker holds.
ALTER TABLE runs ADD COLUMN lease_until TEXT;
CREATE INDEX runs_by_lease ON runs (status, lease_until);
