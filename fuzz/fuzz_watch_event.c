/*
 * fuzz_watch_event.c - watch event parsing and API status classification on any bytes.
 *
 * The input is the text of one event (not NUL-terminated: the parser must stay within
 * it). Invariants checked:
 * - watch_event_parse either succeeds with a JSON object and a known type whose name
 *   parses back to the same type, or fails with a message and no object.
 * - api_status_from_json on the event's object, and api_status_from_response on the whole
 *   input (with a code and a Retry-After taken from the input), always fill every field:
 *   strings non-NULL, a reason in range, a delay of -1 or more; 2xx is always API_OK; a
 *   Gone reason or a 410 code always means relist.
 * - Parsing is deterministic: a second parse of the same bytes gives the same result.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "apistatus.h"
#include "util.h"
#include "watch.h"

/* Checks the fields of a filled status. */
static void
check_status(const struct api_status *st)
{
	if (st->reason_text == NULL || st->message == NULL)
		abort();
	if ((int)st->reason < API_OK || st->reason > API_UNKNOWN)
		abort();
	if (st->retry_after_seconds < -1)
		abort();
	if (api_reason_name(st->reason) == NULL)
		abort();
	if ((st->reason == API_GONE || st->http_code == 410) &&
	    !api_status_is_resource_expired(st))
		abort();
}

/* The libFuzzer entry point. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	struct watch_event ev, again;
	struct api_status st;
	char *error = NULL, *error2 = NULL, *printed, *printed2, *header;
	int r, r2, code;

	r = watch_event_parse(text, size, &ev, &error);
	r2 = watch_event_parse(text, size, &again, &error2);
	if (r != r2)
		abort();
	if (r == 0) {
		char *event;
		struct watch_event round;

		if (error != NULL || !cJSON_IsObject(ev.object) || ev.type != again.type)
			abort();
		printed = cJSON_PrintUnformatted(ev.object);
		printed2 = cJSON_PrintUnformatted(again.object);
		if (printed == NULL || printed2 == NULL || strcmp(printed, printed2) != 0)
			abort();
		/* The event rebuilt from its parts parses back to the same parts. */
		event = xasprintf("{\"type\":\"%s\",\"object\":%s}",
		    watch_event_type_name(ev.type), printed);
		if (watch_event_parse(event, strlen(event), &round, NULL) != 0 ||
		    round.type != ev.type)
			abort();
		watch_event_clear(&round);
		free(event);
		free(printed);
		free(printed2);

		api_status_from_json(ev.object, &st);
		check_status(&st);
		api_status_clear(&st);
		watch_event_clear(&ev);
		watch_event_clear(&again);
	} else {
		if (error == NULL || error2 == NULL || strcmp(error, error2) != 0)
			abort();
		if (ev.object != NULL || again.object != NULL)
			abort();
		free(error);
		free(error2);
	}

	/* The same bytes as an HTTP response body, with a code and header from the input. */
	code = size >= 2 ? (data[0] << 8 | data[1]) % 700 : 0;
	header = xstrndup(text, size < 12 ? size : 12);
	api_status_from_response(code, text, size, header, &st);
	check_status(&st);
	if (code >= 200 && code < 300 && st.reason != API_OK)
		abort();
	api_status_clear(&st);
	api_status_from_response(code, text, size, NULL, &st);
	check_status(&st);
	api_status_clear(&st);
	free(header);
	return 0;
}
