/*
 * fuzz_watchlog.c - the event log reader under arbitrary input.
 *
 * Input: byte 0 chooses the limit on a record's size (small limits reach the over-long
 * paths); the rest is the log. Invariants checked:
 * - every call returns an event, a bad record with a message "LOG:LINE: ...", or the
 *   end, and the end comes (each call consumes input);
 * - an event has a resource, an object with a string metadata.uid, and a line; lines
 *   and times never go back;
 * - a bad record's line is never beyond the log's last line + 1.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "resource.h"
#include "watchlog.h"
#include "json.h"

/* The libFuzzer entry point. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct watchlog *log;
	struct watchlog_event ev;
	FILE *f;
	char *error = NULL;
	unsigned long lines = 1, last_line = 0, line;
	double last_time = 0;
	size_t calls = 0;
	int r;

	if (size < 1)
		return 0;
	/* fmemopen wants at least one byte: an empty log is read from /dev/null. */
	f = size > 1 ? fmemopen((void *)(data + 1), size - 1, "r") : fopen("/dev/null", "r");
	if (f == NULL)
		return 0;
	for (size_t i = 1; i < size; i++)
		lines += data[i] == '\n';
	log = watchlog_new(f, "LOG");
	if (data[0] & 0x80)
		watchlog_set_max_record(log, (size_t)(data[0] & 0x7f) * 8 + 1);
	while ((r = watchlog_next(log, &ev, &error)) != 0) {
		if (++calls > size + 2)
			abort();	/* a call that consumed nothing */
		if (r < 0) {
			if (error == NULL || strncmp(error, "LOG:", 4) != 0)
				abort();
			line = strtoul(error + 4, NULL, 10);
			if (line == 0 || line > lines + 1)
				abort();
			free(error);
			error = NULL;
			continue;
		}
		if (r != 1 || error != NULL || ev.resource == NULL || ev.object == NULL ||
		    !cJSON_IsString(json_path(ev.object, "metadata.uid")))
			abort();
		if (ev.line == 0 || ev.line < last_line || ev.line > lines || ev.time < last_time)
			abort();
		last_line = ev.line;
		last_time = ev.time;
		watchlog_event_clear(&ev);
	}
	if (error != NULL)
		abort();
	watchlog_free(log);
	fclose(f);
	/* The resources "metadataOf" records registered, each input afresh. */
	resource_metadata_free_all();
	return 0;
}
