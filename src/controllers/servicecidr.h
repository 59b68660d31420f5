/*
 * servicecidr.h - the Service CIDR controller (kube's service-cidr-controller): each
 * ServiceCIDR's Ready condition, and the networking.k8s.io/service-cidr-finalizer kept
 * while IPAddresses only it holds exist.
 */
#ifndef SQLKCM_CONTROLLERS_SERVICECIDR_H
#define SQLKCM_CONTROLLERS_SERVICECIDR_H

#include "controller.h"

extern const struct controller_type servicecidr_controller_type;

/* An IP prefix, or an address (a prefix of all its bits). */
struct prefix {
	int family;			/* 4 or 6 */
	unsigned char addr[16];		/* IPv4 in the first 4 bytes */
	int bits;
};

/* Reads an address as Go's netip.ParseAddr (dotted IPv4, or IPv6 without a zone; an
 * IPv4-mapped IPv6 address is IPv6); 0, or -1 when it does not parse. */
int servicecidr_parse_addr(const char *s, struct prefix *p);
/* Reads "address/bits" as netip.ParsePrefix (bits in decimal without leading zeros, at
 * most the family's); 0 or -1. */
int servicecidr_parse_prefix(const char *s, struct prefix *p);
/* Whether a and b share an address (netip.Prefix.Overlaps). */
int servicecidr_overlaps(const struct prefix *a, const struct prefix *b);
/* Whether the address ip lies in p as kube's PrefixContainsIP has it: not p's first
 * address, nor, in IPv4, its last. */
int servicecidr_holds_address(const struct prefix *p, const struct prefix *ip);

#endif
