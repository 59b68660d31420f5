/*
 * version.h - the version of sqlkcm and of the libraries it is linked with.
 */
#ifndef SQLKCM_VERSION_H
#define SQLKCM_VERSION_H

#include <stdio.h>

/* The User-Agent sqlkcm sends: "sqlkcm/VERSION". */
#define SQLKCM_USER_AGENT "sqlkcm/" PACKAGE_VERSION

/* Prints "sqlkcm VERSION" and one "NAME VERSION" line per linked library. */
void version_print(FILE *f);

#endif
