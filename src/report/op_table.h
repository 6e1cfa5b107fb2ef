/* The table of operations of `profile` and `bench --trace` (the torch
 * profiler's key_averages, torch_geometric's print_time_total): per timed
 * runner, its operations by total time with calls, total, mean and share
 * of the runner's timed wall time. Printers only: they read one
 * prof_op_report (profiling.h). */
#ifndef LSTMCHECK_OP_TABLE_H
#define LSTMCHECK_OP_TABLE_H

#include <stdio.h>

#include "report/profiling.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Rows of one runner a text table shows; the CSV has them all. */
#define OP_TABLE_TEXT_ROWS 20

/* The tables as text, one per runner, names cut to a column. */
void op_table_print(FILE *f, const prof_op_report *r);
/* The tables as one CSV (RFC 4180, a header line), every row: a
 * report_writer (markup.h) reading a prof_op_report. */
void op_table_csv(FILE *f, const void *report);

/* After prof_finish: the session's tables made, printed to f, and written
 * as CSV to csv_path (atomically; NULL: none). LC_OK, or LC_ERROR with err. */
lc_status op_table_report(prof_session *p, FILE *f, const char *csv_path, lc_error *err);

#ifdef __cplusplus
}
#endif
#endif
