-- 020-services-workloads.sql - Services, Endpoints, EndpointSlices, ControllerRevisions,
-- DaemonSets, Jobs and CronJobs, cached whole in cache_objects for the controllers of
-- Services, DaemonSets and Jobs. Their api_resources rows are fixed, so that the objects
-- view and its graph see them whatever discovery says.
INSERT INTO api_resources (resource, api_version, kind, namespaced, served) VALUES
    ('services', 'v1', 'Service', 1, 1),
    ('endpoints', 'v1', 'Endpoints', 1, 1),
    ('endpointslices', 'discovery.k8s.io/v1', 'EndpointSlice', 1, 1),
    ('controllerrevisions', 'apps/v1', 'ControllerRevision', 1, 1),
    ('daemonsets', 'apps/v1', 'DaemonSet', 1, 1),
    ('jobs', 'batch/v1', 'Job', 1, 1),
    ('cronjobs', 'batch/v1', 'CronJob', 1, 1)
ON CONFLICT (resource) DO UPDATE SET api_version = excluded.api_version,
    kind = excluded.kind, namespaced = excluded.namespaced, served = 1;

-- An earlier sqlkcm's garbage collector held them by their metadata only, those of a
-- group under "plural.group": list them again, whole.
DELETE FROM cache_objects WHERE resource IN ('services', 'endpoints', 'endpointslices',
    'endpointslices.discovery.k8s.io', 'controllerrevisions', 'controllerrevisions.apps',
    'daemonsets', 'daemonsets.apps', 'jobs', 'jobs.batch', 'cronjobs', 'cronjobs.batch');
DELETE FROM informers WHERE resource IN ('services', 'endpoints', 'endpointslices',
    'endpointslices.discovery.k8s.io', 'controllerrevisions', 'controllerrevisions.apps',
    'daemonsets', 'daemonsets.apps', 'jobs', 'jobs.batch', 'cronjobs', 'cronjobs.batch');
DELETE FROM api_resources WHERE resource IN ('endpointslices.discovery.k8s.io',
    'controllerrevisions.apps', 'daemonsets.apps', 'jobs.batch', 'cronjobs.batch');
