/*
 * version.c - the version of sqlkcm and of the libraries it is linked with.
 *
 * Library versions are asked of the libraries at run time, not taken from their headers,
 * so the output tells what the process really loaded.
 */
#include "config.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <event2/event.h>
#include <sqlite3.h>
#include <yaml.h>

#include "version.h"

void
version_print(FILE *f)
{
	const curl_version_info_data *curl = curl_version_info(CURLVERSION_NOW);

	fprintf(f, "sqlkcm %s\n", PACKAGE_VERSION);
	fprintf(f, "sqlite %s\n", sqlite3_libversion());
	fprintf(f, "libcurl %s (%s)\n", curl->version,
	    curl->ssl_version != NULL ? curl->ssl_version : "no TLS");
	fprintf(f, "libevent %s\n", event_get_version());
	fprintf(f, "cjson %s\n", cJSON_Version());
	fprintf(f, "libyaml %s\n", yaml_get_version_string());
}
