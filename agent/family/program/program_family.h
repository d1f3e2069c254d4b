/*
 * program_family.h - the `program` family's entry in the families' table
 * (families.c): a program loadlab did not write, given as a manifest of
 * blobs, measured as built and as the PE toolkit can change it without a
 * relink. How it works: program_int.h.
 */
#ifndef LOADLAB_AGENT_PROGRAM_FAMILY_H
#define LOADLAB_AGENT_PROGRAM_FAMILY_H

#include "family/family.h"

extern const struct family program_family;

#endif
