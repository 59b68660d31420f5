/*
 * fuzz_kubeconfig.c - kubeconfig loading on arbitrary input, by the path `sqlkcm run
 * --kubeconfig FILE` takes: the input is written to a file and read back with
 * kube_config_resolve, with current-context, with a fixed context name, and with --master.
 * It is also parsed from memory with kube_config_parse, an empty input as a NULL pointer
 * (what an empty file reads into).
 *
 * Why the file: libFuzzer hands the target a valid pointer even for an empty input, but an
 * empty file reads into a NULL buffer, on which libyaml asserts; a target that only parsed
 * from memory could never see that abort, which `sqlkcm run` hit on every empty kubeconfig.
 *
 * It must not crash or leak; on success the server is an http(s) URL without a trailing
 * slash, and an error is always a "kubeconfig PATH: ..." message.
 */
#include "config.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kubeconfig.h"

#define MASTER "http://127.0.0.1:1"

/* The file each input is written to, and its directory, made once. */
static char *config_dir;
static char *config_path;

/* Checks what loading promises for one result; name is the kubeconfig's name in messages. */
static void
check(int r, struct kube_config *c, char *error, const char *name, int with_master)
{
	char prefix[4096];
	size_t len;

	if (r == 0) {
		if (c == NULL || error != NULL || c->server == NULL)
			abort();
		if (strncmp(c->server, "http://", 7) != 0 && strncmp(c->server, "https://", 8) != 0)
			abort();
		len = strlen(c->server);
		if (c->server[len - 1] == '/')
			abort();
		if (with_master && strcmp(c->server, MASTER) != 0)
			abort();
		snprintf(prefix, sizeof prefix, "kubeconfig %s", name);
		if (c->origin == NULL || (strncmp(c->origin, prefix, strlen(prefix)) != 0 &&
		    !(with_master && strcmp(c->origin, "--master") == 0)))
			abort();
		if ((c->cert_pem != NULL) + (c->cert_file != NULL) > 1 ||
		    (c->key_pem != NULL) + (c->key_file != NULL) > 1)
			abort();
		if (c->insecure_skip_tls_verify && (c->ca_pem != NULL || c->ca_file != NULL))
			abort();
		kube_config_free(c);
	} else {
		snprintf(prefix, sizeof prefix, "kubeconfig %s: ", name);
		if (c != NULL || error == NULL || strncmp(error, prefix, strlen(prefix)) != 0)
			abort();
		free(error);
	}
}

/* Loads the file as `sqlkcm run --kubeconfig FILE [--context C] [--master M]` does. */
static void
check_file(const char *context, const char *master)
{
	struct kube_config *c = NULL;
	char *error = NULL;
	int r = kube_config_resolve(config_path, context, master, &c, &error);

	check(r, c, error, config_path, master != NULL);
}

/* Parses from memory, as kube_config_parse's callers may. */
static void
check_memory(const uint8_t *data, size_t size, const char *context)
{
	struct kube_config *c = NULL;
	char *error = NULL;
	int r = kube_config_parse(size > 0 ? (const char *)data : NULL, size, "/fuzz/config",
	    context, &c, &error);

	check(r, c, error, "/fuzz/config", 0);
}

/* Removes the file and its directory when the fuzzer exits. */
static void
config_path_remove(void)
{
	unlink(config_path);
	rmdir(config_dir);
}

/* Makes the directory and names the file the inputs are written to. */
static void
config_path_make(void)
{
	const char *tmp = getenv("TMPDIR");

	if (tmp == NULL || tmp[0] == '\0')
		tmp = "/tmp";
	if (asprintf(&config_dir, "%s/fuzz_kubeconfig.XXXXXX", tmp) == -1 ||
	    mkdtemp(config_dir) == NULL)
		abort();
	if (asprintf(&config_path, "%s/config", config_dir) == -1)
		abort();
	atexit(config_path_remove);
	/* Outside a pod, as the fuzzer's machine is: an empty file is then an error. */
	unsetenv("KUBERNETES_SERVICE_HOST");
}

/* Writes the input to the file, replacing what was there. */
static void
config_write(const uint8_t *data, size_t size)
{
	int fd = open(config_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd == -1)
		abort();
	while (size > 0) {
		ssize_t n = write(fd, data, size);
		if (n <= 0)
			abort();
		data += n;
		size -= (size_t)n;
	}
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (config_path == NULL)
		config_path_make();
	if (size > KUBE_CONFIG_FILE_MAX)
		return 0;
	config_write(data, size);
	check_file(NULL, NULL);
	check_file("c", NULL);
	check_file(NULL, MASTER);
	check_memory(data, size, NULL);
	check_memory(data, size, "c");
	return 0;
}
