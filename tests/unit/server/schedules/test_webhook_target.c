/* Webhook targets (webhook_target.h): URL syntax, the refused address
 * ranges in their spellings, and allow-list entries, from tables. */
#include "check.h"
#include "schedules/webhook_target.h"

#include "loadlab/err.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

struct url_case {
	const char *url;
	const char *allow;
	int ok;
	const char *host; /* what webhook_url_host() gives, when ok */
};

static const struct url_case url_cases[] = {
	{"https://hooks.example.com/x?y=1#z", NULL, 1, "hooks.example.com"},
	{"HTTP://Hooks.Example.COM.:8443/a", NULL, 1, "hooks.example.com"},
	{"http://[2001:db8::1]:80/", NULL, 1, "2001:db8::1"},
	{"http://8.8.8.8/", NULL, 1, "8.8.8.8"},
	/* syntax */
	{"ftp://hooks.example.com/", NULL, 0, NULL},
	{"http://", NULL, 0, NULL},
	{"http:///x", NULL, 0, NULL},
	{"http://user:pw@hooks.example.com/", NULL, 0, NULL},
	{"http://hooks.example.com/a b", NULL, 0, NULL},
	{"http://hooks.example.com/\r\n", NULL, 0, NULL},
	{"http://hooks.example.com:0/", NULL, 0, NULL},
	{"http://hooks.example.com:65536/", NULL, 0, NULL},
	{"http://hooks.example.com:80x/", NULL, 0, NULL},
	{"http://a..b/", NULL, 0, NULL},
	{"http://[::1/", NULL, 0, NULL},
	{"http://[fe80::1%25eth0]/", NULL, 0, NULL},
	{"http://h\\@10.0.0.1/", NULL, 0, NULL},
	/* refused ranges, in several spellings */
	{"http://127.0.0.1/", NULL, 0, NULL},
	{"http://2130706433/", NULL, 0, NULL},
	{"http://0x7f.1/", NULL, 0, NULL},
	{"http://0177.0.0.1/", NULL, 0, NULL},
	{"http://localhost/", NULL, 0, NULL},
	{"http://a.b.localhost/", NULL, 0, NULL},
	{"http://[::1]/", NULL, 0, NULL},
	{"http://[::ffff:127.0.0.1]/", NULL, 0, NULL},
	{"http://[::ffff:7f00:1]/", NULL, 0, NULL},
	{"http://[::127.0.0.1]/", NULL, 0, NULL},
	{"http://[2002:7f00:1::]/", NULL, 0, NULL},
	{"http://[64:ff9b::a9fe:a9fe]/", NULL, 0, NULL},
	{"http://169.254.169.254/", NULL, 0, NULL},
	{"http://[fe80::1]/", NULL, 0, NULL},
	{"http://10.0.0.1/", NULL, 0, NULL},
	{"http://172.16.0.1/", NULL, 0, NULL},
	{"http://172.31.255.255/", NULL, 0, NULL},
	{"http://192.168.0.1/", NULL, 0, NULL},
	{"http://100.64.0.1/", NULL, 0, NULL},
	{"http://[fc00::1]/", NULL, 0, NULL},
	{"http://[fd12::1]/", NULL, 0, NULL},
	{"http://0.0.0.0/", NULL, 0, NULL},
	{"http://0/", NULL, 0, NULL},
	{"http://[::]/", NULL, 0, NULL},
	{"http://224.0.0.1/", NULL, 0, NULL},
	{"http://255.255.255.255/", NULL, 0, NULL},
	/* issue 37: every IPv4-embedding IPv6 form, benchmarking, IETF */
	{"http://[::ffff:0:7f00:1]/", NULL, 0, NULL},
	{"http://[::ffff:0:127.0.0.1]/", NULL, 0, NULL},
	{"http://[::ffff:0:a00:1]/", NULL, 0, NULL},
	{"http://[64:ff9b::7f00:1]/", NULL, 0, NULL},
	{"http://[64:ff9b::10.0.0.1]/", NULL, 0, NULL},
	{"http://[64:ff9b:1::7f00:1]/", NULL, 0, NULL},
	{"http://[64:ff9b:1:7f00:1::]/", NULL, 0, NULL},
	{"http://[64:ff9b:1::808:808]/", NULL, 0, NULL},
	{"http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/", NULL, 0, NULL},
	{"http://[2001:2::1]/", NULL, 0, NULL},
	{"http://[2002:a00:1::]/", NULL, 0, NULL},
	{"http://198.18.0.1/", NULL, 0, NULL},
	{"http://198.19.255.255/", NULL, 0, NULL},
	{"http://3323068417/", NULL, 0, NULL},
	{"http://192.0.0.8/", NULL, 0, NULL},
	{"http://192.0.0.170/", NULL, 0, NULL},
	{"http://[::ffff:198.18.0.1]/", NULL, 0, NULL},
	{"http://[64:ff9b::c000:aa]/", NULL, 0, NULL},
	/* just outside the ranges */
	{"http://172.32.0.1/", NULL, 1, "172.32.0.1"},
	{"http://169.255.0.1/", NULL, 1, "169.255.0.1"},
	{"http://[fe00::1]/", NULL, 1, "fe00::1"},
	{"http://198.17.255.255/", NULL, 1, "198.17.255.255"},
	{"http://198.20.0.1/", NULL, 1, "198.20.0.1"},
	{"http://192.0.1.1/", NULL, 1, "192.0.1.1"},
	{"http://[64:ff9b::808:808]/", NULL, 1, "64:ff9b::808:808"},
	{"http://[::ffff:0:808:808]/", NULL, 1, "::ffff:0:808:808"},
	{"http://[64:ff9b:2::1]/", NULL, 1, "64:ff9b:2::1"},
	{"http://[2001:1::1]/", NULL, 1, "2001:1::1"},
	/* the allow list */
	{"http://127.0.0.1/", "127.0.0.1", 1, "127.0.0.1"},
	{"http://0x7f.1/", "127.0.0.1", 1, "0x7f.1"},
	{"http://[::ffff:127.0.0.1]/", "127.0.0.1", 1, "::ffff:127.0.0.1"},
	{"http://localhost/", "127.0.0.0/8", 1, "localhost"},
	{"http://localhost/", "LocalHost", 1, "localhost"},
	{"http://127.0.0.2/", "127.0.0.1", 0, NULL},
	{"http://10.9.8.7/", "192.168.0.0/16, 10.0.0.0/8", 1, "10.9.8.7"},
	{"http://[fd00::5]/", "fd00::/8", 1, "fd00::5"},
	{"http://[::1]/", "127.0.0.1", 0, NULL},
	{"http://[::ffff:10.1.1.1]/", "::ffff:10.0.0.0/104", 1, "::ffff:10.1.1.1"},
	{"http://198.18.0.1/", "198.18.0.0/15", 1, "198.18.0.1"},
	{"http://192.0.0.8/", "192.0.0.8", 1, "192.0.0.8"},
	{"http://[::ffff:0:7f00:1]/", "127.0.0.1", 1, "::ffff:0:7f00:1"},
	{"http://[64:ff9b:1::7f00:1]/", "64:ff9b:1::/48", 1, "64:ff9b:1::7f00:1"},
	{"http://[64:ff9b:1::7f00:1]/", "127.0.0.1", 0, NULL},
};

static void test_urls(void)
{
	for (size_t i = 0; i < sizeof(url_cases) / sizeof(url_cases[0]); i++) {
		const struct url_case *c = &url_cases[i];
		char host[WEBHOOK_HOST_MAX + 1];
		int rc = webhook_target_check(c->url, c->allow);
		if ((rc == 0) != c->ok)
			printf("  case %zu: %s (allow %s): %s\n", i, c->url, c->allow ? c->allow : "-",
			       rc ? err_message(rc) : "accepted");
		CHECK((rc == 0) == c->ok);
		CHECK(rc == 0 || rc == LL_EINVAL);
		if (c->ok) {
			CHECK_EQ_INT(webhook_url_host(c->url, host), 0);
			CHECK_EQ_STR(host, c->host);
		}
	}
	/* the length cap */
	{
		char url[1100];
		snprintf(url, sizeof(url), "http://h.example/%01080d", 0);
		CHECK_EQ_INT(webhook_target_check(url, NULL), LL_EINVAL);
		url[1024] = '\0';
		CHECK_EQ_INT(webhook_target_check(url, NULL), 0);
	}
}

static void test_addresses(void)
{
	static const struct {
		const char *address, *host, *allow;
		bool allowed;
		const char *why; /* in the refusal's reason; NULL: not checked */
	} cases[] = {
		{"127.0.0.1", "vm", NULL, false, "127.0.0.1 is a loopback address"},
		{"127.0.0.1", "vm", "127.0.0.1", true, NULL},
		{"127.0.0.1", "vm", "VM.", true, NULL},
		{"127.0.0.1", "vm2", "vm", false, NULL},
		{"93.184.216.34", "example.com", NULL, true, NULL},
		{"::ffff:192.168.1.1", "x", NULL, false, "private"},
		/* at connect time too: the translated form, local-use NAT64, 198.18/15 */
		{"::ffff:0:7f00:1", "x", NULL, false, "loopback"},
		{"64:ff9b:1::a00:1", "x", NULL, false, "local-use NAT64"},
		{"198.18.7.7", "x", NULL, false, "benchmarking"},
		{"2606:4700::1", "x", NULL, true, NULL},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sockaddr_in v4 = {.sin_family = AF_INET};
		struct sockaddr_in6 v6 = {.sin6_family = AF_INET6};
		bool is_v6 = strchr(cases[i].address, ':') != NULL;
		struct sockaddr *address = is_v6 ? (struct sockaddr *)&v6 : (struct sockaddr *)&v4;
		char why[200] = "";
		bool allowed;

		CHECK_EQ_INT(inet_pton(is_v6 ? AF_INET6 : AF_INET, cases[i].address,
				       is_v6 ? (void *)&v6.sin6_addr : (void *)&v4.sin_addr),
			     1);
		allowed = webhook_address_allowed(address, cases[i].host, cases[i].allow, why, sizeof(why));
		if (allowed != cases[i].allowed)
			printf("  case %zu: %s (host %s, allow %s): %s\n", i, cases[i].address, cases[i].host,
			       cases[i].allow ? cases[i].allow : "-", allowed ? "allowed" : why);
		CHECK(allowed == cases[i].allowed);
		CHECK(!cases[i].why || strstr(why, cases[i].why) != NULL);
	}
}

static void test_allow_entries(void)
{
	CHECK_EQ_INT(webhook_allow_check(NULL), 0);
	CHECK_EQ_INT(webhook_allow_check("127.0.0.1, 10.0.0.0/8 fd00::/8,hooks.lab"), 0);
	CHECK_EQ_INT(webhook_allow_check("10.0.0.0/33"), LL_EINVAL);
	CHECK_EQ_INT(webhook_allow_check("::1/129"), LL_EINVAL);
	CHECK_EQ_INT(webhook_allow_check("10.0.0.0/"), LL_EINVAL);
	CHECK_EQ_INT(webhook_allow_check("[::1]"), LL_EINVAL);
	CHECK_EQ_INT(webhook_allow_check("a..b"), LL_EINVAL);
	{
		char many[2000] = "";
		for (int i = 0; i <= WEBHOOK_ALLOW_MAX; i++)
			snprintf(many + strlen(many), sizeof(many) - strlen(many), "10.0.0.%d,", i);
		CHECK_EQ_INT(webhook_allow_check(many), LL_EINVAL);
	}
}

int main(void)
{
	test_urls();
	test_addresses();
	test_allow_entries();
	return check_finish();
}
