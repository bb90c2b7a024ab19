/* The index schema: numbered SQL migrations from schema/, compiled in.
 * Migration i brings PRAGMA user_version from i to i + 1. */
#pragma once

extern const char *const schema_migrations[];
extern const unsigned schema_migrations_count;
