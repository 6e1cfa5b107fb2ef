/* `baseline history --plot`: one panel per runner, the versions of the file
 * along the x axis (oldest left), and per shape and phase a line of the
 * median runner/control ratio as a change against that line's first point,
 * so that shapes of any size share an axis and a change that landed shows
 * as a step: ringed red where the verdict against the point before was
 * SLOWER, green where FASTER. */
#include "report/history_report.h"

#include "report/markup.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define SVG_WIDTH 1000
#define SVG_HEADER 100
#define SVG_PANEL 290
#define PLOT_X0 70.0
#define PLOT_X1 760.0
#define PLOT_TOP 34.0 /* below a panel's top */
#define PLOT_BOTTOM 214.0
#define LEGEND_X 790.0

static const char *const palette[] = {"#2e6da4", "#d9822b", "#6a3d9a", "#1b9e77", "#e7298a",
                                      "#7f6000", "#17becf", "#555555"};
#define NCOLORS (sizeof palette / sizeof palette[0])

static double x_of(const history_result *h, int version)
{
    if (h->nversions < 2)
        return (PLOT_X0 + PLOT_X1) / 2;
    return PLOT_X0 + version * (PLOT_X1 - PLOT_X0) / (h->nversions - 1);
}

/* A point's phase as a change against its line's first point. */
static double rel(const history_series *s, int k, int b)
{
    const double first = s->points[0].phase[b].median;
    return first > 0 ? s->points[k].phase[b].median / first - 1 : 0;
}

typedef struct y_scale {
    double lo, hi, top, bottom;
} y_scale;

static double y_of(const y_scale *s, double v)
{
    return s->bottom - (v - s->lo) / (s->hi - s->lo) * (s->bottom - s->top);
}

/* Every change of the runner's lines, and 0, with a margin. */
static y_scale make_scale(const history_result *h, const char *runner, double y0)
{
    double lo = 0, hi = 0;
    for (int i = 0; i < h->nseries; i++)
        for (int k = 0; k < h->series[i].npoints && !strcmp(h->series[i].runner, runner); k++)
            for (int b = 0; b < 2; b++) {
                lo = fmin(lo, rel(&h->series[i], k, b));
                hi = fmax(hi, rel(&h->series[i], k, b));
            }
    const double pad = fmax(0.08 * (hi - lo), 0.01);
    return (y_scale){lo - pad, hi + pad, y0 + PLOT_TOP, y0 + PLOT_BOTTOM};
}

static void draw_axes(FILE *f, const history_result *h, const y_scale *s, double y0)
{
    const double step = markup_tick_step(s->hi - s->lo);
    for (double t = ceil(s->lo / step) * step; t <= s->hi; t += step) {
        char label[32];
        const double pct = fabs(t) < 1e-12 ? 0 : 100 * t;
        snprintf(label, sizeof label, pct > 0 ? "+%g%%" : "%g%%", pct);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"%s/>\n", PLOT_X0, y_of(s, t),
                PLOT_X1, y_of(s, t), pct == 0 ? "#888" : "#e3e3e3", pct == 0 ? " stroke-dasharray=\"4,3\"" : "");
        markup_svg_text(f, PLOT_X0 - 6, y_of(s, t) + 4, "font-size=\"10\" text-anchor=\"end\" fill=\"#444\"", label);
    }
    const int every = h->nversions > 40 ? (h->nversions + 39) / 40 : 1;
    for (int i = 0; i < h->nversions; i++) {
        char name[16], attrs[160];
        const double x = x_of(h, i), y = y0 + PLOT_BOTTOM + 12;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eeeeee\"/>\n", x, s->top, x,
                s->bottom);
        if (i % every && i != h->nversions - 1)
            continue;
        snprintf(attrs, sizeof attrs, "font-size=\"9\" text-anchor=\"end\" fill=\"%s\" transform=\"rotate(-35 %.1f %.1f)\"",
                 h->versions[i].unreadable[0] ? "#c0392b" : "#444", x, y);
        snprintf(name, sizeof name, "%.7s", h->versions[i].commit[0] ? h->versions[i].commit : "uncommitted");
        markup_svg_text(f, x, y, attrs, name);
    }
}

/* The step labels of a panel so far: a new one moves down until it
 * overlaps none (steps of several lines at one commit stay readable). */
#define MAX_LABELS 512
typedef struct panel_labels {
    double x[MAX_LABELS], y[MAX_LABELS];
    int n;
} panel_labels;

static double free_label_y(panel_labels *l, double x, double y)
{
    for (int moved = 1; moved;) {
        moved = 0;
        for (int i = 0; i < l->n; i++)
            if (fabs(l->x[i] - x) < 40 && fabs(l->y[i] - y) < 11) {
                y = l->y[i] + 11;
                moved = 1;
            }
    }
    if (l->n < MAX_LABELS) {
        l->x[l->n] = x;
        l->y[l->n++] = y;
    }
    return y;
}

/* A point where a change landed: ringed, with the change beside it. */
static void draw_step(FILE *f, const history_phase *ph, double x, double y, panel_labels *labels)
{
    if (!ph->decided || (ph->v.kind != VERDICT_SLOWER && ph->v.kind != VERDICT_FASTER))
        return;
    const char *color = ph->v.kind == VERDICT_SLOWER ? "#c0392b" : "#1e8449";
    char label[32], attrs[96];
    fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"7\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>\n", x, y,
            color);
    snprintf(label, sizeof label, "%+.0f%%", 100 * ph->v.change);
    snprintf(attrs, sizeof attrs, "font-size=\"10\" font-weight=\"bold\" fill=\"%s\"", color);
    markup_svg_text(f, x + 9, free_label_y(labels, x, y - 4), attrs, label);
}

/* One line: a series' phase over the versions that changed it. */
static void draw_line(FILE *f, const history_result *h, const history_series *s, int b, const char *color,
                      const y_scale *sc, panel_labels *labels)
{
    fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\"%s points=\"", color,
            b ? " stroke-dasharray=\"6,4\"" : "");
    for (int k = 0; k < s->npoints; k++)
        fprintf(f, "%s%.1f,%.1f", k ? " " : "", x_of(h, s->points[k].version), y_of(sc, rel(s, k, b)));
    fputs("\"/>\n", f);
    for (int k = 0; k < s->npoints; k++) {
        const double x = x_of(h, s->points[k].version), y = y_of(sc, rel(s, k, b));
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", x, y, color);
        draw_step(f, &s->points[k].phase[b], x, y, labels);
    }
}

static void draw_panel(FILE *f, const history_result *h, const char *runner, double y0)
{
    fprintf(f, "<line x1=\"0\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ccc\"/>\n", y0, SVG_WIDTH, y0);
    markup_svg_text(f, 10, y0 + 20, "font-weight=\"bold\"", runner);
    const y_scale sc = make_scale(h, runner, y0);
    panel_labels labels = {.n = 0}; /* 8 KiB */
    draw_axes(f, h, &sc, y0);
    double legend_y = y0 + PLOT_TOP;
    for (int i = 0, shown = 0; i < h->nseries; i++) {
        const history_series *s = &h->series[i];
        if (strcmp(s->runner, runner))
            continue;
        const char *color = palette[shown++ % NCOLORS];
        for (int b = 0; b < 2; b++)
            draw_line(f, h, s, b, color, &sc, &labels);
        char shape[64], attrs[64];
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"8\" fill=\"%s\"/>\n", LEGEND_X, legend_y - 8,
                color);
        snprintf(attrs, sizeof attrs, "font-size=\"10\" fill=\"%s\"", color);
        markup_svg_text(f, LEGEND_X + 16, legend_y, attrs, lstm_shape_format(&s->shape, LSTM_SHAPE_TAG, shape,
                                                                              sizeof shape));
        legend_y += 14;
    }
}

static void draw_header(FILE *f, const history_result *h, int height)
{
    const char *const lines[] = {
        h->file, h->machine[0] ? h->machine : "machine unknown",
        "Median runner/control time ratio as a change since each line's first point, over the file's versions "
        "(oldest left).",
        "Solid: forward, dashed: backward. Ringed: SLOWER (red) or FASTER (green) against the point before, as "
        "baseline compare decides.",
        NULL};
    markup_svg_begin(f, SVG_WIDTH, height, "lstmcheck baseline history", lines);
}

static void put_svg(FILE *f, const void *value)
{
    const history_result *h = value;
    const char *runners[256];
    int nr = 0;
    for (int i = 0; i < h->nseries && nr < 256; i++) {
        int seen = 0;
        for (int k = 0; k < nr; k++)
            seen |= !strcmp(runners[k], h->series[i].runner);
        if (!seen)
            runners[nr++] = h->series[i].runner;
    }
    draw_header(f, h, SVG_HEADER + (nr ? nr : 1) * SVG_PANEL);
    for (int k = 0; k < nr; k++)
        draw_panel(f, h, runners[k], SVG_HEADER + k * SVG_PANEL);
    if (!nr)
        markup_svg_text(f, 10, SVG_HEADER + 40, "fill=\"#444\"", "no entries to draw");
    fputs("</svg>\n", f);
}

lc_status history_report_svg(const history_result *h, const char *path, lc_error *err)
{
    return report_emit(path, put_svg, h, h->incomplete, err);
}
