/* The machine key (see machine.h). */
#include "device/machine.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* OpenBLAS's own description of itself */
char *openblas_get_config(void);
char *openblas_get_corename(void);
int openblas_get_num_threads(void);

static void add_field(machine_key *k, const char *name, const char *value)
{
    if (k->nfields == MACHINE_FIELDS)
        return;
    snprintf(k->names[k->nfields], sizeof k->names[0], "%s", name);
    snprintf(k->values[k->nfields], sizeof k->values[0], "%s", value);
    k->nfields++;
}

static void cpu_model(char *buf, size_t n)
{
    snprintf(buf, n, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            const char *colon = strchr(line, ':');
            if (colon) {
                colon++;
                while (*colon == ' ' || *colon == '\t')
                    colon++;
                snprintf(buf, n, "%s", colon);
                buf[strcspn(buf, "\n")] = '\0';
            }
            break;
        }
    }
    fclose(f);
}

void machine_key_make_slug(machine_key *k)
{
    /* device, then the most telling fields, lower-case, [a-z0-9.-] only */
    char raw[512];
    int n = snprintf(raw, sizeof raw, "%s", lc_device_name(k->device));
    for (int i = 0; i < k->nfields && n < (int)sizeof raw - 1; i++) {
        const char *name = k->names[i];
        if (!strcmp(name, "cpu_model") || !strcmp(name, "gpu_name") || !strcmp(name, "blas_core") ||
            !strcmp(name, "cores") || !strcmp(name, "sm_count"))
            n += snprintf(raw + n, sizeof raw - (size_t)n, "-%s%s", k->values[i],
                          !strcmp(name, "cores") ? "cores" : !strcmp(name, "sm_count") ? "sms" : "");
    }
    size_t j = 0;
    int dash = 0;
    for (size_t i = 0; raw[i] && j + 1 < sizeof k->slug; i++) {
        unsigned char c = (unsigned char)raw[i];
        if (isalnum(c) || c == '.') {
            k->slug[j++] = (char)tolower(c);
            dash = 0;
        } else if (!dash && j > 0) {
            k->slug[j++] = '-';
            dash = 1;
        }
    }
    while (j > 0 && k->slug[j - 1] == '-')
        j--;
    k->slug[j] = '\0';
}

void machine_blas_version(char *buf, size_t n)
{
    const char *config = openblas_get_config(); /* "OpenBLAS 0.3.21 NO_LAPACKE ..." */
    const int threads = openblas_get_num_threads();
    snprintf(buf, n, "%s (kernels: %s, %d thread%s)", config + (strncmp(config, "OpenBLAS ", 9) ? 0 : 9),
             openblas_get_corename(), threads, threads == 1 ? "" : "s");
}

int machine_key_current(lc_device device, machine_key *k, lc_error *err)
{
    memset(k, 0, sizeof *k);
    k->device = device;
    if (device == LC_DEVICE_CPU) {
        char model[128], buf[128];
        cpu_model(model, sizeof model);
        add_field(k, "cpu_model", model);
        snprintf(buf, sizeof buf, "%ld", sysconf(_SC_NPROCESSORS_ONLN));
        add_field(k, "cores", buf);
        /* "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ...": keep name and version */
        snprintf(buf, sizeof buf, "%s", openblas_get_config());
        char *sp = strchr(buf, ' ');
        if (sp && (sp = strchr(sp + 1, ' ')))
            *sp = '\0';
        add_field(k, "blas", buf);
        add_field(k, "blas_core", openblas_get_corename());
        snprintf(buf, sizeof buf, "%d", openblas_get_num_threads());
        add_field(k, "blas_threads", buf);
    } else {
#ifdef LSTMCHECK_WITH_CUDA
        if (machine_cuda_fields(k, err))
            return 1;
#else
        lc_error_set(err, "this build has no CUDA support");
        return 1;
#endif
    }
    machine_key_make_slug(k);
    return 0;
}

int machine_key_equal(const machine_key *a, const machine_key *b)
{
    if (a->device != b->device || a->nfields != b->nfields)
        return 0;
    for (int i = 0; i < a->nfields; i++)
        if (strcmp(a->names[i], b->names[i]) || strcmp(a->values[i], b->values[i]))
            return 0;
    return 1;
}

void machine_key_describe(const machine_key *k, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < k->nfields && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, "%s%s=%s", i ? ", " : "", k->names[i], k->values[i]);
}

#ifdef LSTMCHECK_FAULTS
double machine_host_memory_for_tests;
#endif

double machine_host_memory_bytes(void)
{
#ifdef LSTMCHECK_FAULTS
    if (machine_host_memory_for_tests > 0)
        return machine_host_memory_for_tests;
#endif
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? (double)pages * (double)page : 0.0;
}
