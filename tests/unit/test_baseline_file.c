/* Baseline files written by base/json read back to the same values, bit
 * for bit: every committed baseline, loaded, saved and loaded again. */
#include "unit.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perf/baseline.h"

static int same_series(const baseline_series *a, const baseline_series *b)
{
    return a->n == b->n && !memcmp(a->samples, b->samples, (size_t)a->n * sizeof *a->samples);
}

int unit_same_baseline_entry(const baseline_entry *a, const baseline_entry *b)
{
    return !strcmp(a->runner, b->runner) && !memcmp(&a->shape, &b->shape, sizeof a->shape) &&
           a->seed == b->seed && !strcmp(a->lstmcheck_version, b->lstmcheck_version) &&
           !strcmp(a->git_commit, b->git_commit) && !strcmp(a->date, b->date) && !strcmp(a->control, b->control) &&
           a->reproducible == b->reproducible && a->rounds == b->rounds && a->noise_fwd == b->noise_fwd &&
           a->noise_bwd == b->noise_bwd && same_series(&a->fwd, &b->fwd) && same_series(&a->bwd, &b->bwd) &&
           same_series(&a->ctl, &b->ctl) && same_series(&a->fwd_ratio, &b->fwd_ratio) &&
           same_series(&a->bwd_ratio, &b->bwd_ratio);
}

/* 0 when the file at path survives a save and a load unchanged. */
static int round_trip(const char *path, const char *copy)
{
    baseline_file a, b;
    lc_error err;
    CHECK(baseline_load(path, &a, &err) == LC_OK, "%s", err.msg);
    CHECK(baseline_save(copy, &a, &err) == 0, "%s", err.msg);
    CHECK(baseline_load(copy, &b, &err) == LC_OK, "%s", err.msg);
    CHECK(machine_key_equal(&a.machine, &b.machine) && a.nentries == b.nentries && a.nentries > 0,
          "%s: machine or entries differ", path);
    for (int i = 0; i < a.nentries; i++)
        CHECK(unit_same_baseline_entry(&a.entries[i], &b.entries[i]), "%s: entries[%d] differs after a save", path, i);
    baseline_free(&a);
    baseline_free(&b);
    return 0;
}

int test_baseline_file_round_trip(void)
{
    const char *dir = LSTMCHECK_SOURCE_DIR "/baselines";
    char copy[] = "/tmp/lstmcheck_round_trip_XXXXXX";
    int fd = mkstemp(copy);
    CHECK(fd >= 0, "mkstemp");
    close(fd);
    DIR *d = opendir(dir);
    CHECK(d, "cannot open %s", dir);
    int files = 0, rc = 0;
    for (struct dirent *de; !rc && (de = readdir(d));) {
        const size_t len = strlen(de->d_name);
        if (len < 6 || strcmp(de->d_name + len - 5, ".json"))
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        rc = round_trip(path, copy);
        files++;
    }
    closedir(d);
    unlink(copy);
    CHECK(!rc, "see above");
    CHECK(files > 0, "no baseline files in %s", dir);
    return 0;
}
