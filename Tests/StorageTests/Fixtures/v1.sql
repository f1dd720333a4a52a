-- A store written by schema version 1 (before version stamps, tombstones and the outbox).
-- Regenerate with: sqlite3 v1.sqlite < v1.sql
PRAGMA journal_mode = DELETE;
CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
INSERT INTO grdb_migrations VALUES ('v1');
CREATE TABLE objects (id TEXT PRIMARY KEY NOT NULL, entity TEXT NOT NULL);
CREATE TABLE attributes (
    object_id TEXT NOT NULL REFERENCES objects(id) ON DELETE CASCADE,
    name TEXT NOT NULL, value TEXT NOT NULL,
    PRIMARY KEY (object_id, name));
CREATE TABLE applied (device TEXT PRIMARY KEY NOT NULL, sequence INTEGER NOT NULL);
CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
INSERT INTO objects VALUES ('t1', 'TextEntry'), ('seed:model-version', 'ModelVersion');
INSERT INTO attributes VALUES
    ('t1', 'text', '["Written by version 1 — café 日本"]'),
    ('t1', 'modified', '[{"date":1388534400}]'),
    ('seed:model-version', 'version', '[{"int":1}]');
INSERT INTO applied VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 7);
INSERT INTO meta VALUES ('generation', '7'), ('clock.wall', '1388534400000'), ('clock.counter', '0');
