/*
 * nodeipam.h - node IPAM, kube's range allocator (node-ipam-controller): each node gets
 * spec.podCIDRs, one block of each cluster CIDR (--cluster-cidr, one or two of them,
 * dual-stack), handed out in turn from a set that remembers which blocks are taken.
 */
#ifndef SQLKCM_CONTROLLERS_NODEIPAM_H
#define SQLKCM_CONTROLLERS_NODEIPAM_H

#include <stddef.h>
#include <stdint.h>

#include "controller.h"

/* An IPv4 or IPv6 network: its first address (IPv4 in the low 32 bits) and prefix. */
struct ipnet {
	unsigned __int128 addr;
	int bits;			/* the prefix length */
	int v6;
};

/* Parses "a.b.c.d/n" or "x::y/n" as Go's sloppy CIDR parser does (IPv4 parts may have
 * leading zeros); the address is masked to the network. -1 when text is not a CIDR. */
int ipnet_parse(const char *text, struct ipnet *out);

/* Writes n as Go prints a net.IPNet ("10.244.1.0/24", "fd00:10:244:1::/64"). */
void ipnet_format(const struct ipnet *n, char *out, size_t size);

/* The blocks of one cluster CIDR, of the node mask size, and which of them are taken
 * (kube's cidrset): a bitmap kept in pages, allocated as blocks are taken. */
struct cidrset {
	struct ipnet cluster;
	int node_bits;
	uint64_t max;			/* 1 << (node_bits - cluster bits) blocks */
	uint64_t allocated;		/* taken now */
	uint64_t next;			/* where the next search starts (kube's round robin) */
	uint64_t **pages;
	size_t npages;
	char label[64];			/* the cluster CIDR as text (the metrics' label) */
};

/* Sets s up for cluster with blocks of node_bits; -1 with *error when they do not fit
 * (node_bits shorter than the cluster's prefix or longer than the family's addresses, or
 * an IPv6 cluster more than 16 bits shorter than its blocks, as kube refuses). */
int cidrset_init(struct cidrset *s, const struct ipnet *cluster, int node_bits,
    char **error);
void cidrset_free(struct cidrset *s);

/* Takes the next free block, searching from where the last search ended; -1 when every
 * block is taken. */
int cidrset_allocate_next(struct cidrset *s, struct ipnet *out);

/* Marks every block that n overlaps as taken (occupy) or free (release); -1 with *error
 * when n is outside the cluster CIDR. */
int cidrset_occupy(struct cidrset *s, const struct ipnet *n, char **error);
int cidrset_release(struct cidrset *s, const struct ipnet *n, char **error);

/* Whether block index i is taken. */
int cidrset_used(const struct cidrset *s, uint64_t i);

/* The block at index i. */
void cidrset_block(const struct cidrset *s, uint64_t i, struct ipnet *out);

/* What the command line asks of the allocator, checked as kube checks it. */
struct nodeipam_config {
	struct ipnet cluster[2];
	int ncluster;
	int node_bits[2];		/* per cluster CIDR */
	struct ipnet service[2];	/* the service ranges left out; bits -1: none */
	int nservice;
};

/*
 * Reads the flags' values (cluster: --cluster-cidr; services: --service-cluster-ip-range;
 * mask, mask4, mask6: --node-cidr-mask-size[-ipv4|-ipv6], 0 when not given) into *out;
 * -1 with *error in kube's words when they do not make a configuration. A service range
 * that does not parse is left out with a warning, as kube does.
 */
int nodeipam_config_parse(const char *cluster, const char *services, long long mask,
    long long mask4, long long mask6, struct nodeipam_config *out, char **error);

extern const struct controller_type nodeipam_controller_type;

#endif
