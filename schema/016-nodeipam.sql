-- 016-nodeipam.sql - what node IPAM (src/controllers/nodeipam.c) reads of the nodes.
--
-- node_pod_cidrs: each cached node and the pod CIDRs it holds (spec.podCIDRs, a JSON array;
-- NULL when it has none: with --allocate-node-cidrs, the allocator gives it one block of
-- each cluster CIDR), and whether it is being deleted (its blocks go back when it is gone).
--   name, pod_cidr (spec.podCIDR), pod_cidrs, deleting (0/1)
CREATE VIEW node_pod_cidrs AS
SELECT name, json_extract(body, '$.spec.podCIDR') AS pod_cidr,
       json_extract(body, '$.spec.podCIDRs') AS pod_cidrs,
       json_extract(body, '$.metadata.deletionTimestamp') IS NOT NULL AS deleting
  FROM cache_objects
 WHERE resource = 'nodes' AND namespace = '';
