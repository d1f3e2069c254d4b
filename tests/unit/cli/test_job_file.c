/* A job file's syntax mistakes named where they could first have been known
 * (cli/job_file.h, cli/job_file_scan.h): a removed '}' at the line where the
 * object was meant to close, not lines below at the end of the file; an
 * early end of the file as such; each message one line; the tree untouched
 * on failure; and the places cJSON gives kept where they are right. */
#include "check.h"
#include "job_file.h"
#include "job_file_scan.h"

#include "loadlab/err.h"

#include <cjson/cJSON.h>
#include <string.h>

/* The message job_file_parse() gives for TEXT in "job.json" ("" when parsed). */
static const char *message_of(const char *text)
{
	static char copy[1024];
	cJSON *root = (cJSON *)1;
	int rc = job_file_parse("job.json", text, strlen(text), &root);

	if (rc == 0) {
		cJSON_Delete(root);
		return "";
	}
	CHECK(root == (cJSON *)1); /* untouched on failure */
	snprintf(copy, sizeof(copy), "%s", err_message(rc));
	return copy;
}

/* quickstart.json as it ships, and with one change. */
static const char quickstart[] =
	"{\n"
	"  \"name\": \"quickstart\",\n"
	"  \"family\": \"pe\",\n"
	"  \"generator\": {\"dlls\": 10, \"exports\": 100, \"globals_per_function\": 5},\n"
	"  \"variants\": [\"default\", \"rebase\", \"bind\"],\n"
	"  \"measure\": {\"warm\": {\"runs\": 30, \"warmup\": 3}},\n"
	"  \"matrix\": {\"cells\": {\"runner\": [\"wine\"]}}\n"
	"}\n";

static const char *quickstart_with(const char *from, const char *to)
{
	static char text[2048];
	const char *at = strstr(quickstart, from);

	CHECK(at != NULL);
	snprintf(text, sizeof(text), "%.*s%s%s", (int)(at - quickstart), quickstart, to, at + strlen(from));
	return text;
}

int main(void)
{
	char message[JOB_FILE_SCAN_MESSAGE_SIZE] = "";
	size_t offset = 0;

	CHECK_EQ_STR(message_of(quickstart), "");
	CHECK_EQ_INT(job_file_scan(quickstart, strlen(quickstart), message, &offset), 0);

	/* The case: the '}' closing "generator" removed. Every line
	 * after it is a member of "generator" as JSON goes, and cJSON stops at
	 * the end of the file; the next member at the indentation of the line
	 * that opened "generator" is where it was meant to close. */
	CHECK_EQ_STR(message_of(quickstart_with("globals_per_function\": 5},", "globals_per_function\": 5,")),
		     "job.json:5:3: '}' expected to close 'generator' opened at line 4, at '\"variants\": "
		     "[\"de'.");
	/* written over several lines */
	CHECK_EQ_STR(message_of("{\n"
				"  \"name\": \"x\",\n"
				"  \"generator\": {\n"
				"    \"dlls\": 10,\n"
				"    \"exports\": 100\n"
				"  \"variants\": [\"default\"]\n"
				"}\n"),
		     "job.json:6:3: '}' expected to close 'generator' opened at line 3, at '\"variants\": "
		     "[\"de'.");
	/* a ']' removed: the next member closes the object instead */
	CHECK_EQ_STR(
		message_of(quickstart_with("\"bind\"],", "\"bind\",")),
		"job.json:6:3: ']' expected to close 'variants' opened at line 5, at '\"measure\": {\"war'.");
	/* the other bracket's close with no better place known */
	CHECK_EQ_STR(message_of("{\"variants\": [\"default\"}"),
		     "job.json:1:24: ']' expected to close 'variants' opened at line 1, at '}'.");

	/* An early end of the file, said as such. */
	CHECK_EQ_STR(
		message_of("{\n  \"name\": \"x\",\n  \"variants\": [\"default\"]\n"),
		"job.json: the file ends early: '}' expected to close the job's object opened at line 1.");
	CHECK_EQ_STR(message_of("{\n  \"measure\": {\"warm\": {\"runs\": 30}\n"),
		     "job.json: the file ends early: '}' expected to close 'measure' opened at line 2.");
	CHECK_EQ_STR(message_of("{\n  \"name\": \"quick\n"),
		     "job.json: the file ends inside a string that starts at line 2.");

	/* What was expected, at the mistake's line. */
	CHECK_EQ_STR(message_of("{\n  \"name\" \"x\"\n}"),
		     "job.json:2:10: ':' expected after the key 'name', at '\"x\"'.");
	CHECK_EQ_STR(message_of("{\n  \"generator\": {\"dlls\": }\n}"),
		     "job.json:2:25: a value expected after 'dlls', at '}'.");
	CHECK_EQ_STR(message_of("{\"measure\": {\"warm\": {}} \"x\": 1}"),
		     "job.json:1:26: ',' or '}' expected after the value of 'measure', at '\"x\": 1}'.");
	CHECK_EQ_STR(message_of("{\"variants\": [\"a\" \"b\"]}"),
		     "job.json:1:19: ',' or ']' expected after an item of 'variants', at '\"b\"]}'.");
	CHECK_EQ_STR(message_of("{\"variants\": [\"a\",]}"),
		     "job.json:1:19: a value expected after ',' (no ',' before ']'), at ']}'.");
	CHECK_EQ_STR(message_of("{\"name\": 1 }}"), "job.json:1:13: more after the JSON value, at '}'.");
	/* Brackets inside strings are text, and escaped quotes do not end them. */
	CHECK_EQ_STR(message_of("{\"name\": \"a } \\\" ] {\", \"x\": [1, {\"y\": null}]}"), "");
	/* An unindented file is no mistake, nor are members left of their
	 * bracket when the brackets are right. */
	CHECK_EQ_STR(message_of("{\n\"generator\": {\n\"dlls\": 1\n},\n\"name\": \"x\"\n}\n"), "");

	/* A trailing comma; and a mistake the scan does not look at keeps cJSON's place. */
	CHECK_EQ_STR(message_of("{\n  \"name\": \"x\",\n}\n"),
		     "job.json:3:1: a key expected after ',' (no ',' before '}'), at '}'.");
	CHECK_EQ_STR(message_of("{\"name\": \"caf\xc3\xa9\", \"ok\": tru}"),
		     "job.json:1:24: not valid JSON, at 'tru}'.");
	return check_finish();
}
