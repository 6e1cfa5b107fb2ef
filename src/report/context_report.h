/* How a run's context (perf/context.h) is printed: as a JSON member of every
 * result document (bench --print-json full, baseline compare --json), and
 * as lstmcheck --version's lines. compare's --markdown has its own section
 * (markdown.c), from the same list. */
#ifndef LSTMCHECK_CONTEXT_REPORT_H
#define LSTMCHECK_CONTEXT_REPORT_H

#include <stdio.h>

#include "base/json.h"
#include "perf/context.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The context as a JSON object (the caller wrote its key): the text fields
 * (an empty one as null), tree_clean (null when unknown), threads, env
 * (unset: null), machines (per asked device: key and fields, or error). */
void report_context_json(json_writer *w, const run_context *c);

/* A machine's key as "cpu-amd-epyc-2cores-cooperlake (cpu_model=..., ...)",
 * or why it is not known. */
void report_context_machine(const run_context_machine *m, char *buf, size_t n);

/* lstmcheck --version: the program, its commit, build and libraries. */
void report_version(FILE *f, const run_context *c);

#ifdef __cplusplus
}
#endif
#endif
