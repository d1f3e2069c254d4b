/*
 * store_token_kind.c - the names of store.h's token kinds, the same for
 * every backend (REST bodies and the stored rows use them).
 */
#include "store.h"

#include "loadlab/err.h"

#include <string.h>

static const char *const token_kind_names[] = {"admin", "user", "enroll", "agent"};

const char *store_token_kind_name(enum store_token_kind kind)
{
	return token_kind_names[kind];
}

int store_token_kind_parse(const char *name, enum store_token_kind *ret_kind)
{
	for (int i = 0; i < 4; i++)
		if (strcmp(name, token_kind_names[i]) == 0) {
			*ret_kind = (enum store_token_kind)i;
			return 0;
		}
	return err_set(LL_EINVAL, "Unknown token kind '%s'.", name);
}
