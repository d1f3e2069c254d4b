/* redact.h: the passwords of database URIs and connection strings hidden,
 * from a table of the forms --db and libpq's messages take. */
#include "check.h"

#include "loadlab/redact.h"

#include <string.h>

static const struct {
	const char *text, *redacted;
} cases[] = {
	/* URIs: the user information's password */
	{"postgresql://loadlab:s3cret@db.lab:5432/loadlab", "postgresql://loadlab:***@db.lab:5432/loadlab"},
	{"postgres://u:pw@h/db", "postgres://u:***@h/db"},
	{"postgresql://:pw@h/db", "postgresql://:***@h/db"},
	{"postgresql://u:p%40ss@h", "postgresql://u:***@h"},
	{"postgresql://u:p@ss@h/db", "postgresql://u:***@h/db"},
	{"postgresql://u:p/ss@h/db", "postgresql://u:***@h/db"},
	{"postgresql://u:pw@h1:5432,h2:5433/db?pool_size=4",
	 "postgresql://u:***@h1:5432,h2:5433/db?pool_size=4"},
	{"postgresql://u:pw@[::1]:5432/db", "postgresql://u:***@[::1]:5432/db"},
	/* no password: as it is */
	{"postgresql://u@h/db", "postgresql://u@h/db"},
	{"postgresql:///loadlab?host=/tmp/pg&user=loadlab",
	 "postgresql:///loadlab?host=/tmp/pg&user=loadlab"},
	{"postgresql://h:5432/db", "postgresql://h:5432/db"},
	{"/var/lib/loadlab/loadlab.db", "/var/lib/loadlab/loadlab.db"},
	{"sqlite:/srv/x.db", "sqlite:/srv/x.db"},
	{"", ""},
	/* a URI query's password */
	{"postgresql:///db?host=/tmp&password=s3cret&user=u",
	 "postgresql:///db?host=/tmp&password=***&user=u"},
	{"postgresql://h/db?password=s3cret", "postgresql://h/db?password=***"},
	{"postgresql://h/db?sslpassword=k3y#x", "postgresql://h/db?sslpassword=***#x"},
	{"postgresql://u:a@h/db?password=b", "postgresql://u:***@h/db?password=***"},
	/* keyword/value connection strings */
	{"host=db user=u password=s3cret dbname=x", "host=db user=u password=*** dbname=x"},
	{"password = s3cret dbname=x", "password = *** dbname=x"},
	{"host=db password='se cr\\'et' dbname=x", "host=db password=*** dbname=x"},
	{"PASSWORD=s3cret", "PASSWORD=***"},
	{"password=a&b\\ c port=1", "password=*** port=1"},
	{"sslpassword=k3y host=h", "sslpassword=*** host=h"},
	{"password", "password"},
	{"the password is wrong", "the password is wrong"},
	/* inside a message (libpq quotes the URI it cannot parse) */
	{"invalid URI: \"postgresql://u:s3cret@[::1/db\"", "invalid URI: \"postgresql://u:***@[::1/db\""},
	{"started db=postgresql://u:s3cret@h/db data_dir=/x",
	 "started db=postgresql://u:***@h/db data_dir=/x"},
};

int main(void)
{
	char out[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		redact_secrets(cases[i].text, out, sizeof(out));
		if (strcmp(out, cases[i].redacted) != 0)
			printf("  case %zu: '%s' -> '%s'\n", i, cases[i].text, out);
		CHECK_EQ_STR(out, cases[i].redacted);
		CHECK(strstr(out, "s3cret") == NULL);
	}
	/* a message quoting a piece of the connection string alone */
	{
		const char *uri = "postgresql:///db?host=/tmp&password=s3cret%&user=u";
		CHECK_EQ_STR(redact_secrets_of("invalid percent-encoded token: \"s3cret%\"", uri, out,
					       sizeof(out)),
			     "invalid percent-encoded token: \"***\"");
		CHECK_EQ_STR(
			redact_secrets_of("bad \"s3cr\" and s3cret", "password='s3cret'", out, sizeof(out)),
			"bad \"s3cr\" and ***");
		/* a password shorter than REDACT_KNOWN_MIN is not looked for by value */
		CHECK_EQ_STR(redact_secrets_of("abc: ab", "postgresql://u:ab@h", out, sizeof(out)),
			     "abc: ab");
		CHECK_EQ_STR(redact_secrets_of("x", NULL, out, sizeof(out)), "x");
	}
	/* cut at SIZE - 1, always terminated; NULL is "" */
	CHECK_EQ_STR(redact_secrets("postgresql://u:s3cret@h/db", out, 18), "postgresql://u:**");
	CHECK_EQ_STR(redact_secrets("abc", out, 1), "");
	CHECK_EQ_STR(redact_secrets(NULL, out, sizeof(out)), "");
	return check_finish();
}
