/*
 * daemonmetrics.h - metrics about the daemon itself: its process (client_golang's
 * process_* names) and its leader election status (client-go's
 * leader_election_master_status).
 */
#ifndef SQLKCM_DAEMONMETRICS_H
#define SQLKCM_DAEMONMETRICS_H

struct metrics_registry;
struct metrics_series;
struct process_metrics;

/* Publishes the process's CPU time, memory, open descriptors and start time in registry,
 * read from proc_root (NULL: "/proc") at each render. Free it before the registry. */
struct process_metrics *process_metrics_new(struct metrics_registry *registry,
    const char *proc_root, char **error);
void process_metrics_free(struct process_metrics *pm);

/* Returns the leader_election_master_status{name=lease_name} series, registering its
 * family on first use: set it to 1 while this process holds the lease, 0 while it stands
 * by (metrics_gauge_set). NULL when registry is NULL. */
struct metrics_series *leader_election_status_metric(struct metrics_registry *registry,
    const char *lease_name);

#endif
