/* `baseline compare --plot`: per entry and phase, the baseline and the
 * current distribution of the runner/control ratio as box plots on one
 * axis (change against the baseline median), the interval of the change
 * and the minimum-effect band, so that a reviewer sees why a verdict fell
 * as it did: SLOWER only when the whole interval clears the band. */
#include "report/compare_report.h"

#include "report/markup.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SVG_WIDTH 1000
#define SVG_HEADER 116 /* the legend and the counts */
#define SVG_LINE 16   /* a line of the list of rows not decided */
#define SVG_PANEL 100
#define PLOT_X0 430.0 /* left of it: the caption, and the boxes' labels */
#define PLOT_X1 980.0

#define COLOR_BASE "#2e6da4"
#define COLOR_CUR "#d9822b"

static const char *verdict_color(verdict_kind k)
{
    switch (k) {
    case VERDICT_SLOWER: return "#c0392b";
    case VERDICT_FASTER: return "#1e8449";
    case VERDICT_SAME: return "#555555";
    default: return "#9a6400";
    }
}

/* One panel's horizontal axis: changes against the baseline median ratio
 * (0 = the baseline median). It holds both boxes, the interval and the
 * band; whiskers beyond it by more than its width are cut at the edge. */
typedef struct panel_scale {
    double lo, hi;
} panel_scale;

static double scale_x(const panel_scale *s, double v)
{
    if (v < s->lo) v = s->lo;
    if (v > s->hi) v = s->hi;
    return PLOT_X0 + (v - s->lo) / (s->hi - s->lo) * (PLOT_X1 - PLOT_X0);
}

/* A ratio as a change against the baseline median. */
static double rel(double v, double base_median)
{
    return v / base_median - 1;
}

static panel_scale make_scale(const comparison_phase *ph)
{
    const sample_summary *b = &ph->on->base, *c = &ph->on->cur;
    const double m = b->median, d = ph->v->delta > 0 ? ph->v->delta : VERDICT_MIN_EFFECT;
    double lo = fmin(fmin(rel(b->q1, m), rel(c->q1, m)), fmin(ph->v->ci_low, -1.5 * d));
    double hi = fmax(fmax(rel(b->q3, m), rel(c->q3, m)), fmax(ph->v->ci_high, 1.5 * d));
    const double span = hi - lo;
    lo = fmax(fmin(lo, fmin(rel(b->min, m), rel(c->min, m))), lo - span);
    hi = fmin(fmax(hi, fmax(rel(b->max, m), rel(c->max, m))), hi + span);
    const double pad = 0.06 * (hi - lo);
    return (panel_scale){lo - pad, hi + pad};
}

static void draw_axis(FILE *f, const panel_scale *s, double y)
{
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>\n", PLOT_X0, y, PLOT_X1, y);
    const double step = markup_tick_step(s->hi - s->lo);
    for (double t = ceil(s->lo / step) * step; t <= s->hi; t += step) {
        char label[32];
        const double pct = fabs(t) < 1e-12 ? 0 : 100 * t;
        snprintf(label, sizeof label, pct > 0 ? "+%g%%" : "%g%%", pct);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>\n", scale_x(s, t), y,
                scale_x(s, t), y + 4);
        markup_svg_text(f, scale_x(s, t), y + 15, "font-size=\"10\" text-anchor=\"middle\" fill=\"#444\"", label);
    }
}

/* A box plot of one side: whiskers min to max, box q1 to q3, the median. */
static void draw_box(FILE *f, const panel_scale *s, const sample_summary *d, double m, double y,
                     const char *color, const char *label)
{
    const double x_min = scale_x(s, rel(d->min, m)), x_max = scale_x(s, rel(d->max, m));
    const double x_q1 = scale_x(s, rel(d->q1, m)), x_q3 = scale_x(s, rel(d->q3, m));
    const double x_med = scale_x(s, rel(d->median, m));
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", x_min, y, x_max, y, color);
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"12\" fill=\"%s\" fill-opacity=\"0.35\" "
               "stroke=\"%s\"/>\n", x_q1, y - 6, fmax(x_q3 - x_q1, 1), color, color);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2.5\"/>\n",
            x_med, y - 7, x_med, y + 7, color);
    char text[64];
    snprintf(text, sizeof text, "%s (n=%d)", label, d->n);
    markup_svg_text(f, PLOT_X0 - 6, y + 4, "font-size=\"10\" text-anchor=\"end\" fill=\"#444\"", text);
    /* a whisker cut at the edge says where it ends */
    if (rel(d->max, m) > s->hi) {
        snprintf(text, sizeof text, "max %+.0f%%", 100 * rel(d->max, m));
        markup_svg_text(f, PLOT_X1, y - 3, "font-size=\"9\" text-anchor=\"end\" fill=\"#444\"", text);
    }
    if (rel(d->min, m) < s->lo) {
        snprintf(text, sizeof text, "min %+.0f%%", 100 * rel(d->min, m));
        markup_svg_text(f, PLOT_X0, y - 3, "font-size=\"9\" fill=\"#444\"", text);
    }
}

/* The band of the minimum effect, the baseline median, both boxes, the
 * interval of the change and the axis. */
static void draw_plot(FILE *f, const comparison_phase *ph, double y0)
{
    const panel_scale s = make_scale(ph);
    const verdict_result *v = ph->v;
    const double m = ph->on->base.median;
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"64\" fill=\"#e6e6e6\"/>\n",
            scale_x(&s, -v->delta), y0 + 6, scale_x(&s, v->delta) - scale_x(&s, -v->delta));
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\" stroke-dasharray=\"3,3\"/>\n",
            scale_x(&s, 0), y0 + 6, scale_x(&s, 0), y0 + 70);
    draw_box(f, &s, &ph->on->base, m, y0 + 18, COLOR_BASE, "baseline");
    draw_box(f, &s, &ph->on->cur, m, y0 + 38, COLOR_CUR, "current");
    const char *color = verdict_color(v->kind);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"4\"/>\n",
            scale_x(&s, v->ci_low), y0 + 58, scale_x(&s, v->ci_high), y0 + 58, color);
    fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"/>\n", scale_x(&s, v->change), y0 + 58, color);
    markup_svg_text(f, PLOT_X0 - 6, y0 + 62, "font-size=\"10\" text-anchor=\"end\" fill=\"#444\"", "change");
    draw_axis(f, &s, y0 + 72);
}

/* The words beside a panel: what it is, the verdict, the numbers. */
static void draw_caption(FILE *f, const comparison_row *row, const comparison_phase *ph, double y0)
{
    const verdict_result *v = ph->v;
    char line[256], fill[64];
    markup_svg_text(f, 10, y0 + 16, "font-weight=\"bold\"", row->runner);
    snprintf(line, sizeof line, "%s %s%s%.12s", row->shape, ph->name, row->against.commit[0] ? ", A/B vs " : "",
             row->against.commit);
    markup_svg_text(f, 10, y0 + 31, "", line);
    snprintf(line, sizeof line, "%s %+.1f%% [%+.1f%%, %+.1f%%]", verdict_name(v->kind), 100 * v->change,
             100 * v->ci_low, 100 * v->ci_high);
    snprintf(fill, sizeof fill, "font-weight=\"bold\" fill=\"%s\"", verdict_color(v->kind));
    markup_svg_text(f, 10, y0 + 48, fill, line);
    /* \xc2\xb1: the plus-minus sign in UTF-8, the file's encoding */
    snprintf(line, sizeof line, "min effect \xc2\xb1%.1f%%, noise %.2f%%, p = %.2g", 100 * v->delta,
             100 * ph->noise, v->p);
    markup_svg_text(f, 10, y0 + 64, "fill=\"#444\"", line);
    snprintf(line, sizeof line, "median %.3g ms -> %.3g ms", ph->base_ms->median, ph->cur_ms->median);
    markup_svg_text(f, 10, y0 + 80, "fill=\"#444\"", line);
    if (row->cmp.unchecked[0]) /* a timing no reference checked says so here too */
        markup_svg_text(f, 10, y0 + 94, "font-size=\"10\" fill=\"#a00\"", row->cmp.unchecked);
}

static void draw_panel(FILE *f, const comparison_row *row, const comparison_phase *ph, double y0)
{
    fprintf(f, "<line x1=\"0\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ccc\"/>\n", y0, SVG_WIDTH, y0);
    draw_caption(f, row, ph, y0);
    if (ph->on->base.n > 0 && ph->on->cur.n > 0 && ph->on->base.median > 0)
        draw_plot(f, ph, y0);
    else
        markup_svg_text(f, PLOT_X0, y0 + 40, "fill=\"#444\"", "no samples to draw");
}

static void draw_legend(FILE *f, const comparison_result *r, int height)
{
    const char *const lines[] = {
        r->machine,
        "Per entry and phase: runner/control time ratios as change against the baseline median; boxes: "
        "quartiles and median, whiskers: min to max.",
        "Bar and dot: the interval of the change. Gray: the minimum effect; SLOWER or FASTER needs the whole bar "
        "outside it.",
        NULL};
    markup_svg_begin(f, SVG_WIDTH, height, "lstmcheck baseline compare", lines);
    fprintf(f, "<rect x=\"10\" y=\"80\" width=\"12\" height=\"8\" fill=\"%s\" fill-opacity=\"0.35\" "
               "stroke=\"%s\"/>\n", COLOR_BASE, COLOR_BASE);
    markup_svg_text(f, 26, 88, "font-size=\"10\"", "baseline");
    fprintf(f, "<rect x=\"80\" y=\"80\" width=\"12\" height=\"8\" fill=\"%s\" fill-opacity=\"0.35\" "
               "stroke=\"%s\"/>\n", COLOR_CUR, COLOR_CUR);
    markup_svg_text(f, 96, 88, "font-size=\"10\"", "current");
    char counts[512];
    compare_report_counts_line(r, counts, sizeof counts);
    markup_svg_text(f, 10, 106, "font-weight=\"bold\"", counts);
}

/* Below the panels: every row not decided (WRONG, ERROR, not compared
 * here) with its reason, so a failed run never plots as a clean one. */
static void draw_undecided(FILE *f, const comparison_result *r, double y)
{
    static const char *const word[] = {[COMPARISON_SKIPPED] = "NOT COMPARED", [COMPARISON_WRONG] = "WRONG",
                                       [COMPARISON_ERROR] = "ERROR"};
    for (int i = 0; i < r->nrows; i++) {
        const comparison_row *row = &r->rows[i];
        if (row->outcome == COMPARISON_DECIDED)
            continue;
        char line[COMPARISON_REASON_MAX + 160];
        snprintf(line, sizeof line, "%s %s %s: %s", word[row->outcome], row->runner, row->shape, row->reason);
        markup_svg_text(f, 10, y += SVG_LINE, row->outcome == COMPARISON_SKIPPED ? "fill=\"#444\"" : "fill=\"#c0392b\"",
                 line);
    }
}

static void put_svg(FILE *f, const void *value)
{
    const comparison_result *r = value;
    int panels = 0, undecided = 0;
    for (int i = 0; i < r->nrows; i++) {
        panels += 2 * (r->rows[i].outcome == COMPARISON_DECIDED);
        undecided += r->rows[i].outcome != COMPARISON_DECIDED;
    }
    const int bottom = SVG_HEADER + (panels ? panels : 1) * SVG_PANEL;
    draw_legend(f, r, bottom + (undecided + 1) * SVG_LINE);
    for (int i = 0, k = 0; i < r->nrows; i++)
        for (int b = 0; b < 2 && r->rows[i].outcome == COMPARISON_DECIDED; b++, k++) {
            const comparison_phase ph = comparison_row_phase(&r->rows[i], b);
            draw_panel(f, &r->rows[i], &ph, SVG_HEADER + k * SVG_PANEL);
        }
    if (!panels)
        markup_svg_text(f, 10, SVG_HEADER + 40, "fill=\"#444\"", "nothing was decided (see the lines below)");
    draw_undecided(f, r, bottom);
    fputs("</svg>\n", f);
}

lc_status compare_report_svg(const comparison_result *r, const char *path, lc_error *err)
{
    return report_emit(path, put_svg, r, r->incomplete, err);
}
