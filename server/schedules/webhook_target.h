/*
 * webhook_target.h - where a series' webhook may point: the URL's syntax
 * and the addresses it may reach. Pure functions, no I/O.
 *
 * A webhook URL is http:// or https:// (either case), then a host and an
 * optional :PORT (1..65535), then an optional path, query or fragment; at
 * most STORE_WEBHOOK_URL_MAX characters, each printable ASCII other than
 * a space or '\' (so no CR, LF, tab or control characters); no userinfo
 * ('@' before the path). The host is a DNS name (letters, digits, '-',
 * '_' and '.', labels of 1..63, 253 at most), an IPv4 address in any
 * spelling inet_aton() takes ("2130706433", "0x7f.1", "0177.0.0.1"), or
 * an IPv6 address in brackets (no zone).
 *
 * The addresses refused unless the allow list names them:
 *   IPv4: 0.0.0.0/8 (unspecified, "this network"), 127.0.0.0/8 (loopback),
 *         10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16 (private),
 *         100.64.0.0/10 (shared), 169.254.0.0/16 (link-local),
 *         224.0.0.0/4 (multicast), 240.0.0.0/4 and 255.255.255.255,
 *         198.18.0.0/15 (benchmarking), 192.0.0.0/24 (IETF protocol
 *         assignments);
 *   IPv6: :: (unspecified), ::1 (loopback), fe80::/10 (link-local),
 *         fec0::/10 (site-local), fc00::/7 (unique local), ff00::/8
 *         (multicast), 2001:2::/48 (benchmarking), and the forms whose
 *         IPv4 address cannot be read off: 64:ff9b:1::/48 (local-use
 *         NAT64, its prefix length the network's own) and 2001::/32
 *         (Teredo); an IPv4 address inside IPv6 (::ffff:a.b.c.d mapped,
 *         ::ffff:0:a.b.c.d translated, ::a.b.c.d compatible,
 *         64:ff9b::/96 NAT64, 2002::/16 6to4) is judged as that IPv4
 *         address.
 * Every other address is allowed. The names "localhost" and "*.localhost"
 * (RFC 6761) stand for 127.0.0.1 when a URL is checked.
 *
 * The allow list (--webhook-allow, repeatable) is text of entries
 * separated by ',' or white space, at most WEBHOOK_ALLOW_MAX: an address
 * or a network in CIDR notation ("127.0.0.1", "10.0.0.0/8", "fd00::/8"),
 * which allows those addresses whatever name reached them; or a host name
 * ("hooks.lab"), which allows a URL with exactly that host (any case, a
 * final '.' ignored) to reach whatever address the name resolves to.
 *
 * A URL is checked when it is set (webhook_target_check()) and again,
 * against the address actually connected to, at each delivery
 * (webhook_address_allowed(), webhook_delivery.c).
 */
#ifndef LOADLAB_SERVER_WEBHOOK_TARGET_H
#define LOADLAB_SERVER_WEBHOOK_TARGET_H

#include <stdbool.h>
#include <stddef.h>

struct sockaddr;

#define WEBHOOK_ALLOW_MAX 64
#define WEBHOOK_HOST_MAX 253

/* Checks one allow-list entry ENTRY of LENGTH characters. 0, or LL_EINVAL
 * with a message naming it. */
int webhook_allow_entry_check(const char *entry, size_t length);

/* Checks every entry of ALLOW (NULL: none), and that there are at most
 * WEBHOOK_ALLOW_MAX. 0 or LL_EINVAL with a message. */
int webhook_allow_check(const char *allow);

/* Checks URL's syntax and writes its host, lower case, without a final '.'
 * or the brackets of an IPv6 address, to RET_HOST (WEBHOOK_HOST_MAX + 1
 * bytes). 0, or LL_EINVAL with a message saying what is wrong. */
int webhook_url_host(const char *url, char *ret_host);

/* Whether ADDRESS (AF_INET or AF_INET6) may be connected to for a URL
 * whose host is HOST (as webhook_url_host() gives it) under ALLOW. When
 * it may not, WHY (SIZE bytes) says so, naming the address. */
bool webhook_address_allowed(const struct sockaddr *address, const char *host, const char *allow, char *why,
			     size_t size);

/* Checks URL when it is set: its syntax, and, when its host is an address
 * or a name of the local host, that ALLOW lets it be reached. 0, or
 * LL_EINVAL with a message. */
int webhook_target_check(const char *url, const char *allow);

#endif
