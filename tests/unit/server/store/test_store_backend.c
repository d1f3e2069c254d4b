/* store_open()'s choice of a backend by the --db value's scheme
 * (store_backend.h): "sqlite:PATH" and a bare PATH open the SQLite
 * backend on the same file; an unknown scheme is refused, and a path with
 * a ':' after a '/' is a path. The token kinds' names, which no backend
 * owns. */
#include "check.h"
#include "server/store_fixture.h"

#include "loadlab/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static long long token_count(struct store *s)
{
	long long count = -1;

	CHECK_EQ_INT(store_token_count(s, STORE_TOKEN_ADMIN, &count), 0);
	return count;
}

int main(void)
{
	char dir[FIXTURE_DIR_SIZE];
	char bare[128], schemed[160], odd[160];
	unsigned char hash[STORE_TOKEN_HASH_SIZE] = {1};
	struct store *s = NULL;
	cJSON *token = NULL;
	enum store_token_kind kind = STORE_TOKEN_AGENT;
	struct stat st;

	fixture_dir_make("backend", dir);
	snprintf(bare, sizeof(bare), "%s/a.db", dir);
	snprintf(schemed, sizeof(schemed), "sqlite:%s", bare);
	snprintf(odd, sizeof(odd), "%s/b:c.db", dir);

	/* A bare path: SQLite's, its file 0600. */
	CHECK_EQ_INT(store_open(bare, &test_store_options, &s), 0);
	CHECK_EQ_INT(store_check(s), 0);
	CHECK_EQ_INT(store_token_create(s, STORE_TOKEN_ADMIN, "first", NULL, hash, 1000, &token), 0);
	cJSON_Delete(token);
	store_close(s);
	CHECK(stat(bare, &st) == 0 && (st.st_mode & 0777) == 0600);

	/* sqlite:PATH is the same file. */
	s = NULL;
	CHECK_EQ_INT(store_open(schemed, &test_store_options, &s), 0);
	if (s)
		CHECK_EQ_INT(token_count(s), 1);
	store_close(s);

	/* An unknown scheme is refused, the handle untouched. */
	s = NULL;
	CHECK_EQ_INT(store_open("mysql://db.example/loadlab", &test_store_options, &s), LL_EINVAL);
	CHECK(s == NULL);
	CHECK(strstr(err_message(LL_EINVAL), "mysql") != NULL);

	/* postgresql: and postgres: are PostgreSQL's (store/pg/): a database
	 * that cannot be reached is a store error, the handle untouched. */
	CHECK_EQ_INT(store_open("postgresql://127.0.0.1:1/loadlab", &test_store_options, &s), LL_ESTORE);
	CHECK(s == NULL);
	CHECK_EQ_INT(store_open("postgres://127.0.0.1:1/loadlab", &test_store_options, &s), LL_ESTORE);
	CHECK(s == NULL);
	CHECK_EQ_INT(store_open("postgresql://127.0.0.1:1/loadlab?pool_size=0", &test_store_options, &s),
		     LL_EINVAL);
	CHECK(s == NULL);

	/* A ':' after a '/' belongs to a path. */
	CHECK_EQ_INT(store_open(odd, &test_store_options, &s), 0);
	if (s)
		CHECK_EQ_INT(token_count(s), 0);
	store_close(s);
	CHECK(access(odd, F_OK) == 0);

	/* Token kinds. */
	CHECK_EQ_STR(store_token_kind_name(STORE_TOKEN_ENROLL), "enroll");
	CHECK_EQ_INT(store_token_kind_parse("user", &kind), 0);
	CHECK_EQ_INT(kind, STORE_TOKEN_USER);
	CHECK_EQ_INT(store_token_kind_parse("root", &kind), LL_EINVAL);

	return fixture_dir_finish(dir);
}
