/*
 * schema.h - the SQL schema, embedded from the schema/ files at build time.
 */
#ifndef SQLKCM_SCHEMA_H
#define SQLKCM_SCHEMA_H

#include <stddef.h>

/* One schema file: applying it moves the database to PRAGMA user_version = version. */
struct schema_migration {
	int version;
	const char *name;	/* the file name, for messages */
	const char *sql;
};

/* In ascending version order. */
extern const struct schema_migration schema_migrations[];
extern const size_t schema_migrations_count;

#endif
