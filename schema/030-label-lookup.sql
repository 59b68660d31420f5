-- 030-label-lookup.sql - the index of object_labels by key and value, back.
--
-- 012 dropped it to spare the cold sync of pods an insert per label. The EndpointSlice
-- and Endpoints controllers find a Service's pods from its selector's first label through
-- it (PODENDPOINTS_SELECTED_PODS_SQL in src/podendpoints.h): without it, each Service's
-- sync read every pod of its namespace, 7 ms per Service among 10000 pods (bench/services),
-- where with it the sync reads its own pods only (0.2 ms).
CREATE INDEX IF NOT EXISTS object_labels_key_value ON object_labels (key, value);
