/*
 * src/icu_types/unicode/ucol.h
 *	  The two ICU types PostgreSQL's utils/pg_locale.h names, for building
 *	  where ICU's own headers (libicu-dev) are missing.  The Makefile puts
 *	  this directory after the system's (-idirafter), so ICU's header wins
 *	  where it is installed.  gbtree calls no ICU function through a header
 *	  (collate.c), so nothing here depends on the library's version.
 */
#ifndef GBTREE_ICU_TYPES_UCOL_H
#define GBTREE_ICU_TYPES_UCOL_H

#include <stdint.h>

typedef struct UCollator UCollator;
typedef uint16_t UChar;

#endif
