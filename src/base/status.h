/* lc_status: the outcome every library function reports (the list is
 * base/status.def). */
#ifndef LSTMCHECK_STATUS_H
#define LSTMCHECK_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum lc_status {
#define LC_STATUS(NAME, name, exit_code) LC_##NAME,
#include "base/status.def"
#undef LC_STATUS
} lc_status;

/* "ok", "error", "failed", ... */
const char *lc_status_name(lc_status s);

#ifdef __cplusplus
}
#endif
#endif
