/* Webhook URLs and the addresses they may reach: see webhook_target.h. */
#include "webhook_target.h"

#include "store/store.h"

#include "loadlab/err.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

/* An address as judged: 4 bytes for IPv4 (an IPv4 address inside IPv6
 * included), 16 for IPv6. */
struct ip {
	int bytes;
	unsigned char b[16];
};

/* A refused network: LENGTH bytes of prefix B, BITS long. */
struct net {
	int bytes, bits;
	unsigned char b[16];
	const char *what;
};

static const struct net refused[] = {
	{4, 8, {0}, "an unspecified address"},
	{4, 8, {127}, "a loopback address"},
	{4, 8, {10}, "a private address"},
	{4, 12, {172, 16}, "a private address"},
	{4, 16, {192, 168}, "a private address"},
	{4, 10, {100, 64}, "a shared (carrier NAT) address"},
	{4, 16, {169, 254}, "a link-local address"},
	{4, 4, {224}, "a multicast address"},
	{4, 4, {240}, "a reserved address"},
	{4, 15, {198, 18}, "a benchmarking address (198.18.0.0/15)"},
	{4, 24, {192, 0, 0}, "an IETF protocol address (192.0.0.0/24)"},
	{16, 128, {0}, "an unspecified address"},
	{16, 128, {[15] = 1}, "a loopback address"},
	{16, 10, {0xfe, 0x80}, "a link-local address"},
	{16, 10, {0xfe, 0xc0}, "a site-local address"},
	{16, 7, {0xfc}, "a private (unique local) address"},
	{16, 8, {0xff}, "a multicast address"},
	/* IPv4 inside, where it cannot be told: the prefix's length is the
	 * network's own (RFC 8215), Teredo's client address is obfuscated */
	{16, 48, {0, 0x64, 0xff, 0x9b, 0, 1}, "a local-use NAT64 address (64:ff9b:1::/48)"},
	{16, 32, {0x20, 0x01, 0, 0}, "a Teredo address (2001::/32)"},
	{16, 48, {0x20, 0x01, 0, 0x02}, "a benchmarking address (2001:2::/48)"},
};

static bool in_net(const struct ip *ip, int bytes, const unsigned char *prefix, int bits)
{
	if (ip->bytes != bytes)
		return false;
	for (int i = 0; i < bits / 8; i++)
		if (ip->b[i] != prefix[i])
			return false;
	if (bits % 8) {
		unsigned char mask = (unsigned char)(0xff << (8 - bits % 8));
		if ((ip->b[bits / 8] & mask) != (prefix[bits / 8] & mask))
			return false;
	}
	return true;
}

/* IPv6 forms that carry an IPv4 address become that address. */
static void unwrap(struct ip *ip)
{
	static const unsigned char mapped[12] = {[10] = 0xff, [11] = 0xff};
	static const unsigned char translated[12] = {[8] = 0xff, [9] = 0xff}; /* ::ffff:0:0/96, RFC 2765 */
	static const unsigned char nat64[12] = {0, 0x64, 0xff, 0x9b};
	static const unsigned char zero[12] = {0};
	const unsigned char *v4 = NULL;

	if (ip->bytes != 16)
		return;
	if (!memcmp(ip->b, mapped, 12) || !memcmp(ip->b, translated, 12) || !memcmp(ip->b, nat64, 12))
		v4 = ip->b + 12;
	else if (!memcmp(ip->b, zero, 12) && (ip->b[12] || ip->b[13] || ip->b[14] > 0 || ip->b[15] > 1))
		v4 = ip->b + 12; /* IPv4-compatible, not :: or ::1 */
	else if (ip->b[0] == 0x20 && ip->b[1] == 0x02)
		v4 = ip->b + 2; /* 6to4 */
	if (v4) {
		memmove(ip->b, v4, 4);
		memset(ip->b + 4, 0, 12);
		ip->bytes = 4;
	}
}

static void ip_text(const struct ip *ip, char *out, size_t size)
{
	if (!inet_ntop(ip->bytes == 4 ? AF_INET : AF_INET6, ip->b, out, (socklen_t)size))
		snprintf(out, size, "?");
}

/* Parses "ADDRESS" or "ADDRESS/BITS" (strict spellings) of LENGTH. */
static bool parse_cidr(const char *text, size_t length, struct ip *ret_ip, int *ret_bits)
{
	char buf[64], *slash, *end;
	struct ip ip = {0};
	long bits;

	if (length == 0 || length >= sizeof(buf))
		return false;
	memcpy(buf, text, length);
	buf[length] = '\0';
	if ((slash = strchr(buf, '/')))
		*slash = '\0';
	if (inet_pton(AF_INET, buf, ip.b) == 1)
		ip.bytes = 4;
	else if (inet_pton(AF_INET6, buf, ip.b) == 1)
		ip.bytes = 16;
	else
		return false;
	bits = ip.bytes * 8;
	if (slash) {
		if (!isdigit((unsigned char)slash[1]))
			return false;
		bits = strtol(slash + 1, &end, 10);
		if (*end || bits < 0 || bits > ip.bytes * 8)
			return false;
	}
	*ret_ip = ip;
	*ret_bits = (int)bits;
	return true;
}

/* A DNS name of LENGTH as webhook_target.h describes it. */
static bool host_name_valid(const char *name, size_t length)
{
	size_t label = 0;

	if (length == 0 || length > WEBHOOK_HOST_MAX)
		return false;
	for (size_t i = 0; i < length; i++) {
		unsigned char c = (unsigned char)name[i];
		if (c == '.') {
			if (label == 0)
				return false;
			label = 0;
		} else if (isalnum(c) || c == '-' || c == '_') {
			if (++label > 63)
				return false;
		} else {
			return false;
		}
	}
	return true;
}

static bool is_separator(char c)
{
	return c == ',' || isspace((unsigned char)c);
}

int webhook_allow_entry_check(const char *entry, size_t length)
{
	struct ip ip;
	int bits;

	if (parse_cidr(entry, length, &ip, &bits) || host_name_valid(entry, length))
		return 0;
	return err_set(LL_EINVAL,
		       "webhook-allow: '%.*s' is not a host name, an address or a network (ADDRESS/BITS).",
		       (int)(length > 300 ? 300 : length), entry);
}

/* Calls FN(ENTRY, LENGTH, CONTEXT) for each entry of ALLOW until it
 * returns nonzero; returns that, or 0. */
static int allow_each(const char *allow, int (*fn)(const char *entry, size_t length, void *context),
		      void *context)
{
	const char *p = allow ? allow : "";

	for (;;) {
		size_t n;
		int rc;
		while (*p && is_separator(*p))
			p++;
		if (!*p)
			return 0;
		for (n = 0; p[n] && !is_separator(p[n]); n++)
			;
		if ((rc = fn(p, n, context)) != 0)
			return rc;
		p += n;
	}
}

static int check_entry(const char *entry, size_t length, void *context)
{
	int *count = context;

	if (++*count > WEBHOOK_ALLOW_MAX)
		return err_set(LL_EINVAL, "webhook-allow: at most %d entries.", WEBHOOK_ALLOW_MAX);
	return webhook_allow_entry_check(entry, length);
}

int webhook_allow_check(const char *allow)
{
	int count = 0;

	return allow_each(allow, check_entry, &count);
}

struct match {
	const struct ip *ip;
	const char *host;
};

/* 1 when the entry allows the address or the host. */
static int match_entry(const char *entry, size_t length, void *context)
{
	const struct match *m = context;
	struct ip net;
	int bits;

	if (parse_cidr(entry, length, &net, &bits)) {
		if (net.bytes == 16 && bits >= 96) { /* ::ffff:a.b.c.d/N */
			unwrap(&net);
			if (net.bytes == 4)
				bits -= 96;
		}
		return in_net(m->ip, net.bytes, net.b, bits);
	}
	if (length && entry[length - 1] == '.')
		length--;
	return m->host && strlen(m->host) == length && strncasecmp(m->host, entry, length) == 0;
}

static bool ip_allowed(const struct ip *raw, const char *host, const char *allow, char *why, size_t size)
{
	struct ip ip = *raw;
	struct match m = {&ip, host};
	char text[INET6_ADDRSTRLEN];

	unwrap(&ip);
	if (allow_each(allow, match_entry, &m) == 1)
		return true;
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		if (in_net(&ip, refused[i].bytes, refused[i].b, refused[i].bits) ||
		    (ip.bytes == 4 && !memcmp(ip.b, "\xff\xff\xff\xff", 4))) {
			ip_text(raw, text, sizeof(text));
			if (why)
				snprintf(why, size, "%s is %s, which --webhook-allow does not list", text,
					 in_net(&ip, refused[i].bytes, refused[i].b, refused[i].bits)
						 ? refused[i].what
						 : "the broadcast address");
			return false;
		}
	}
	return true;
}

bool webhook_address_allowed(const struct sockaddr *address, const char *host, const char *allow, char *why,
			     size_t size)
{
	struct ip ip = {0};

	if (address->sa_family == AF_INET) {
		ip.bytes = 4;
		memcpy(ip.b, &((const struct sockaddr_in *)(const void *)address)->sin_addr, 4);
	} else if (address->sa_family == AF_INET6) {
		ip.bytes = 16;
		memcpy(ip.b, &((const struct sockaddr_in6 *)(const void *)address)->sin6_addr, 16);
	} else {
		if (why)
			snprintf(why, size, "only IPv4 and IPv6 addresses are reached");
		return false;
	}
	return ip_allowed(&ip, host, allow, why, size);
}

#define URL_ERROR "webhook_url must be an http:// or https:// URL with a host"

int webhook_url_host(const char *url, char *ret_host)
{
	const char *authority, *end, *host, *host_end, *port = NULL;
	size_t length = strlen(url), n;
	char buf[WEBHOOK_HOST_MAX + 1];

	if (length > STORE_WEBHOOK_URL_MAX)
		return err_set(LL_EINVAL, "webhook_url is longer than %d characters.", STORE_WEBHOOK_URL_MAX);
	for (size_t i = 0; i < length; i++)
		if ((unsigned char)url[i] <= 0x20 || (unsigned char)url[i] >= 0x7f || url[i] == '\\')
			return err_set(
				LL_EINVAL,
				"webhook_url may hold only printable ASCII characters, no space or '\\'.");
	if (strncasecmp(url, "http://", 7) == 0)
		authority = url + 7;
	else if (strncasecmp(url, "https://", 8) == 0)
		authority = url + 8;
	else
		return err_set(LL_EINVAL, URL_ERROR " (no other scheme), or null.");
	end = authority + strcspn(authority, "/?#");
	if (memchr(authority, '@', (size_t)(end - authority)))
		return err_set(LL_EINVAL, "webhook_url may not carry a user name or password ('@').");
	host = authority;
	if (*host == '[') {
		host++;
		host_end = memchr(host, ']', (size_t)(end - host));
		if (!host_end)
			return err_set(LL_EINVAL, URL_ERROR ": an IPv6 address ends with ']'.");
		n = (size_t)(host_end - host);
		if (n >= sizeof(buf))
			return err_set(LL_EINVAL, URL_ERROR ": the IPv6 address is too long.");
		memcpy(buf, host, n);
		buf[n] = '\0';
		{
			unsigned char b[16];
			if (inet_pton(AF_INET6, buf, b) != 1)
				return err_set(LL_EINVAL, URL_ERROR ": '[%s]' is not an IPv6 address.", buf);
		}
		if (host_end + 1 < end) {
			if (host_end[1] != ':')
				return err_set(LL_EINVAL,
					       URL_ERROR ": ']' is followed by ':PORT' or the path.");
			port = host_end + 2;
		}
	} else {
		host_end = memchr(host, ':', (size_t)(end - host));
		if (host_end)
			port = host_end + 1;
		else
			host_end = end;
		n = (size_t)(host_end - host);
		if (n && host[n - 1] == '.')
			n--;
		if (!host_name_valid(host, n))
			return err_set(LL_EINVAL, URL_ERROR ": '%.*s' is not a host name or address.",
				       (int)(n > 300 ? 300 : n), host);
		memcpy(buf, host, n);
		buf[n] = '\0';
	}
	if (port) {
		long value = 0;
		const char *p;
		for (p = port; p < end && isdigit((unsigned char)*p) && p - port < 6; p++)
			value = value * 10 + (*p - '0');
		if (p == port || p != end || value < 1 || value > 65535)
			return err_set(LL_EINVAL, URL_ERROR ": the port is a number from 1 to 65535.");
	}
	for (char *c = buf; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	memcpy(ret_host, buf, strlen(buf) + 1);
	return 0;
}

int webhook_target_check(const char *url, const char *allow)
{
	char host[WEBHOOK_HOST_MAX + 1], why[200];
	struct ip ip = {0};
	struct in_addr v4;
	size_t n;
	int rc;

	if ((rc = webhook_url_host(url, host)) < 0)
		return rc;
	n = strlen(host);
	if (inet_pton(AF_INET6, host, ip.b) == 1) {
		ip.bytes = 16;
	} else if (inet_aton(host, &v4)) {
		ip.bytes = 4;
		memcpy(ip.b, &v4, 4);
	} else if (strcmp(host, "localhost") == 0 || (n > 10 && strcmp(host + n - 10, ".localhost") == 0)) {
		ip.bytes = 4;
		memcpy(ip.b, "\x7f\0\0\x01", 4);
	} else {
		return 0; /* a name: its addresses are checked at each delivery */
	}
	if (!ip_allowed(&ip, host, allow, why, sizeof(why)))
		return err_set(LL_EINVAL, "webhook_url may not point at %s: %s.", host, why);
	return 0;
}
