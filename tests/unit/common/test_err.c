/*
 * test_err.c - err_set()/err_message(): a message belongs to its code.
 */
#include "loadlab/err.h"

#include <string.h>

#include "check.h"

/* A failure that records a message, then a second failure with another
 * code and no message: the second must not show the first's message. */
static void test_stale_message_not_returned(void)
{
	int rc = err_set(LL_EIO, "Cannot open /nowhere/job.json: No such file.");

	CHECK_EQ_INT(rc, LL_EIO);
	CHECK_EQ_STR(err_message(LL_EIO), "Cannot open /nowhere/job.json: No such file.");
	CHECK(strstr(err_message(LL_ENOMEM), "job.json") == NULL);
	CHECK_EQ_STR(err_message(LL_ENOMEM), "Out of memory.");
	CHECK_EQ_STR(err_message(LL_ETOOBIG), "A size limit was exceeded.");
	/* The stored message is still there for its own code. */
	CHECK_EQ_STR(err_message(LL_EIO), "Cannot open /nowhere/job.json: No such file.");
}

static void test_cleared_message(void)
{
	err_set(LL_EINVAL, "Field 'x' must be a number.");
	err_clear();
	CHECK_EQ_STR(err_message(LL_EINVAL), "Invalid argument.");
}

static void test_latest_wins(void)
{
	err_set(LL_EFORMAT, "first");
	err_set(LL_EFORMAT, "second %d", 2);
	CHECK_EQ_STR(err_message(LL_EFORMAT), "second 2");
	err_set(LL_ERANGE, "third");
	CHECK_EQ_STR(err_message(LL_EFORMAT), "Malformed input.");
	CHECK_EQ_STR(err_message(LL_ERANGE), "third");
}

/* Every code has a generic text of its own, and a name. */
static void test_generic_texts(void)
{
	static const int codes[] = {LL_EINVAL, LL_ENOMEM,       LL_EIO,     LL_ENOTFOUND, LL_ECONFLICT,
				    LL_ERANGE, LL_EFORMAT,      LL_ETOOBIG, LL_EAUTH,     LL_EFORBIDDEN,
				    LL_ESTORE, LL_EUNSUPPORTED, LL_ESTATE,  LL_ENOSPACE};
	size_t n = sizeof(codes) / sizeof(codes[0]);

	err_clear();
	for (size_t i = 0; i < n; i++) {
		CHECK(strcmp(err_message(codes[i]), "The operation failed.") != 0);
		CHECK(strcmp(err_name(codes[i]), "internal") != 0);
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(err_message(codes[i]), err_message(codes[j])) != 0);
	}
	CHECK_EQ_STR(err_message(-999), "The operation failed.");
	CHECK_EQ_STR(err_name(-999), "internal");
	CHECK_EQ_STR(err_name(LL_ETOOBIG), "too_large");
}

/* err_set's arguments may include err_message()'s own buffer. */
static void test_message_wraps_itself(void)
{
	err_set(LL_EFORMAT, "unexpected '}' at 12");
	err_set(LL_EFORMAT, "job.json is not a JSON object: %s", err_message(LL_EFORMAT));
	CHECK_EQ_STR(err_message(LL_EFORMAT), "job.json is not a JSON object: unexpected '}' at 12");
}

/* A message longer than the buffer is cut, not overrun. */
static void test_long_message_cut(void)
{
	char big[2000];

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	err_set(LL_EINVAL, "%s", big);
	CHECK_EQ_INT(strlen(err_message(LL_EINVAL)), 511);
}

int main(void)
{
	test_stale_message_not_returned();
	test_cleared_message();
	test_latest_wins();
	test_generic_texts();
	test_message_wraps_itself();
	test_long_message_cut();
	return check_finish();
}
