-- What the overview and a sweep's page name a run's app and system by (issue 47): the app's
-- title (its first comment line) and the system's `name`, kept beside the inputs when they
-- are stored, so that listing runs reads neither the app's source nor the system's JSON.
-- Inputs stored before get their system's name here; their app has no title (NULL).

ALTER TABLE inputs ADD COLUMN app_title TEXT;
ALTER TABLE inputs ADD COLUMN system_name TEXT;
-- Every stored system is serde_json's output (an object), so the cast cannot fail on it.
UPDATE inputs SET system_name = NULLIF(system::json ->> 'name', '') WHERE system LIKE '{%';
