/* job_spec_program.c: a program job's section (files, exe, builds, the
 * ELF format), its variants and the job's shape. */
#include "check.h"
#include "common/job_spec_text.h"
#include "loadlab/err.h"
#include "loadlab/job_spec.h"
#include "loadlab/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A blob reference of the right shape. */
#define REF "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

/* A program job whose section is PROGRAM (JSON text); 0 or the code of
 * job_spec_normalize(), the normalized spec in *RET (may be NULL). */
static int program_section_job(const char *program, cJSON **ret)
{
	char text[21000];
	cJSON *job, *n = NULL;
	int rc;

	snprintf(text, sizeof(text),
		 "{\"name\":\"p\",\"family\":\"program\",\"program\":%s,"
		 "\"variants\":[\"as-built\",\"rebase\",\"bind\",\"aslr-off\"]}",
		 program);
	job = parse(text);
	rc = job_spec_normalize(job, &n);
	cJSON_Delete(job);
	if (ret)
		*ret = n;
	else
		cJSON_Delete(n);
	return rc;
}

/* A program job with FILES_JSON (an object's members) and EXE; 0 or the
 * code of job_spec_normalize(); the normalized spec in *RET (may be NULL). */
static int program_job(const char *files_json, const char *exe, const char *extra, cJSON **ret)
{
	char program[20000];

	snprintf(program, sizeof(program), "{\"files\":{%s},\"exe\":\"%s\"%s}", files_json, exe,
		 extra ? extra : "");
	return program_section_job(program, ret);
}

static void test_program_paths(void)
{
	static const char *const good[] = {
		"app.exe",   "bin/app.exe", "bin/plugins/x.dll", "Data/é.txt", "console/x", "conx.dll",
		"com10.dll", "lpt.dll",     ".hidden",           "a..b",       "bin/..x",
	};
	static const struct {
		const char *path, *rule;
	} bad[] = {
		{"", "empty"},
		{"/etc/passwd", "relative"},
		{"\\\\server\\share\\x", "relative"},
		{"\\x", "relative"},
		{"bin\\x.dll", "backslash"},
		{"C:/x.dll", "':'"},
		{"c:x", "':'"},
		{"x.dll:stream", "':'"},
		{"..", "'..'"},
		{"../x", "'..'"},
		{"bin/../x", "'..'"},
		{"./x", "'.'"},
		{"bin/.", "'.'"},
		{"bin//x", "empty component"},
		{"bin/", "empty component"},
		{"CON", "device"},
		{"con", "device"},
		{"Nul.txt", "device"},
		{"bin/aux.tar.gz", "device"},
		{"COM1", "device"},
		{"com9.dll", "device"},
		{"LPT1", "device"},
		{"lpt9.x", "device"},
		{"PRN", "device"},
		{"AUX .dll", "device"},
		{"CONIN$", "device"},
		{"conout$.x", "device"},
		{"clock$", "device"},
		{"COM\xc2\xb9", "device"},
		{"con.d/x", "device"},
		{"x.", "dot or a space"},
		{"x ", "dot or a space"},
		{"bin./x", "dot or a space"},
		{"a\x01"
		 "b",
		 "control"},
		{"a\x7f", "control"},
		{"a\tb", "control"},
		{"a*b", "forbids"},
		{"a?b", "forbids"},
		{"a<b", "forbids"},
		{"a|b", "forbids"},
		{"a\"b", "forbids"},
	};
	char longest[262];
	const char *rule;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		CHECK_EQ_INT(job_spec_program_path_check(good[i], NULL), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		rule = NULL;
		CHECK_EQ_INT(job_spec_program_path_check(bad[i].path, &rule), LL_EINVAL);
		CHECK(rule && strstr(rule, bad[i].rule));
		CHECK(strstr(err_message(LL_EINVAL), "is refused"));
	}
	memset(longest, 'a', 260);
	longest[260] = '\0';
	CHECK_EQ_INT(job_spec_program_path_check(longest, NULL), 0);
	longest[260] = 'a';
	longest[261] = '\0';
	CHECK_EQ_INT(job_spec_program_path_check(longest, &rule), LL_EINVAL);
	CHECK(strstr(rule, "260"));

	CHECK(job_spec_blob_ref_valid(REF, NULL));
	CHECK(!job_spec_blob_ref_valid(
		"sha256:0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef", NULL));
	CHECK(!job_spec_blob_ref_valid(
		"sha1:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", NULL));
	CHECK(!job_spec_blob_ref_valid("sha256:0123", NULL));
}

/* Several builds in one job (program.builds): 2..4, labelled, each its
 * own files and exe; job_spec_program_build() walks them. */
static void test_program_builds(void)
{
#define BUILD(label, exe) "{\"label\":\"" label "\",\"files\":{\"" exe "\":\"" REF "\"},\"exe\":\"" exe "\"}"
	cJSON *n = NULL;
	const char *label = NULL;
	const cJSON *program, *b;

	CHECK_EQ_INT(program_section_job("{\"builds\":[" BUILD("base", "a.exe") "," BUILD(
						 "candidate", "b/c.exe") "],\"args\":[\"-x\"]}",
					 &n),
		     0);
	program = cJSON_GetObjectItem(n, "program");
	CHECK(!cJSON_GetObjectItem(program, "files") && !cJSON_GetObjectItem(program, "exe"));
	CHECK((b = job_spec_program_build(program, 0, &label)) && label && strcmp(label, "base") == 0);
	CHECK((b = job_spec_program_build(program, 1, &label)) && strcmp(label, "candidate") == 0);
	CHECK_EQ_STR(cJSON_GetObjectItem(b, "exe")->valuestring, "b/c.exe");
	CHECK(job_spec_program_build(program, 2, NULL) == NULL);
	CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItem(program, "args")), 1);
	cJSON_Delete(n);
	/* a one-build section is its own build 0, without a label */
	CHECK_EQ_INT(program_section_job("{\"files\":{\"a.exe\":\"" REF "\"},\"exe\":\"a.exe\"}", &n), 0);
	program = cJSON_GetObjectItem(n, "program");
	label = "x";
	CHECK(job_spec_program_build(program, 0, &label) == program && label == NULL);
	CHECK(job_spec_program_build(program, 1, NULL) == NULL);
	cJSON_Delete(n);
	/* refused */
	CHECK_EQ_INT(program_section_job("{\"builds\":[" BUILD("base", "a.exe") "]}", NULL), LL_ERANGE);
	CHECK_EQ_INT(program_section_job(
			     "{\"builds\":[" BUILD("a", "a.exe") "," BUILD("b", "a.exe") "," BUILD(
				     "c", "a.exe") "," BUILD("d", "a.exe") "," BUILD("e", "a.exe") "]}",
			     NULL),
		     LL_ERANGE);
	CHECK_EQ_INT(
		program_section_job("{\"builds\":[" BUILD("a", "a.exe") "," BUILD("a", "a.exe") "]}", NULL),
		LL_EINVAL);
	CHECK_EQ_INT(
		program_section_job("{\"builds\":[" BUILD("A", "a.exe") "," BUILD("b", "a.exe") "]}", NULL),
		LL_EINVAL);
	CHECK_EQ_INT(program_section_job("{\"builds\":[" BUILD("a", "a.exe") "," BUILD(
						 "b", "a.exe") "],\"exe\":\"a.exe\"}",
					 NULL),
		     LL_EINVAL);
	CHECK_EQ_INT(program_section_job("{\"builds\":[" BUILD(
						 "a", "a.exe") ",{\"label\":\"b\",\"files\":{\"a.exe\":\"" REF
							       "\"},\"exe\":\"b.exe\"}]}",
					 NULL),
		     LL_EINVAL);
#undef BUILD
}

static void test_program_section(void)
{
	cJSON *n = NULL, *program, *v;

	CHECK_EQ_INT(program_job("\"bin/app.exe\":\"" REF "\",\"bin/core.dll\":\"" REF "\"", "bin/app.exe",
				 NULL, &n),
		     0);
	program = cJSON_GetObjectItem(n, "program");
	CHECK(program && !cJSON_GetObjectItem(n, "generator"));
	CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItem(program, "files")), 2);
	CHECK_EQ_STR(cJSON_GetObjectItem(program, "until")->valuestring, "exit");
	CHECK_EQ_INT(cJSON_GetObjectItem(program, "timeout_s")->valueint, 60);
	CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItem(program, "args")), 0);
	v = cJSON_GetObjectItem(n, "variants");
	CHECK_EQ_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(v, 0), "bases")->valuestring, "as-built");
	CHECK_EQ_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(v, 1), "aslr")->valuestring, "off");
	CHECK(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(v, 2), "bind")));
	CHECK_EQ_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(v, 3), "bases")->valuestring, "as-built");
	CHECK_EQ_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(v, 3), "aslr")->valuestring, "off");
	{ /* normalizing twice changes nothing */
		cJSON *again = NULL;
		CHECK_EQ_INT(job_spec_normalize(n, &again), 0);
		CHECK(cJSON_Compare(n, again, true));
		cJSON_Delete(again);
	}
	cJSON_Delete(n);

	/* exe: one of the files, ending in .exe in any case */
	CHECK_EQ_INT(program_job("\"A.EXE\":\"" REF "\"", "A.EXE", NULL, NULL), 0);
	CHECK_EQ_INT(program_job("\"a.exe\":\"" REF "\"", "b.exe", NULL, NULL), LL_EINVAL);
	CHECK_EQ_INT(program_job("\"a.dll\":\"" REF "\"", "a.dll", NULL, NULL), LL_EINVAL);
	CHECK_EQ_INT(program_job("\"a.exe\":\"" REF "\"", "A.exe", NULL, NULL), LL_EINVAL);
	/* collisions: case, duplicates, a file used as a folder */
	CHECK_EQ_INT(program_job("\"a.exe\":\"" REF "\",\"A.exe\":\"" REF "\"", "a.exe", NULL, NULL),
		     LL_EINVAL);
	CHECK(strstr(err_message(LL_EINVAL), "only in case"));
	{ /* the same path twice: the JSON parser refuses duplicate members */
		const char *dup = "{\"a.exe\":1,\"a.exe\":2}";
		cJSON *root = NULL;
		CHECK(json_parse(dup, strlen(dup), 0, &root) < 0);
		cJSON_Delete(root);
	}
	CHECK_EQ_INT(program_job("\"bin/a.exe\":\"" REF "\",\"BIN\":\"" REF "\"", "bin/a.exe", NULL, NULL),
		     LL_EINVAL);
	CHECK(strstr(err_message(LL_EINVAL), "as a folder"));
	CHECK_EQ_INT(program_job("\"bin/a.exe\":\"" REF "\",\"bin2\":\"" REF "\",\"bin-x/y\":\"" REF "\"",
				 "bin/a.exe", NULL, NULL),
		     0);
	/* a bad path is named */
	CHECK_EQ_INT(program_job("\"a.exe\":\"" REF "\",\"../x.dll\":\"" REF "\"", "a.exe", NULL, NULL),
		     LL_EINVAL);
	CHECK(strstr(err_message(LL_EINVAL), "'../x.dll'"));
	/* blob references */
	CHECK_EQ_INT(program_job("\"a.exe\":\"sha256:00\"", "a.exe", NULL, NULL), LL_EINVAL);
	CHECK_EQ_INT(program_job("\"a.exe\":5", "a.exe", NULL, NULL), LL_EINVAL);
	/* no files; the other fields */
	CHECK_EQ_INT(program_job("", "a.exe", NULL, NULL), LL_ERANGE);
	CHECK_EQ_INT(program_job("\"a.exe\":\"" REF "\"", "a.exe",
				 ",\"until\":\"input-idle\",\"timeout_s\":3600,"
				 "\"args\":[\"--selftest\",\"x y\"]",
				 NULL),
		     0);
	CHECK_EQ_INT(program_job("\"a.exe\":\"" REF "\"", "a.exe", ",\"until\":\"never\"", NULL), LL_EINVAL);
	CHECK_EQ_INT(program_job("\"a.exe\":\"" REF "\"", "a.exe", ",\"timeout_s\":0", NULL), LL_ERANGE);
	CHECK_EQ_INT(program_job("\"a.exe\":\"" REF "\"", "a.exe", ",\"timeout_s\":3601", NULL), LL_ERANGE);
	CHECK_EQ_INT(program_job("\"a.exe\":\"" REF "\"", "a.exe", ",\"args\":[1]", NULL), LL_EINVAL);
	CHECK_EQ_INT(program_job("\"a.exe\":\"" REF "\"", "a.exe", ",\"args\":[\"a\\nb\"]", NULL), LL_EINVAL);
	CHECK_EQ_INT(program_job("\"a.exe\":\"" REF "\"", "a.exe", ",\"dir\":\"build\"", NULL), LL_EINVAL);
	{ /* args bounded in count and bytes */
		char extra[16000];
		size_t used = (size_t)snprintf(extra, sizeof(extra), ",\"args\":[");
		for (int i = 0; i < 65; i++)
			used += (size_t)snprintf(extra + used, sizeof(extra) - used, "%s\"a\"", i ? "," : "");
		snprintf(extra + used, sizeof(extra) - used, "]");
		CHECK_EQ_INT(program_job("\"a.exe\":\"" REF "\"", "a.exe", extra, NULL), LL_EINVAL);
		used = (size_t)snprintf(extra, sizeof(extra), ",\"args\":[\"");
		memset(extra + used, 'x', 8200);
		snprintf(extra + used + 8200, sizeof(extra) - used - 8200, "\"]");
		CHECK_EQ_INT(program_job("\"a.exe\":\"" REF "\"", "a.exe", extra, NULL), LL_ERANGE);
	}
}

static void test_program_job_shape(void)
{
	static const char *const refused[] = {
		/* pe variants, a generator, churn, a missing section */
		"{\"name\":\"p\",\"family\":\"program\",\"program\":{\"files\":{\"a.exe\":\"" REF "\"},"
		"\"exe\":\"a.exe\"},\"variants\":[\"default\"]}",
		"{\"name\":\"p\",\"family\":\"program\",\"program\":{\"files\":{\"a.exe\":\"" REF "\"},"
		"\"exe\":\"a.exe\"},\"variants\":[{\"name\":\"x\"}]}",
		"{\"name\":\"p\",\"family\":\"program\",\"generator\":{\"dlls\":1,\"exports\":1},"
		"\"program\":{\"files\":{\"a.exe\":\"" REF
		"\"},\"exe\":\"a.exe\"},\"variants\":[\"rebase\"]}",
		"{\"name\":\"p\",\"family\":\"program\",\"program\":{\"files\":{\"a.exe\":\"" REF "\"},"
		"\"exe\":\"a.exe\"},\"variants\":[\"rebase\"],\"measure\":{\"churn\":{}}}",
		"{\"name\":\"p\",\"family\":\"program\",\"variants\":[\"rebase\"]}",
		"{\"name\":\"p\",\"family\":\"pe\",\"generator\":{\"dlls\":1,\"exports\":1},"
		"\"program\":{\"files\":{\"a.exe\":\"" REF
		"\"},\"exe\":\"a.exe\"},\"variants\":[\"rebase\"]}",
	};
	char many[JOB_SPEC_MAX_PROGRAM_FILES * 90 + 64];
	size_t used = 0;

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		cJSON *job = parse(refused[i]), *n = NULL;
		CHECK(job_spec_normalize(job, &n) < 0);
		CHECK(n == NULL);
		cJSON_Delete(job);
	}
	for (int i = 0; i < JOB_SPEC_MAX_PROGRAM_FILES + 1; i++)
		used += (size_t)snprintf(many + used, sizeof(many) - used, "%s\"f%d.exe\":\"" REF "\"",
					 i ? "," : "", i);
	{
		char *text = malloc(used + 512);
		cJSON *job, *n = NULL;
		snprintf(text, used + 512,
			 "{\"name\":\"p\",\"family\":\"program\",\"program\":{\"files\":{%s},"
			 "\"exe\":\"f0.exe\"},\"variants\":[\"rebase\"]}",
			 many);
		job = parse(text);
		CHECK_EQ_INT(job_spec_normalize(job, &n), LL_ERANGE);
		cJSON_Delete(job);
		free(text);
	}
}

/* An ELF program (docs/program-elf.md): "format" "elf", no .exe, its own
 * presets and "idle"; normalizing the normalized spec gives it again. */
static void test_program_elf(void)
{
	static const char *const refused[] = {
		"\"format\":\"elf\",\"until\":\"input-idle\"},\"variants\":[\"as-built\"]}",
		"\"format\":\"elf\"},\"variants\":[\"rebase\"]}",
		"\"format\":\"macho\"},\"variants\":[\"as-built\"]}",
		"\"format\":\"elf\"},\"variants\":[{\"name\":\"bind-now\",\"bind_now\":false,\"pagein\":"
		"false}]}",
		"\"until\":\"idle\"},\"variants\":[\"as-built\"]}",
		"},\"variants\":[\"as-built\"]}", /* no .exe and no format */
	};
	char text[1024];
	cJSON *job, *n = NULL, *again = NULL;

	snprintf(text, sizeof(text),
		 "{\"name\":\"e\",\"family\":\"program\",\"program\":{\"files\":{\"bin/app\":\"" REF
		 "\",\"bin/lib/liba.so.1\":\"" REF
		 "\"},\"exe\":\"bin/app\",\"format\":\"elf\",\"until\":\"idle\"},"
		 "\"variants\":[\"as-built\",\"bind-now\",\"pagein\"]}");
	CHECK_EQ_INT(normalize_text(text, &n), 0);
	CHECK(job_spec_program_is_elf(cJSON_GetObjectItemCaseSensitive(n, "program")));
	CHECK_EQ_STR(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(n, "program"), "until")
			     ->valuestring,
		     "idle");
	{
		const cJSON *v = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(n, "variants"), 2);
		CHECK(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "pagein")));
		CHECK(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(v, "bind_now")));
	}
	CHECK_EQ_INT(job_spec_normalize(n, &again), 0);
	CHECK(cJSON_Compare(n, again, true));
	cJSON_Delete(again);
	/* Linux agents only: a matrix without "os" gets os [linux] */
	{
		char *m = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(n, "matrix"));
		CHECK_EQ_STR(m, "{\"cells\":{\"os\":[\"linux\"]}}");
		free(m);
	}
	cJSON_Delete(n);
	/* two builds of an ELF program; a matrix naming os keeps it; each_agent
	 * gets os too; 8 keys without os have no room */
	{
		static const char *const matrices[][2] = {
			{"{\"cells\":{\"os\":[\"win10\"]}}", "{\"cells\":{\"os\":[\"win10\"]}}"},
			{"{\"each_agent\":{\"agent\":[\"a\"]}}",
			 "{\"each_agent\":{\"agent\":[\"a\"],\"os\":[\"linux\"]}}"},
			{"{\"cells\":{\"a\":[\"1\"],\"b\":[\"1\"],\"c\":[\"1\"],\"d\":[\"1\"],\"e\":[\"1\"],"
			 "\"f\":[\"1\"],\"g\":[\"1\"],\"h\":[\"1\"]}}",
			 NULL},
		};
		for (size_t i = 0; i < sizeof(matrices) / sizeof(matrices[0]); i++) {
			snprintf(text, sizeof(text),
				 "{\"name\":\"e\",\"family\":\"program\",\"program\":{\"builds\":["
				 "{\"label\":\"base\",\"files\":{\"app\":\"" REF "\"},\"exe\":\"app\"},"
				 "{\"label\":\"candidate\",\"files\":{\"app\":\"" REF "\"},\"exe\":\"app\"}],"
				 "\"format\":\"elf\"},\"variants\":[\"as-built\"],\"matrix\":%s}",
				 matrices[i][0]);
			n = NULL;
			if (!matrices[i][1]) {
				CHECK_EQ_INT(normalize_text(text, &n), LL_ERANGE);
				CHECK(strstr(err_message(LL_ERANGE), "at most 7 keys") != NULL);
				continue;
			}
			CHECK_EQ_INT(normalize_text(text, &n), 0);
			char *m = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(n, "matrix"));
			CHECK_EQ_STR(m, matrices[i][1]);
			free(m);
			CHECK(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(
				      cJSON_GetObjectItemCaseSensitive(n, "program"), "builds")) == 2);
			again = NULL;
			CHECK_EQ_INT(job_spec_normalize(n, &again), 0);
			CHECK(cJSON_Compare(n, again, true));
			cJSON_Delete(again);
			cJSON_Delete(n);
		}
	}
	/* a PE program keeps no "format" */
	CHECK_EQ_INT(program_job("\"a.exe\":\"" REF "\"", "a.exe", ",\"format\":\"pe\"", &n), 0);
	CHECK(!cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(n, "program"), "format"));
	cJSON_Delete(n);
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		snprintf(text, sizeof(text),
			 "{\"name\":\"e\",\"family\":\"program\",\"program\":{\"files\":{\"app\":\"" REF
			 "\"},\"exe\":\"app\"%s%s",
			 refused[i][0] == '}' ? "" : ",", refused[i]);
		job = parse(text);
		n = NULL;
		CHECK(job_spec_normalize(job, &n) < 0);
		CHECK(n == NULL);
		cJSON_Delete(job);
	}
}

int main(void)
{
	test_program_paths();
	test_program_section();
	test_program_builds();
	test_program_job_shape();
	test_program_elf();
	return check_finish();
}
