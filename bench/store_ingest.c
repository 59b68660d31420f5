/*
 * store_ingest.c - benchmark: how fast the store takes objects, the apiserver left out.
 *
 * usage: bench/store_ingest [-n COUNT] [-b BATCH] [DB]     (DB default: a temp file)
 *
 * Makes COUNT distinct pod objects in the shape kube-apiserver serves them (labels, an
 * owner reference, managedFields, status with conditions and container statuses: about
 * 2 KB of JSON each; uids in no order, as real ones are random), then times what an
 * informer's first sync does per object: store_parse_object of the item's text (the copy
 * without managedFields, parsed) and store_upsert_text, BATCH objects per transaction
 * (500: one LIST page), in a list begun on the empty table.
 * Prints objects/s for the whole path and for the store alone, the bytes per object,
 * peak RSS and the database's size. Building the texts is not timed.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "resource.h"
#include "store.h"
#include "util.h"

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One pod, as a watch event's object: realistic fields and sizes. */
static char *
pod_text(int i)
{
	return xasprintf(
	    "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"web-7d9f8c6b5-%07d\","
	    "\"generateName\":\"web-7d9f8c6b5-\",\"namespace\":\"bench-%d\",\"uid\":\"%08x-1c2d-4e5f-8a9b-%012d\","
	    "\"resourceVersion\":\"%d\",\"creationTimestamp\":\"2026-11-22T03:00:00Z\","
	    "\"labels\":{\"app\":\"web\",\"pod-template-hash\":\"7d9f8c6b5\",\"tier\":\"front\",\"shard\":\"s%d\"},"
	    "\"annotations\":{\"kubernetes.io/psp\":\"restricted\",\"prometheus.io/scrape\":\"true\"},"
	    "\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"web-7d9f8c6b5\","
	    "\"uid\":\"0a1b2c3d-0000-4000-8000-%012d\",\"controller\":true,\"blockOwnerDeletion\":true}],"
	    "\"managedFields\":[{\"manager\":\"kube-controller-manager\",\"operation\":\"Update\","
	    "\"apiVersion\":\"v1\",\"time\":\"2026-11-22T03:00:00Z\",\"fieldsType\":\"FieldsV1\","
	    "\"fieldsV1\":{\"f:metadata\":{\"f:generateName\":{},\"f:labels\":{\".\":{},\"f:app\":{},"
	    "\"f:pod-template-hash\":{}},\"f:ownerReferences\":{\".\":{},\"k:{\\\"uid\\\":\\\"0a1b\\\"}\":{}}},"
	    "\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"app\\\"}\":{\".\":{},\"f:image\":{},"
	    "\"f:name\":{},\"f:resources\":{}}}}}},{\"manager\":\"kwok\",\"operation\":\"Update\","
	    "\"apiVersion\":\"v1\",\"time\":\"2026-11-22T03:00:01Z\",\"fieldsType\":\"FieldsV1\","
	    "\"fieldsV1\":{\"f:status\":{\"f:conditions\":{},\"f:containerStatuses\":{},\"f:phase\":{}}},"
	    "\"subresource\":\"status\"}]},"
	    "\"spec\":{\"containers\":[{\"name\":\"app\",\"image\":\"registry.example/web:1.2.3\","
	    "\"ports\":[{\"containerPort\":8080,\"protocol\":\"TCP\"}],\"resources\":{\"requests\":"
	    "{\"cpu\":\"100m\",\"memory\":\"128Mi\"}},\"terminationMessagePath\":\"/dev/termination-log\","
	    "\"terminationMessagePolicy\":\"File\",\"imagePullPolicy\":\"IfNotPresent\"}],"
	    "\"restartPolicy\":\"Always\",\"terminationGracePeriodSeconds\":30,\"dnsPolicy\":\"ClusterFirst\","
	    "\"nodeName\":\"kwok-node-%d\",\"schedulerName\":\"default-scheduler\",\"enableServiceLinks\":true,"
	    "\"tolerations\":[{\"key\":\"node.kubernetes.io/not-ready\",\"operator\":\"Exists\",\"effect\":"
	    "\"NoExecute\",\"tolerationSeconds\":300}],\"priority\":0,\"preemptionPolicy\":\"PreemptLowerPriority\"},"
	    "\"status\":{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Initialized\",\"status\":\"True\","
	    "\"lastTransitionTime\":\"2026-11-22T03:00:01Z\"},{\"type\":\"Ready\",\"status\":\"True\","
	    "\"lastTransitionTime\":\"2026-11-22T03:00:01Z\"},{\"type\":\"ContainersReady\",\"status\":\"True\","
	    "\"lastTransitionTime\":\"2026-11-22T03:00:01Z\"},{\"type\":\"PodScheduled\",\"status\":\"True\","
	    "\"lastTransitionTime\":\"2026-11-22T03:00:00Z\"}],\"hostIP\":\"10.0.0.1\",\"podIP\":\"10.0.%d.%d\","
	    "\"startTime\":\"2026-11-22T03:00:01Z\",\"containerStatuses\":[{\"name\":\"app\",\"state\":"
	    "{\"running\":{\"startedAt\":\"2026-11-22T03:00:01Z\"}},\"ready\":true,\"restartCount\":%d,"
	    "\"image\":\"registry.example/web:1.2.3\",\"imageID\":\"\",\"started\":true}],\"qosClass\":\"Burstable\"}}",
	    i, i % 10, (unsigned)(i * 2654435761u), i, 1000 + i, i % 16, i / 100, i % 10,
	    (i / 250) % 250, i % 250, i % 3);
}

static double
cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long
peak_rss_kib(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

int
main(int argc, char **argv)
{
	int count = 100000, batch = 500, c;
	long long epoch = 0;
	char tmp[] = "/tmp/sqlkcm-bench-XXXXXX", *path = NULL, *error = NULL;
	const struct resource *pods = resource_find("pods");
	struct store *store;
	char **texts;
	size_t bytes = 0;
	double t0, c0, store_time = 0, store_cpu = 0, total, total_cpu;
	struct stat st;

	while ((c = getopt(argc, argv, "n:b:")) != -1) {
		switch (c) {
		case 'n': count = atoi(optarg); break;
		case 'b': batch = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: store_ingest [-n COUNT] [-b BATCH] [DB]\n");
			return 2;
		}
	}
	if (count <= 0 || batch <= 0) {
		fprintf(stderr, "store_ingest: -n and -b take positive numbers\n");
		return 2;
	}
	if (optind < argc) {
		path = xstrdup(argv[optind]);
	} else {
		if (mkdtemp(tmp) == NULL)
			return 1;
		path = xasprintf("%s/cache.db", tmp);
	}
	texts = xcalloc((size_t)count, sizeof *texts);
	for (int i = 0; i < count; i++) {
		texts[i] = pod_text(i);
		bytes += strlen(texts[i]);
	}
	if (store_open(path, NULL, &store, &error) != 0) {
		fprintf(stderr, "store_ingest: %s\n", error);
		return 1;
	}

	t0 = now();
	c0 = cpu_now();
	for (int i = 0; i < count; i += batch) {
		double s0, sc0;
		if (store_begin(store, &error) != 0)
			goto fail;
		/* The first page starts the list, as an informer's first sync does. */
		if (i == 0 && store_begin_list(store, pods, &epoch, &error) != 0)
			goto fail;
		for (int j = i; j < i + batch && j < count; j++) {
			size_t len;
			char *body;
			cJSON *obj = store_parse_object(pods, texts[j], strlen(texts[j]), &body,
			    &len);
			s0 = now();
			sc0 = cpu_now();
			if (obj == NULL || store_upsert_text(store, pods, obj, body, len, epoch, NULL,
			    NULL, &error) != 0)
				goto fail;
			store_time += now() - s0;
			store_cpu += cpu_now() - sc0;
			cJSON_Delete(obj);
			free(body);
		}
		s0 = now();
		sc0 = cpu_now();
		if (store_commit(store, &error) != 0)
			goto fail;
		store_time += now() - s0;
		store_cpu += cpu_now() - sc0;
	}
	total = now() - t0;
	total_cpu = cpu_now() - c0;
	stat(path, &st);
	printf("objects            %d (%.0f bytes of JSON each on average)\n", count,
	    (double)bytes / count);
	printf("parse + store      %.2f s, %.0f objects/s, %.1f MB/s of JSON\n", total,
	    count / total, (double)bytes / total / 1e6);
	printf("store alone        %.2f s, %.0f objects/s (upserts and commits)\n", store_time,
	    count / store_time);
	/* CPU time is what a busy machine does not distort: */
	printf("parse + store CPU  %.2f s, %.0f objects per CPU second\n", total_cpu,
	    count / total_cpu);
	printf("store alone CPU    %.2f s, %.0f objects per CPU second\n", store_cpu,
	    count / store_cpu);
	printf("peak RSS           %.1f MB (including the %zu MB of input texts held)\n",
	    peak_rss_kib() / 1024.0, bytes >> 20);
	printf("database           %.1f MB (%s; WAL not checkpointed)\n", (double)st.st_size / 1e6,
	    path);
	store_close(store);
	for (int i = 0; i < count; i++)
		free(texts[i]);
	free(texts);
	if (optind >= argc) {
		char *f = xasprintf("%s-wal", path); unlink(f); free(f);
		f = xasprintf("%s-shm", path); unlink(f); free(f);
		unlink(path);
		rmdir(tmp);
	}
	free(path);
	return 0;
fail:
	fprintf(stderr, "store_ingest: %s\n", error != NULL ? error : "parse failed");
	return 1;
}
