/*
 * fuzz_token_request.c - the reader of a TokenRequest's answer (clientbuilder.c) from
 * arbitrary bytes.
 *
 * The input is the body the apiserver answered. Invariants: an answer read gives a
 * non-empty token without a line break (it goes into a header); one refused gives a
 * message and no token. Any broken one aborts.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clientbuilder.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *token = NULL, *error = NULL;
	double lifetime = 0;

	if (clientbuilder_parse_token((const char *)data, size, 1.7e9, &token, &lifetime,
	    &error) == 0) {
		if (token == NULL || token[0] == '\0' || strpbrk(token, "\r\n") != NULL ||
		    error != NULL) {
			fprintf(stderr, "fuzz_token_request: a bad token was read\n");
			abort();
		}
	} else if (token != NULL || error == NULL) {
		fprintf(stderr, "fuzz_token_request: a refusal without a message\n");
		abort();
	}
	free(token);
	free(error);
	return 0;
}
