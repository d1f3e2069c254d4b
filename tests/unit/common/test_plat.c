/*
 * test_plat.c - the platform layer's shared half (plat.c) and the POSIX
 * backend: path joining at its limit, whole-file reads against their cap,
 * atomic writes, folder listing, tree removal that never follows a link,
 * processes with their exit code and a timeout, the stop flag.
 */
#include "loadlab/clock.h"
#include "loadlab/err.h"
#include "loadlab/plat.h"
#include "loadlab/plat_thread.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

static char *scratch;

static void join(char *out, const char *name)
{
	CHECK_EQ_INT(plat_path_join(out, PLAT_MAX_PATH + 1, scratch, name), 0);
}

static void test_path_join(void)
{
	char out[8] = "keep";

	CHECK_EQ_INT(plat_path_join(out, sizeof(out), "ab", "cd"), 0);
	CHECK_EQ_STR(out, "ab/cd");
	CHECK_EQ_INT(plat_path_join(out, sizeof(out), "ab/", "cd"), 0);
	CHECK_EQ_STR(out, "ab/cd");
	CHECK_EQ_INT(plat_path_join(out, sizeof(out), "", "cd"), 0);
	CHECK_EQ_STR(out, "cd");
	/* "abc/def" and its NUL fill all 8 bytes; one more is too many. */
	CHECK_EQ_INT(plat_path_join(out, sizeof(out), "abc", "def"), 0);
	CHECK_EQ_STR(out, "abc/def");
	memcpy(out, "keep", 5);
	CHECK_EQ_INT(plat_path_join(out, sizeof(out), "abc", "defg"), LL_ETOOBIG);
	CHECK_EQ_STR(out, "keep");
	CHECK(strstr(err_message(LL_ETOOBIG), "abc/defg") != NULL);
	CHECK_EQ_INT(plat_path_join(out, sizeof(out), "abcdefgh", ""), LL_ETOOBIG);
	CHECK_EQ_INT(plat_path_join(out, 0, "", ""), LL_ETOOBIG);
}

static void test_read_file_cap(void)
{
	char path[PLAT_MAX_PATH + 1], *data = NULL, big[10000];
	size_t len = 0;

	memset(big, 'z', sizeof(big));
	join(path, "capped");
	CHECK_EQ_INT(plat_write_file(path, big, sizeof(big)), 0);

	/* Under the limit. */
	CHECK_EQ_INT(plat_read_file(path, sizeof(big) + 1, &data, &len), 0);
	CHECK_EQ_INT(len, sizeof(big));
	CHECK(data && memcmp(data, big, sizeof(big)) == 0 && data[len] == '\0');
	free(data);
	data = NULL;
	/* At the limit: a file of exactly LIMIT bytes is fine. */
	CHECK_EQ_INT(plat_read_file(path, sizeof(big), &data, &len), 0);
	CHECK_EQ_INT(len, sizeof(big));
	CHECK(data && data[len] == '\0');
	free(data);
	/* Over the limit by one byte: refused, outputs untouched. */
	data = (char *)"untouched";
	len = 7;
	CHECK_EQ_INT(plat_read_file(path, sizeof(big) - 1, &data, &len), LL_ETOOBIG);
	CHECK_EQ_STR(data, "untouched");
	CHECK_EQ_INT(len, 7);
	CHECK(strstr(err_message(LL_ETOOBIG), "larger than 9999 bytes") != NULL);
	/* A limit of 0: only an empty file passes. */
	CHECK_EQ_INT(plat_read_file(path, 0, &data, &len), LL_ETOOBIG);
	join(path, "empty");
	CHECK_EQ_INT(plat_write_file(path, "", 0), 0);
	CHECK_EQ_INT(plat_read_file(path, 0, &data, &len), 0);
	CHECK_EQ_INT(len, 0);
	CHECK_EQ_STR(data, "");
	free(data);
	/* A missing file. */
	join(path, "missing");
	CHECK_EQ_INT(plat_read_file(path, 100, &data, &len), LL_EIO);
	CHECK(strstr(err_message(LL_EIO), "missing") != NULL);
}

static int count_entry(void *context, const char *name)
{
	(*(int *)context)++;
	return strcmp(name, "x") == 0 ? 0 : 1;
}

static void test_write_atomic(void)
{
	char path[PLAT_MAX_PATH + 1], *data = NULL;
	size_t len = 0;
	struct stat st;
	int entries = 0;

	join(path, "atomic.json");
	CHECK_EQ_INT(plat_write_file_atomic(path, "{\"old\":1}", 9, true), 0);
	CHECK_EQ_INT(plat_write_file_atomic(path, "{\"new\":2}", 9, true), 0);
	CHECK_EQ_INT(plat_read_file(path, 100, &data, &len), 0);
	CHECK_EQ_STR(data, "{\"new\":2}");
	free(data);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
	/* No temporary file is left beside it. */
	char folder[PLAT_MAX_PATH + 1];
	join(folder, "only");
	CHECK_EQ_INT(plat_mkdirs_private(folder), 0);
	CHECK(stat(folder, &st) == 0 && (st.st_mode & 0777) == 0700);
	CHECK_EQ_INT(plat_path_join(path, sizeof(path), folder, "x"), 0);
	CHECK_EQ_INT(plat_write_file_atomic(path, "1", 1, false), 0);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0644);
	CHECK_EQ_INT(plat_list_dir(folder, count_entry, &entries), 0);
	CHECK_EQ_INT(entries, 1);
	/* Into a missing folder: LL_EIO. */
	join(path, "nowhere/x");
	CHECK_EQ_INT(plat_write_file_atomic(path, "1", 1, false), LL_EIO);
}

struct listing {
	int seen;
	int stop_at;
	unsigned mask;
};

static int visit(void *context, const char *name)
{
	struct listing *l = context;

	l->seen++;
	if (strlen(name) == 1 && name[0] >= 'a' && name[0] <= 'e')
		l->mask |= 1u << (name[0] - 'a');
	return l->seen == l->stop_at ? 42 : 0;
}

static void test_list_dir(void)
{
	char folder[PLAT_MAX_PATH + 1], path[PLAT_MAX_PATH + 1];
	struct listing l = {0, 0, 0};

	join(folder, "listed");
	CHECK_EQ_INT(plat_mkdirs(folder), 0);
	for (char c = 'a'; c <= 'e'; c++) {
		char name[2] = {c, '\0'};
		CHECK_EQ_INT(plat_path_join(path, sizeof(path), folder, name), 0);
		CHECK_EQ_INT(plat_write_file(path, name, 1), 0);
	}
	CHECK_EQ_INT(plat_list_dir(folder, visit, &l), 0);
	CHECK_EQ_INT(l.seen, 5); /* no "." or ".." */
	CHECK_EQ_INT(l.mask, 0x1f);
	l = (struct listing){0, 2, 0};
	CHECK_EQ_INT(plat_list_dir(folder, visit, &l), 42);
	CHECK_EQ_INT(l.seen, 2);
	l = (struct listing){0, 0, 0};
	join(folder, "no-such-folder");
	CHECK_EQ_INT(plat_list_dir(folder, visit, &l), 0);
	CHECK_EQ_INT(l.seen, 0);
}

static void test_remove_tree_keeps_link_targets(void)
{
	char outside[PLAT_MAX_PATH + 1], kept[PLAT_MAX_PATH + 1], tree[PLAT_MAX_PATH + 1];
	char deep[PLAT_MAX_PATH + 1], path[PLAT_MAX_PATH + 1];

	join(outside, "outside");
	CHECK_EQ_INT(plat_mkdirs(outside), 0);
	CHECK_EQ_INT(plat_path_join(kept, sizeof(kept), outside, "kept.txt"), 0);
	CHECK_EQ_INT(plat_write_file(kept, "keep me", 7), 0);

	join(tree, "tree");
	CHECK_EQ_INT(plat_path_join(deep, sizeof(deep), tree, "a/b/c"), 0);
	CHECK_EQ_INT(plat_mkdirs(deep), 0);
	CHECK_EQ_INT(plat_path_join(path, sizeof(path), deep, "file"), 0);
	CHECK_EQ_INT(plat_write_file(path, "x", 1), 0);
	chmod(path, 0400); /* read-only files go too */
	/* A link to a folder and a link to a file, inside the tree. */
	CHECK_EQ_INT(plat_path_join(path, sizeof(path), tree, "a/to-folder"), 0);
	CHECK(symlink(outside, path) == 0);
	CHECK_EQ_INT(plat_path_join(path, sizeof(path), deep, "to-file"), 0);
	CHECK(symlink(kept, path) == 0);

	CHECK_EQ_INT(plat_remove_tree(tree), 0);
	CHECK(access(tree, F_OK) != 0);
	CHECK(plat_file_exists(kept));
	/* Removing a missing tree is fine; an empty path is not. */
	CHECK_EQ_INT(plat_remove_tree(tree), 0);
	CHECK_EQ_INT(plat_remove_tree(""), LL_EINVAL);
	/* A link given as the top path is removed, its target kept. */
	join(path, "top-link");
	CHECK(symlink(outside, path) == 0);
	CHECK_EQ_INT(plat_remove_tree(path), 0);
	CHECK(plat_file_exists(kept));
	CHECK_EQ_INT(plat_remove_file(kept), 0);
	CHECK(!plat_file_exists(kept));
	CHECK_EQ_INT(plat_remove_file(kept), 0); /* missing is fine */
}

static void test_mkdirs_over_a_file(void)
{
	char path[PLAT_MAX_PATH + 1];

	join(path, "plain-file");
	CHECK_EQ_INT(plat_write_file(path, "x", 1), 0);
	CHECK_EQ_INT(plat_mkdirs(path), LL_EIO);
	CHECK(strstr(err_message(LL_EIO), "plain-file") != NULL);
	CHECK_EQ_INT(plat_mkdirs(""), LL_EINVAL);
}

static void test_run(void)
{
	const char *exit_7[] = {"/bin/sh", "-c", "exit 7", NULL};
	const char *sleeper[] = {"/bin/sh", "-c", "exec sleep 30", NULL};
	const char *missing[] = {"/nonexistent/program", NULL};
	struct plat_spawn_options o = {.argv = exit_7};
	int code = -1;
	long long wall = -1, start;

	CHECK_EQ_INT(plat_run(&o, 10000, &code, &wall), 0);
	CHECK_EQ_INT(code, 7);
	CHECK(wall >= 0 && wall < 10000000);

	/* Still running at the timeout: killed, LL_ERANGE, well before 30 s. */
	o.argv = sleeper;
	code = -1;
	start = clock_monotonic_us();
	CHECK_EQ_INT(plat_run(&o, 200, &code, &wall), LL_ERANGE);
	CHECK(clock_monotonic_us() - start < 5000000);
	CHECK_EQ_INT(code, -1);
	CHECK(strstr(err_message(LL_ERANGE), "still running after 200 ms") != NULL);

	o.argv = missing;
	CHECK_EQ_INT(plat_run(&o, 1000, &code, NULL), LL_EIO);
	CHECK(strstr(err_message(LL_EIO), "/nonexistent/program") != NULL);
}

static void set_flag(void *arg)
{
	*(int *)arg = 1;
	plat_request_stop();
}

static void test_stop_and_threads(void)
{
	struct plat_thread *thread = NULL;
	int flag = 0;
	long long start;

	CHECK(!plat_stop_requested());
	start = clock_monotonic_us();
	CHECK(plat_sleep_unless_stopped(30));
	CHECK(clock_monotonic_us() - start >= 30000);
	CHECK_EQ_INT(plat_thread_start(set_flag, &flag, &thread), 0);
	plat_thread_join(thread);
	CHECK_EQ_INT(flag, 1);
	CHECK(plat_stop_requested());
	/* Once stopped, a long sleep returns at once. */
	start = clock_monotonic_us();
	CHECK(!plat_sleep_unless_stopped(10000));
	CHECK(clock_monotonic_us() - start < 1000000);
	plat_thread_join(NULL);
}

static void test_host_facts(void)
{
	char name[64] = "";

	plat_host_name(name, sizeof(name));
	CHECK(name[0] != '\0' && strlen(name) < sizeof(name));
	CHECK_EQ_STR(plat_getenv("LOADLAB_TEST_PLAT_VALUE"), "here");
	CHECK(plat_getenv("LOADLAB_TEST_PLAT_UNSET") == NULL);
	CHECK(plat_is_executable("/bin/sh"));
	CHECK(!plat_is_executable("/etc/hostname-not-here"));
}

int main(void)
{
	umask(022); /* the modes checked below are before the umask */
	setenv("LOADLAB_TEST_PLAT_VALUE", "here", 1);
	unsetenv("LOADLAB_TEST_PLAT_UNSET");
	CHECK_EQ_INT(plat_make_temp_dir("loadlab-test-plat", &scratch), 0);
	if (!scratch)
		return check_finish();
	test_path_join();
	test_read_file_cap();
	test_write_atomic();
	test_list_dir();
	test_remove_tree_keeps_link_targets();
	test_mkdirs_over_a_file();
	test_run();
	test_stop_and_threads();
	test_host_facts();
	CHECK_EQ_INT(plat_remove_tree(scratch), 0);
	free(scratch);
	return check_finish();
}
