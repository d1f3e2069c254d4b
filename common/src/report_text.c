#include "loadlab/report_text.h"

#include <string.h>

void report_text_duration(struct buf *out, double us, const char *micro)
{
	if (us >= 10000)
		buf_printf(out, "%.2f ms", us / 1000);
	else
		buf_printf(out, "%.1f %s", us, micro);
}

bool report_text_failed_cell(struct buf *out, const cJSON *cell, const char *no_status,
			     void (*escape)(struct buf *out, const char *text))
{
	const cJSON *status = cJSON_GetObjectItemCaseSensitive(cell, "status");
	const cJSON *reason = cJSON_GetObjectItemCaseSensitive(cell, "reason");
	const char *reason_text = cJSON_IsString(reason) ? reason->valuestring : "";

	if (cJSON_IsString(status) && strcmp(status->valuestring, "ok") == 0)
		return false;
	buf_printf(out, "%s: ", cJSON_IsString(status) ? status->valuestring : no_status);
	if (escape)
		escape(out, reason_text);
	else
		buf_append_str(out, reason_text);
	return true;
}
