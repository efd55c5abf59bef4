/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * status --format=prometheus: the Prometheus text exposition format, for node_exporter's textfile
 * collector. Names start with turbosched_, counters end in _total, values are in base units
 * (ratios, seconds). turboschedctl(8) lists every metric; keep the two in step.
 */
#include <inttypes.h>
#include <string.h>

#include "status.h"

/* One metric family's header. */
static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label value with \, " and newline escaped, as the format requires. */
static void label_value(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', f);
		if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void sample_u(FILE *f, const char *name, unsigned long long v)
{
	fprintf(f, "%s %llu\n", name, v);
}

/* A family of one unlabelled sample: its HELP and TYPE lines, then the sample. */
static void metric_u(FILE *f, const char *name, const char *type, const char *help,
                     unsigned long long v)
{
	family(f, name, type, help);
	sample_u(f, name, v);
}

/* The kernel's counters (debugfs, root only) that map one to one: line name -> metric. */
static const struct {
	const char *line, *metric, *type, *help;
} kernel_metrics[] = {
    {"jitter_tasks", "turbosched_jitter_tasks", "gauge",
     "Tasks whose util_max clamp is 0 (jitter tasks), as the kernel counts them."},
    {"jitter_runnable", "turbosched_jitter_runnable_tasks", "gauge",
     "Jitter tasks that are runnable (queued or running)."},
    {"packed", "turbosched_packed_placements_total", "counter",
     "Jitter task placements onto a busy core, since boot."},
    {"packed_transient", "turbosched_packed_transient_placements_total", "counter",
     "Packed placements onto a core busy only for a moment (a kernel thread or the waker)."},
    {"lb_refused", "turbosched_balancer_refused_moves_total", "counter",
     "Load balancer moves of a jitter task refused (onto an idle core or out of its domain)."},
    {"idle_skipped", "turbosched_idle_skipped_total", "counter",
     "The kernel's idle_skipped counter (kernels that have it)."},
};

/*
 * fallback is the sum of fallback_idle and fallback_full where the kernel splits it: one metric
 * with a reason label, "other" for what the split leaves (all of it on a kernel without one).
 */
static void fallbacks(FILE *f, const struct ts_kernel_info *k)
{
	static const char *const reasons[] = {"idle", "full"};
	const struct ts_counter *total = ts_counter_find(k, "fallback");
	long long split = 0;
	bool header = false;

	for (size_t i = 0; i < 2; i++) {
		char line[32];
		const struct ts_counter *c;

		snprintf(line, sizeof(line), "fallback_%s", reasons[i]);
		c = ts_counter_find(k, line);
		if (!c)
			continue;
		if (!header)
			family(
			    f, "turbosched_fallback_placements_total", "counter",
			    "Jitter task placements left to the normal path, by reason (idle: no "
			    "busy core the task may use in its turbo domain; full: busy cores "
			    "without room; other: the rest).");
		header = true;
		fprintf(f, "turbosched_fallback_placements_total{reason=\"%s\"} %lld\n", reasons[i],
		        c->value);
		split += c->value;
	}
	if (!total)
		return;
	if (!header)
		family(f, "turbosched_fallback_placements_total", "counter",
		       "Jitter task placements left to the normal path, by reason (this kernel "
		       "does not split them: all are \"other\").");
	fprintf(f, "turbosched_fallback_placements_total{reason=\"other\"} %lld\n",
	        total->value > split ? total->value - split : 0);
}

static void kernel_counters(FILE *f, const struct ts_kernel_info *k)
{
	metric_u(
	    f, "turbosched_kernel_packing_enabled", "gauge",
	    "1 when packing is switched on (kernel.sched_pack_jitter), 0 off or no TurboSched.",
	    k->pack_enabled == 1);
	metric_u(f, "turbosched_kernel_counters_available", "gauge",
	         "1 when the kernel's counters could be read (debugfs, as root).",
	         k->counters_state == TS_COUNTERS_OK);
	if (k->counters_state != TS_COUNTERS_OK)
		return;
	for (size_t i = 0; i < sizeof(kernel_metrics) / sizeof(kernel_metrics[0]); i++) {
		const struct ts_counter *c = ts_counter_find(k, kernel_metrics[i].line);

		if (!c)
			continue; /* an older kernel, or one with fewer counters */
		family(f, kernel_metrics[i].metric, kernel_metrics[i].type, kernel_metrics[i].help);
		fprintf(f, "%s %lld\n", kernel_metrics[i].metric, c->value);
	}
	fallbacks(f, k);
}

static void core_labels(FILE *f, const struct status_view *v, size_t c)
{
	const struct ts_core *core = &v->topo.cores[c];

	fprintf(f, "{core=\"%zu\",cpus=\"", c);
	for (size_t i = 0; i < core->ncpus; i++)
		fprintf(f, "%s%d", i ? "," : "", core->cpus[i]);
	fprintf(f, "\",node=\"%d\",domain=\"", core->node);
	if (v->cv[c].domain >= 0)
		fprintf(f, "%s%d", v->domain_kind, v->cv[c].domain);
	fputs("\"}", f);
}

static void cores(FILE *f, const struct status_view *v)
{
	if (v->topo_err < 0)
		return;
	family(f, "turbosched_core_busy_ratio", "gauge",
	       "Share of the sample each core's CPUs were busy (mean over its CPUs), 0 to 1.");
	for (size_t c = 0; c < v->topo.ncores; c++) {
		if (v->cv[c].busy_pct < 0)
			continue;
		fputs("turbosched_core_busy_ratio", f);
		core_labels(f, v, c);
		fprintf(f, " %d.%02d\n", v->cv[c].busy_pct / 100, v->cv[c].busy_pct % 100);
	}
	family(f, "turbosched_core_jitter_tasks", "gauge",
	       "Jitter tasks that last ran on each core.");
	for (size_t c = 0; c < v->topo.ncores; c++) {
		fputs("turbosched_core_jitter_tasks", f);
		core_labels(f, v, c);
		fprintf(f, " %zu\n", v->cv[c].njitter);
	}
}

static void daemon_metrics(FILE *f, const struct status_view *v)
{
	const struct ts_status *st = &v->reg.st;
	metric_u(f, "turbosched_daemon_up", "gauge", "1 when turboschedd answers on its socket.",
	         v->reg.reachable);
	if (!v->reg.reachable)
		return;
	metric_u(f, "turbosched_daemon_degraded", "gauge",
	         "1 when turboschedd runs degraded (e.g. without the proc connector).",
	         st->degraded != NULL);
	family(f, "turbosched_daemon_tagged_tasks", "gauge",
	       "Tasks turboschedd's rules have tagged now, by rule.");
	for (size_t i = 0; i < v->ledger.l.nnames; i++) {
		size_t n = client_ledger_rule_count(&v->ledger, v->ledger.l.names[i]);

		if (!n)
			continue;
		fputs("turbosched_daemon_tagged_tasks{rule=", f);
		label_value(f, v->ledger.l.names[i]);
		fprintf(f, "} %zu\n", n);
	}
	metric_u(f, "turbosched_daemon_tags_total", "counter",
	         "Tags turboschedd has applied since it started.", st->stats.tagged);
	metric_u(f, "turbosched_daemon_restores_total", "counter",
	         "Clamps turboschedd has restored since it started.", st->stats.restored);
	family(f, "turbosched_daemon_tag_failures_total", "counter",
	       "Tags turboschedd failed to apply, by cause (errno name).");
	for (size_t i = 0; i < st->stats.ncauses; i++) {
		fputs("turbosched_daemon_tag_failures_total{cause=", f);
		label_value(f, st->stats.causes[i].name);
		fprintf(f, "} %" PRIu64 "\n", st->stats.causes[i].count);
	}
	metric_u(f, "turbosched_daemon_events_total", "counter",
	         "Process events turboschedd has handled.", st->stats.events);
	metric_u(f, "turbosched_daemon_late_events_total", "counter",
	         "Events handled later than turbosched_daemon_late_threshold_seconds.",
	         st->stats.late);
	family(f, "turbosched_daemon_late_threshold_seconds", "gauge",
	       "How late an event must be handled to count as late.");
	fprintf(f, "turbosched_daemon_late_threshold_seconds %.3f\n", st->stats.late_ms / 1000.0);
	family(f, "turbosched_daemon_event_lag_max_seconds", "gauge",
	       "The latest any event has been handled since turboschedd started.");
	fprintf(f, "turbosched_daemon_event_lag_max_seconds %.6f\n",
	        (double)st->stats.lag_max_us / 1e6);
	metric_u(f, "turbosched_daemon_reload_failures_total", "counter",
	         "Configuration reloads that failed (the old rules stayed in force).",
	         st->last_reload.failures);
}

void status_prometheus(FILE *f, const struct status_view *v)
{
	kernel_counters(f, &v->k);
	metric_u(f, "turbosched_jitter_tasks_seen", "gauge",
	         "Jitter tasks found by scanning /proc (util_max 0 as sched_getattr reports it).",
	         v->jl.n);
	cores(f, v);
	daemon_metrics(f, v);
}
