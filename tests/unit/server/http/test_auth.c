/* Tokens (auth.c): generation, hashing, shape, and auth_check() for every
 * class against a real store. */
#include "http/auth.h"
#include "check.h"
#include "server/store_fixture.h"

#include "loadlab/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void hex(const unsigned char *bytes, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", bytes[i]);
}

static void test_hash(void)
{
	unsigned char hash[STORE_TOKEN_HASH_SIZE];
	char text[2 * STORE_TOKEN_HASH_SIZE + 1];

	/* FIPS 180-2 test vectors. */
	auth_token_hash("abc", hash);
	hex(hash, sizeof(hash), text);
	CHECK_EQ_STR(text, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	auth_token_hash("", hash);
	hex(hash, sizeof(hash), text);
	CHECK_EQ_STR(text, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

static void test_generate_and_shape(void)
{
	char a[AUTH_TOKEN_MAX + 1], b[AUTH_TOKEN_MAX + 1], small[20];

	CHECK_EQ_INT(auth_token_generate("lladm_", a, sizeof(a)), 0);
	CHECK_EQ_INT(auth_token_generate("lladm_", b, sizeof(b)), 0);
	CHECK_EQ_INT(strlen(a), 6 + 64);
	CHECK(strncmp(a, "lladm_", 6) == 0);
	CHECK(strspn(a + 6, "0123456789abcdef") == 64);
	CHECK(strcmp(a, b) != 0);
	CHECK(auth_token_well_formed(a));
	CHECK_EQ_INT(auth_token_generate("lladm_", small, sizeof(small)), LL_EINVAL);

	CHECK(auth_token_well_formed("0123456789abcdef")); /* 16: the shortest */
	CHECK(!auth_token_well_formed("0123456789abcde")); /* 15 */
	CHECK(auth_token_well_formed("Ab0._~+/=-Ab0._~+/=-"));
	CHECK(!auth_token_well_formed("0123456789abcdef "));        /* a space */
	CHECK(!auth_token_well_formed("0123456789abcdef\xc3\xa9")); /* not ASCII */
	char longest[AUTH_TOKEN_MAX + 2];
	memset(longest, 'x', sizeof(longest));
	longest[AUTH_TOKEN_MAX] = '\0';
	CHECK(auth_token_well_formed(longest));
	longest[AUTH_TOKEN_MAX] = 'x';
	longest[AUTH_TOKEN_MAX + 1] = '\0';
	CHECK(!auth_token_well_formed(longest));
}

static const char *const tokens[] = {
	"admin-token-0123456789",
	"user-token-0123456789",
	"enroll-token-0123456789",
	"agent-token-0123456789",
};

static int check_as(struct store *s, enum auth_class class, int who, struct store_token *t)
{
	char header[300];

	snprintf(header, sizeof(header), "Bearer %s", tokens[who]);
	return auth_check(s, class, false, false, header, t);
}

static void test_check(struct store *s)
{
	static const enum auth_class classes[] = {AUTH_METRICS, AUTH_READER, AUTH_USER,
						  AUTH_ADMIN,   AUTH_ENROLL, AUTH_AGENT};
	/* allowed[class][kind]: admin, user, enroll, agent */
	static const bool allowed[][4] = {
		{1, 1, 0, 0}, {1, 1, 0, 0}, {1, 1, 0, 0}, {1, 0, 0, 0}, {1, 0, 1, 0}, {0, 0, 0, 1},
	};
	unsigned char hash[STORE_TOKEN_HASH_SIZE], near[STORE_TOKEN_HASH_SIZE];
	struct store_token t;
	long long agent_id = 0;
	cJSON *facts = cJSON_CreateObject(), *labels = cJSON_CreateObject(), *out = NULL;

	for (int k = 0; k < 3; k++) {
		auth_token_hash(tokens[k], hash);
		CHECK_EQ_INT(store_token_create(s, (enum store_token_kind)k, "t", NULL, hash, 1, NULL), 0);
	}
	auth_token_hash(tokens[3], hash);
	CHECK_EQ_INT(store_agent_enroll(s, "a", facts, labels, hash, 1, &agent_id), 0);
	cJSON_Delete(facts);
	cJSON_Delete(labels);

	for (size_t c = 0; c < sizeof(classes) / sizeof(classes[0]); c++)
		for (int k = 0; k < 4; k++) {
			int rc = check_as(s, classes[c], k, &t);
			CHECK_EQ_INT(rc, allowed[c][k] ? 0 : LL_EFORBIDDEN);
			if (rc == 0)
				CHECK_EQ_INT(t.kind, k);
		}
	CHECK_EQ_INT(check_as(s, AUTH_AGENT, 3, &t), 0);
	CHECK_EQ_INT(t.agent_id, agent_id);

	/* Public routes need no token; public flags open only their class. */
	t.id = 99;
	CHECK_EQ_INT(auth_check(s, AUTH_ANYONE, false, false, NULL, &t), 0);
	CHECK_EQ_INT(t.id, 0);
	CHECK_EQ_INT(auth_check(s, AUTH_READER, true, false, NULL, &t), 0);
	CHECK_EQ_INT(auth_check(s, AUTH_METRICS, false, true, NULL, &t), 0);
	CHECK_EQ_INT(auth_check(s, AUTH_READER, false, true, NULL, &t), LL_EAUTH);
	CHECK_EQ_INT(auth_check(s, AUTH_METRICS, true, false, NULL, &t), LL_EAUTH);
	CHECK_EQ_INT(auth_check(s, AUTH_USER, true, true, NULL, &t), LL_EAUTH);

	/* Bad headers. */
	CHECK_EQ_INT(auth_check(s, AUTH_USER, false, false, "Basic abc", &t), LL_EAUTH);
	CHECK_EQ_INT(auth_check(s, AUTH_USER, false, false, "Bearer short", &t), LL_EAUTH);
	CHECK_EQ_INT(auth_check(s, AUTH_USER, false, false, "bearer user-token-0123456789", &t), LL_EAUTH);
	CHECK_EQ_INT(auth_check(s, AUTH_USER, false, false, "Bearer user-token-0123456788", &t), LL_EAUTH);

	/* A hash that differs in its first or last byte only is not found. */
	auth_token_hash(tokens[1], hash);
	CHECK_EQ_INT(store_token_find(s, hash, &t), 0);
	memcpy(near, hash, sizeof(near));
	near[STORE_TOKEN_HASH_SIZE - 1] ^= 1;
	CHECK_EQ_INT(store_token_find(s, near, &t), LL_ENOTFOUND);
	memcpy(near, hash, sizeof(near));
	near[0] ^= 0x80;
	CHECK_EQ_INT(store_token_find(s, near, &t), LL_ENOTFOUND);

	/* A revoked token is unknown, though it was remembered (store_token_find()
	 * keeps live tokens) by the checks before the revocation. */
	CHECK_EQ_INT(check_as(s, AUTH_USER, 1, &t), 0);
	CHECK_EQ_INT(check_as(s, AUTH_USER, 1, &t), 0);
	CHECK_EQ_INT(store_token_revoke(s, t.id, 2, &out), 0);
	cJSON_Delete(out);
	CHECK_EQ_INT(check_as(s, AUTH_USER, 1, &t), LL_EAUTH);
	CHECK_EQ_INT(check_as(s, AUTH_USER, 1, &t), LL_EAUTH);
}

int main(void)
{
	char dir[FIXTURE_DIR_SIZE], path[300];
	struct store *s = NULL;

	test_hash();
	test_generate_and_shape();
	fixture_dir_make("auth", dir);
	snprintf(path, sizeof(path), "%s/store.db", dir);
	CHECK_EQ_INT(store_open(path, &test_store_options, &s), 0);
	if (s)
		test_check(s);
	store_close(s);
	return fixture_dir_finish(dir);
}
