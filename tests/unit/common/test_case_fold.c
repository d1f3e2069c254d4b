/* case_fold.c: names folded as Windows compares them, beyond ASCII. */
#include "check.h"

#include "loadlab/case_fold.h"

static const char *fold(const char *text)
{
	static char out[256];

	case_fold_utf8(text, out);
	return out;
}

int main(void)
{
	/* ASCII, Latin-1, Latin Extended-A, Greek, Cyrillic, Armenian, fullwidth. */
	CHECK_EQ_STR(fold("BIN/App.EXE"), "bin/app.exe");
	CHECK_EQ_STR(fold("\xc3\x84.dll"), "\xc3\xa4.dll");                         /* Ä -> ä */
	CHECK_EQ_STR(fold("\xc3\x96\xc3\x9c\xc3\x98"), "\xc3\xb6\xc3\xbc\xc3\xb8"); /* ÖÜØ */
	CHECK_EQ_STR(fold("\xc3\x97"), "\xc3\x97");                                 /* × has no case */
	CHECK_EQ_STR(fold("\xc5\x81\xc3\xb3"
			  "d\xc5\xba"),
		     "\xc5\x82\xc3\xb3"
		     "d\xc5\xba");                                                  /* Łódź */
	CHECK_EQ_STR(fold("\xc5\xbb"), "\xc5\xbc");                                 /* Ż -> ż (odd pair) */
	CHECK_EQ_STR(fold("\xce\xa3\xce\xbf\xcf\x82"), "\xcf\x83\xce\xbf\xcf\x83"); /* Σος -> σοσ */
	CHECK_EQ_STR(fold("\xd0\x9c\xd0\x81"), "\xd0\xbc\xd1\x91");                 /* МЁ -> мё */
	CHECK_EQ_STR(fold("\xd4\xb1"), "\xd5\xa1");                                 /* Armenian Ա -> ա */
	CHECK_EQ_STR(fold("\xef\xbc\xa1"), "\xef\xbd\x81");                         /* fullwidth A */
	CHECK_EQ_STR(fold("\xe2\x84\xaa"), "k");                                    /* Kelvin sign */
	CHECK_EQ_STR(fold("\xc5\xbf"), "s");                                        /* long s */
	/* Lower case and what has no case stay; broken UTF-8 is copied. */
	CHECK_EQ_STR(fold("\xc3\xa4\xe4\xb8\xad"), "\xc3\xa4\xe4\xb8\xad");
	CHECK_EQ_STR(fold("a\xc3(b"), "a\xc3(b");
	CHECK(case_fold_char(0x0100) == 0x0101 && case_fold_char(0x0101) == 0x0101);
	CHECK(case_fold_char(0x0178) == 0x00FF);
	CHECK(case_fold_char(0x1F600) == 0x1F600);
	return check_finish();
}
