-- 022-endpoints.sql - what the EndpointSlice and Endpoints controllers
-- (src/controllers/endpointslice.c, endpoint.c) read of the cache: a Service's pods beside
-- the slices that hold its endpoints (and those the mirroring controller writes).
--
-- service_pods: each Service that takes endpoints from a controller (a selector of at
-- least one label, not of type ExternalName) and each pod of its namespace its selector
-- matches, with what decides whether and how the pod is an endpoint:
--   namespace, service, service_uid, pod, pod_uid, node_name,
--   has_ip (0/1: status.podIP or status.podIPs set), terminal (0/1: Succeeded or Failed),
--   terminating (0/1: a deletionTimestamp), ready (0/1: its Ready condition is True),
--   pod_body.
-- A pod with has_ip and not terminal is an endpoint of the Service in its slices, ready
-- when ready and not terminating, or whatever its state when the Service publishes
-- not-ready addresses; in the Service's Endpoints a terminating pod is left out unless
-- it publishes not-ready addresses. The controllers read it for one Service:
--   SELECT pod, ready, terminating FROM service_pods WHERE namespace = ? AND service = ?;
CREATE VIEW service_pods AS
SELECT s.namespace AS namespace, s.name AS service, s.uid AS service_uid,
       p.name AS pod, p.uid AS pod_uid, p.node_name AS node_name,
       (coalesce(json_extract(p.body, '$.status.podIP'), '') != ''
        OR coalesce(json_array_length(p.body, '$.status.podIPs'), 0) > 0) AS has_ip,
       coalesce(p.phase, '') IN ('Succeeded', 'Failed') AS terminal,
       p.deletion_timestamp IS NOT NULL AS terminating,
       coalesce(p.ready, 0) AS ready,
       p.body AS pod_body
  FROM cache_objects s
  CROSS JOIN cache_pods p ON p.namespace = s.namespace
 WHERE s.resource = 'services'
   AND coalesce(json_extract(s.body, '$.spec.type'), '') != 'ExternalName'
   AND json_type(s.body, '$.spec.selector') = 'object'
   AND EXISTS (SELECT 1 FROM json_each(s.body, '$.spec.selector'))
   AND NOT EXISTS (SELECT 1 FROM json_each(s.body, '$.spec.selector') want
                    WHERE NOT EXISTS (SELECT 1 FROM object_labels l
                                       WHERE l.object_id = p.id AND l.key = want.key
                                         AND l.value = want.value));

-- service_endpointslices: the EndpointSlices the EndpointSlice controller manages
-- (endpointslice.kubernetes.io/managed-by: endpointslice-controller.k8s.io) and those the
-- mirroring controller mirrors from Endpoints (endpointslicemirroring-controller.k8s.io),
-- by Service (their kubernetes.io/service-name label):
--   namespace, service, name, managed_by, address_type, endpoints (how many), ready (how
--   many of them are ready: a ready condition not false), deleting (0/1).
-- Beside service_pods, what a Service's slices hold against what it should have:
--   SELECT s.service, count(*) AS slices, sum(s.endpoints) AS held,
--          (SELECT count(*) FROM service_pods p WHERE p.namespace = s.namespace
--            AND p.service = s.service AND p.has_ip AND NOT p.terminal) AS wanted
--     FROM service_endpointslices s
--    WHERE s.managed_by = 'endpointslice-controller.k8s.io'
--    GROUP BY s.namespace, s.service;
CREATE VIEW service_endpointslices AS
SELECT o.namespace AS namespace,
       json_extract(o.body, '$.metadata.labels."kubernetes.io/service-name"') AS service,
       o.name AS name,
       json_extract(o.body, '$.metadata.labels."endpointslice.kubernetes.io/managed-by"')
           AS managed_by,
       json_extract(o.body, '$.addressType') AS address_type,
       coalesce(json_array_length(o.body, '$.endpoints'), 0) AS endpoints,
       (SELECT count(*) FROM json_each(o.body, '$.endpoints') e
         WHERE json_extract(e.value, '$.conditions.ready') IS NOT 0) AS ready,
       o.deletion_timestamp IS NOT NULL AS deleting
  FROM cache_objects o
 WHERE o.resource = 'endpointslices'
   AND json_extract(o.body, '$.metadata.labels."endpointslice.kubernetes.io/managed-by"')
       IN ('endpointslice-controller.k8s.io', 'endpointslicemirroring-controller.k8s.io')
   AND json_extract(o.body, '$.metadata.labels."kubernetes.io/service-name"') IS NOT NULL;
