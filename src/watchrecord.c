/*
 * watchrecord.c - `sqlkcm run --record FILE`: every applied event as one JSON line.
 *
 * A record is {"time":"RFC 3339 with microseconds","resource":"pods","type":"ADDED",
 * "object":{...}} on one line, with type one of ADDED, MODIFIED, DELETED (the watch
 * vocabulary, for list items and relist removals too) and the object as the store holds
 * it (no managedFields). A resource cached by its metadata (one discovery found) is named
 * by "metadataOf":{"resource","apiVersion","kind","namespaced"} instead of "resource",
 * its object a PartialObjectMetadata. It is written after the change committed, so the log never holds
 * an event the cache did not apply, in the order the cache applied them: `sqlkcm replay`
 * reads it back. Lines are buffered and flushed at the end of every committed batch.
 *
 * Every record of one committed batch carries the same time, taken when its first record
 * is written, and each batch's time is later than the one before (by a microsecond if the
 * clock did not move or went back): so the batch boundaries, which replay runs the
 * controllers at, are visible in the log as changes of time. Logs written before this
 * (one time per record) read back as batches of one record.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "watchrecord.h"
#include "util.h"

struct watchrecord {
	char *path;
	FILE *file;
	int failed;	/* a write failed; logged once until a write succeeds */
	long long last_usec;	/* the previous batch's time, in microseconds */
	char when[64];	/* the current batch's time; "" between batches */
};

/* Opens path for appending, creating it 0600. */
static FILE *
watchrecord_open_file(const char *path, char **error)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	FILE *f;

	if (fd < 0) {
		error_set(error, "cannot open the record file %s: %s", path, strerror(errno));
		return NULL;
	}
	f = fdopen(fd, "a");
	if (f == NULL) {
		error_set(error, "cannot open the record file %s: %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	setvbuf(f, NULL, _IOFBF, 1 << 16);
	return f;
}

struct watchrecord *
watchrecord_open(const char *path, char **error)
{
	FILE *f = watchrecord_open_file(path, error);
	struct watchrecord *rec;

	if (f == NULL)
		return NULL;
	rec = xcalloc(1, sizeof *rec);
	rec->path = xstrdup(path);
	rec->file = f;
	return rec;
}

void
watchrecord_close(struct watchrecord *rec)
{
	if (rec == NULL)
		return;
	if (rec->file != NULL && fclose(rec->file) != 0)
		log_error("recorder: closing %s: %s", rec->path, strerror(errno));
	free(rec->path);
	free(rec);
}

int
watchrecord_reopen(struct watchrecord *rec, char **error)
{
	FILE *f = watchrecord_open_file(rec->path, error);

	if (f == NULL)
		return -1;
	if (rec->file != NULL)
		fclose(rec->file);
	rec->file = f;
	return 0;
}

/* Sets the current batch's time: now, or just after the previous batch's. */
static void
watchrecord_batch_time(struct watchrecord *rec)
{
	struct timeval tv;
	struct tm tm;
	long long usec;
	time_t sec;

	gettimeofday(&tv, NULL);
	usec = (long long)tv.tv_sec * 1000000 + tv.tv_usec;
	if (usec <= rec->last_usec)
		usec = rec->last_usec + 1;
	rec->last_usec = usec;
	sec = (time_t)(usec / 1000000);
	gmtime_r(&sec, &tm);
	snprintf(rec->when, sizeof rec->when, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
	    (long long)(usec % 1000000));
}

/* Writes one record line. */
static void
watchrecord_event(const struct informer_event *ev, void *arg)
{
	static const char *const types[] = { "ADDED", "MODIFIED", "DELETED" };
	struct watchrecord *rec = arg;
	char *object = cJSON_PrintUnformatted(ev->object);
	char *api = NULL;

	if (object == NULL)
		return;
	if (ev->resource->metadata_only) {
		/* A resource discovery found: what replay needs to know it again, quoted by
		 * cJSON (its names come from the apiserver). */
		cJSON *a = cJSON_CreateObject();

		cJSON_AddStringToObject(a, "resource", ev->resource->name);
		cJSON_AddStringToObject(a, "apiVersion", ev->resource->api_version);
		cJSON_AddStringToObject(a, "kind", ev->resource->kind);
		cJSON_AddBoolToObject(a, "namespaced", ev->resource->namespaced);
		api = cJSON_PrintUnformatted(a);
		cJSON_Delete(a);
	}
	if (rec->when[0] == '\0')
		watchrecord_batch_time(rec);
	/* The built-in resources' names and the types are constants; the object is JSON
	 * already. */
	if ((api != NULL ? fprintf(rec->file, "{\"time\":\"%s\",\"metadataOf\":%s,"
	    "\"type\":\"%s\",\"object\":%s}\n", rec->when, api, types[ev->type], object) :
	    fprintf(rec->file, "{\"time\":\"%s\",\"resource\":\"%s\",\"type\":\"%s\","
	    "\"object\":%s}\n", rec->when, ev->resource->name, types[ev->type], object)) < 0 &&
	    !rec->failed) {
		log_error("recorder: writing %s: %s", rec->path, strerror(errno));
		rec->failed = 1;
	}
	cJSON_free(api);
	cJSON_free(object);
}

/* Flushes the batch's records. */
static void
watchrecord_batch_end(void *arg)
{
	struct watchrecord *rec = arg;

	rec->when[0] = '\0';
	if (fflush(rec->file) != 0) {
		if (!rec->failed)
			log_error("recorder: writing %s: %s", rec->path, strerror(errno));
		rec->failed = 1;
		clearerr(rec->file);
	} else {
		rec->failed = 0;
	}
}

struct informer_handlers
watchrecord_handlers(struct watchrecord *rec)
{
	struct informer_handlers h = { watchrecord_event, watchrecord_batch_end, rec };

	return h;
}
