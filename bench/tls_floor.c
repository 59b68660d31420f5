/*
 * tls_floor.c - the resident memory a process needs for one HTTPS request, through the
 * TLS stack sqlkcm links (libcurl over OpenSSL) or, built with -DTLS_FLOOR_MBEDTLS,
 * through mbedTLS alone: the floor under sqlkcm's peak RSS that no change of its own
 * code lowers. Run by bench/tls-floor, which starts the server it talks to.
 *
 * usage: tls_floor PORT      (a TLS server on 127.0.0.1:PORT; its certificate is not
 *                             checked: the handshake and the request are what is measured)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef TLS_FLOOR_MBEDTLS
#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/net_sockets.h>
#include <mbedtls/ssl.h>
#else
#include <curl/curl.h>
#endif

/* Prints the lines of /proc/self/status that say what is resident, after tag. */
static void
print_rss(const char *tag)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];

	if (f == NULL)
		return;
	while (fgets(line, sizeof line, f) != NULL) {
		if (strncmp(line, "VmHWM:", 6) == 0 || strncmp(line, "RssAnon:", 8) == 0 ||
		    strncmp(line, "RssFile:", 8) == 0)
			printf("%s %s", tag, line);
	}
	fclose(f);
}

#ifdef TLS_FLOOR_MBEDTLS
static int
get(const char *port)
{
	mbedtls_net_context net;
	mbedtls_ssl_context ssl;
	mbedtls_ssl_config conf;
	mbedtls_entropy_context entropy;
	mbedtls_ctr_drbg_context drbg;
	unsigned char buf[4096];
	const char *req = "GET / HTTP/1.0\r\n\r\n";
	int r, ok = -1;

	mbedtls_net_init(&net);
	mbedtls_ssl_init(&ssl);
	mbedtls_ssl_config_init(&conf);
	mbedtls_entropy_init(&entropy);
	mbedtls_ctr_drbg_init(&drbg);
	if (mbedtls_ctr_drbg_seed(&drbg, mbedtls_entropy_func, &entropy, NULL, 0) != 0 ||
	    mbedtls_net_connect(&net, "127.0.0.1", port, MBEDTLS_NET_PROTO_TCP) != 0 ||
	    mbedtls_ssl_config_defaults(&conf, MBEDTLS_SSL_IS_CLIENT,
	    MBEDTLS_SSL_TRANSPORT_STREAM, MBEDTLS_SSL_PRESET_DEFAULT) != 0)
		goto out;
	mbedtls_ssl_conf_authmode(&conf, MBEDTLS_SSL_VERIFY_NONE);
	mbedtls_ssl_conf_rng(&conf, mbedtls_ctr_drbg_random, &drbg);
	if (mbedtls_ssl_setup(&ssl, &conf) != 0)
		goto out;
	mbedtls_ssl_set_bio(&ssl, &net, mbedtls_net_send, mbedtls_net_recv, NULL);
	while ((r = mbedtls_ssl_handshake(&ssl)) != 0) {
		if (r != MBEDTLS_ERR_SSL_WANT_READ && r != MBEDTLS_ERR_SSL_WANT_WRITE)
			goto out;
	}
	if (mbedtls_ssl_write(&ssl, (const unsigned char *)req, strlen(req)) < 0)
		goto out;
	while (mbedtls_ssl_read(&ssl, buf, sizeof buf) > 0)
		;
	ok = 0;
out:
	mbedtls_ssl_free(&ssl);
	mbedtls_ssl_config_free(&conf);
	mbedtls_ctr_drbg_free(&drbg);
	mbedtls_entropy_free(&entropy);
	mbedtls_net_free(&net);
	return ok;
}
#else
static size_t
discard(char *p, size_t size, size_t n, void *arg)
{
	(void)p;
	(void)arg;
	return size * n;
}

static int
get(const char *port)
{
	char url[64];
	CURL *c;
	CURLcode r;

	snprintf(url, sizeof url, "https://127.0.0.1:%s/", port);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK || (c = curl_easy_init()) == NULL)
		return -1;
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	r = curl_easy_perform(c);
	curl_easy_cleanup(c);
	return r == CURLE_OK ? 0 : -1;
}
#endif

int
main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: tls_floor PORT\n");
		return 2;
	}
	print_rss("before");
	if (get(argv[1]) != 0) {
		fprintf(stderr, "tls_floor: the request to 127.0.0.1:%s failed\n", argv[1]);
		return 1;
	}
	print_rss("after");
	return 0;
}
