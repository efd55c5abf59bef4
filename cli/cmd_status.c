/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * status: what the kernel offers, the counters, the daemon, and one line per core with its CPUs,
 * how busy it was over a short sample, and the jitter tasks that last ran there, so an operator
 * sees at a glance that jitter tasks sit on busy cores and idle cores stay idle.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "errors.h"
#include "client.h"
#include "kernel.h"
#include "macro.h"
#include "output.h"
#include "scan.h"
#include "status.h"
#include "topology.h"
#include "util.h"

#define DEFAULT_SAMPLE_MS 250
#define DEFAULT_WATCH_S   2
/* More names than this make the per-core line unreadable; "tasks" lists them all. */
#define NAMES_PER_CORE 4

unsigned int cli_watch_rounds;

enum status_format { FORMAT_TEXT, FORMAT_JSON, FORMAT_PROMETHEUS };

struct status_args {
	long sample_ms;
	long watch_s; /* 0: once */
	enum status_format format;
};

static void sleep_ms(long ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Busy share of each core: the mean over its CPUs of the sampled per-CPU busy shares. */
static void sample_busy(const struct ts_topology *topo, long ms, struct core_view *cv)
{
	_cleanup_free_ struct ts_cpu_times *a = calloc(topo->ncpus, sizeof(*a));
	_cleanup_free_ struct ts_cpu_times *b = calloc(topo->ncpus, sizeof(*b));

	for (size_t c = 0; c < topo->ncores; c++)
		cv[c].busy_pct = -1;
	if (!a || !b || ts_cpustat_read(a, topo->ncpus) < 0)
		return;
	if (ms > 0)
		sleep_ms(ms);
	if (ts_cpustat_read(b, topo->ncpus) < 0)
		return;
	for (size_t c = 0; c < topo->ncores; c++) {
		int sum = 0, n = 0;

		for (size_t i = 0; i < topo->cores[c].ncpus; i++) {
			int cpu = topo->cores[c].cpus[i];
			int p = ts_cpu_busy_pct(&a[cpu], &b[cpu]);

			if (p >= 0) {
				sum += p;
				n++;
			}
		}
		cv[c].busy_pct = n ? (sum + n / 2) / n : -1;
	}
}

static const char *onoff(int v)
{
	return v < 0 ? "unknown" : v ? "on" : "off";
}

static json_object *kernel_json(const struct ts_kernel_info *k)
{
	json_object *o = json_object_new_object();
	const struct ts_counter *key = ts_counter_find(k, "key");

	json_object_object_add(o, "uclamp", json_object_new_boolean(k->uclamp));
	json_object_object_add(o, "turbosched", json_object_new_boolean(k->turbosched));
	json_object_object_add(
	    o, "packing", k->pack_enabled < 0 ? NULL : json_object_new_boolean(k->pack_enabled));
	json_object_object_add(o, "static_key", key ? json_object_new_boolean(key->value) : NULL);
	if (k->counters_state == TS_COUNTERS_OK) {
		json_object *c = json_object_new_object();

		for (size_t i = 0; i < k->ncounters; i++)
			json_object_object_add(c, k->counters[i].name,
			                       json_object_new_int64(k->counters[i].value));
		json_object_object_add(o, "counters", c);
		json_object_object_add(o, "counters_unavailable", NULL);
	} else {
		json_object_object_add(o, "counters", NULL);
		json_object_object_add(
		    o, "counters_unavailable",
		    json_object_new_string(ts_counters_state_str(k->counters_state)));
	}
	return o;
}

static void kernel_human(FILE *f, const struct ts_kernel_info *k)
{
	const struct ts_counter *key = ts_counter_find(k, "key");

	fprintf(f, "Utilization clamping: %s\n",
	        k->uclamp ? "yes"
	                  : "no (kernel without CONFIG_UCLAMP_TASK: tagging is impossible)");
	if (!k->turbosched)
		fprintf(f,
		        "TurboSched:           no (tags apply, but jitter tasks are not packed)\n");
	else
		fprintf(f, "TurboSched:           yes, packing %s (%s)\n", onoff(k->pack_enabled),
		        TS_SYSCTL_PACK);
	if (key)
		fprintf(f, "Static key:           %s\n", onoff(key->value != 0));
	if (k->counters_state != TS_COUNTERS_OK) {
		fprintf(f, "Counters:             %s\n", ts_counters_state_str(k->counters_state));
		return;
	}
	fprintf(f, "Counters:            ");
	for (size_t i = 0; i < k->ncounters; i++)
		if (strcmp(k->counters[i].name, "key") != 0)
			fprintf(f, " %s=%lld", k->counters[i].name, k->counters[i].value);
	fputc('\n', f);
}

/* The first few jitter tasks of a core, "TID(comm)", then "+N": one table line per core. */
static void jitter_names(char *buf, size_t len, const struct jitter_list *jl, size_t core)
{
	size_t off = 0, shown = 0, more = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < jl->n; i++) {
		int w;

		if (jl->v[i].core != (int)core)
			continue;
		if (shown == NAMES_PER_CORE) {
			more++;
			continue;
		}
		w = snprintf(buf + off, len - off, "%s%d(%s)", off ? " " : "",
		             (int)jl->v[i].task.tid, jl->v[i].task.comm);
		if (w < 0 || (size_t)w >= len - off)
			break;
		off += (size_t)w;
		shown++;
	}
	if (more)
		snprintf(buf + off, len - off, " +%zu", more);
}

static int parse_args(const struct cli_opts *o, int argc, char **argv, struct status_args *a)
{
	enum { OPT_FORMAT = 256 };
	static const struct option longopts[] = {
	    {"sample", required_argument, NULL, 's'},
	    {"watch", optional_argument, NULL, 'w'},
	    {"format", required_argument, NULL, OPT_FORMAT},
	    {NULL, 0, NULL, 0},
	};
	long long v;
	int c;

	*a = (struct status_args){DEFAULT_SAMPLE_MS, 0, o->json ? FORMAT_JSON : FORMAT_TEXT};
	while ((c = getopt_long(argc, argv, "+s:w::", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (ts_parse_ll(optarg, &v) < 0 || v < 0 || v > 10000) {
				cli_err(o->err, "--sample takes milliseconds, 0..10000, not '%s'",
				        optarg);
				return CLI_EXIT_USAGE;
			}
			a->sample_ms = (long)v;
			break;
		case 'w':
			v = DEFAULT_WATCH_S;
			if (optarg && (ts_parse_ll(optarg, &v) < 0 || v < 1 || v > 86400)) {
				cli_err(o->err, "--watch takes seconds, 1..86400, not '%s'",
				        optarg);
				return CLI_EXIT_USAGE;
			}
			a->watch_s = (long)v;
			break;
		case OPT_FORMAT:
			if (strcmp(optarg, "text") == 0) {
				a->format = FORMAT_TEXT;
			} else if (strcmp(optarg, "json") == 0) {
				a->format = FORMAT_JSON;
			} else if (strcmp(optarg, "prometheus") == 0) {
				a->format = FORMAT_PROMETHEUS;
			} else {
				cli_err(o->err, "--format takes text, json or prometheus, not '%s'",
				        optarg);
				return CLI_EXIT_USAGE;
			}
			break;
		default:
			return cli_unknown_option(o->err, "status", argv[optind - 1]);
		}
	}
	if (optind < argc) {
		cli_err(o->err, "status takes no arguments");
		return CLI_EXIT_USAGE;
	}
	return 0;
}

/* The daemon's own "status" answer (one request: it also says whether the daemon is up). */
static void daemon_status(const struct cli_opts *o, struct daemon_reach *reg)
{
	struct ts_request req = {.cmd = TS_CMD_STATUS};
	int r;

	memset(reg, 0, sizeof(*reg));
	if (client_call(o, &req, &reg->resp, reg->why, sizeof(reg->why)) != 0)
		return;
	r = ts_reply_status_parse(reg->resp, &reg->st);
	if (r < 0)
		snprintf(reg->why, sizeof(reg->why), "%s", ts_proto_strerror(r));
	reg->reachable = r == 0;
}

static void daemon_reach_free(struct daemon_reach *reg)
{
	ts_status_free(&reg->st);
	json_object_put(reg->resp);
}

static void daemon_human(FILE *f, const struct daemon_reach *reg)
{
	const struct ts_status *st = &reg->st;

	if (!reg->reachable) {
		fprintf(f, "Daemon:               %s\n", reg->why);
		return;
	}
	fprintf(f, "Daemon:               running (pid %d, %llu tasks tagged)\n", (int)st->pid,
	        (unsigned long long)st->tagged);
	if (st->has_proc_connector)
		fprintf(f, "Proc connector:       %s\n",
		        st->proc_connector.subscribed
		            ? "subscribed"
		            : "NOT subscribed: new tasks are found only by the periodic re-check");
	if (st->degraded)
		fprintf(f, "DEGRADED:             %s\n", st->degraded);
	if (st->has_control)
		fprintf(f,
		        "Control socket:       %" PRIu64 " served, %" PRIu64
		        " refused (no permission), %" PRIu64 " timed out, %" PRIu64
		        " idle dropped, %" PRIu64 " turned away busy, %" PRIu64
		        " over the per-user limit\n",
		        st->control.served, st->control.refused, st->control.timeouts,
		        st->control.evicted, st->control.rejected, st->control.uid_limited);
	if (st->stats.late > 0)
		fprintf(
		    f,
		    "Events:               %" PRIu64 " of %" PRIu64
		    " handled more than %d ms late (worst %.1f ms): matching tasks shorter-lived "
		    "than that may have run untagged\n",
		    st->stats.late, st->stats.events, st->stats.late_ms,
		    (double)st->stats.lag_max_us / 1000.0);
	if (st->last_reload.error)
		fprintf(f,
		        "Last reload:          FAILED, the previous configuration stays in force:\n"
		        "%s\n",
		        st->last_reload.error);
}

/* "llc1": a core's turbo domain, as the table and the metrics name it; "-" unknown. */
static void domain_name(char *buf, size_t len, const struct status_view *v, size_t core)
{
	if (v->cv[core].domain < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%s%d", v->domain_kind, v->cv[core].domain);
}

static void output_json(const struct cli_opts *o, const struct status_view *v)
{
	json_object *root = json_object_new_object(), *cores = json_object_new_array();
	json_object *d = json_object_new_object();
	const struct ts_topology *topo = &v->topo;
	char dom[32];

	json_object_object_add(root, "kernel", kernel_json(&v->k));
	json_object_object_add(d, "running", json_object_new_boolean(v->reg.reachable));
	json_object_object_add(d, "error",
	                       v->reg.reachable ? NULL : json_object_new_string(v->reg.why));
	/* pid, version, tagged, last_reload {count, failures, ok, error}, stats (late,
	 * lag_max_us...), control, proc_connector {subscribed, error}, degraded. */
	ts_status_add_summary(d, v->reg.reachable ? &v->reg.st : NULL);
	json_object_object_add(root, "daemon", d);
	for (size_t c = 0; v->topo_err == 0 && c < topo->ncores; c++) {
		json_object *e = json_object_new_object(), *cl = json_object_new_array();
		json_object *tl = json_object_new_array();

		json_object_object_add(e, "core", json_object_new_int((int)c));
		json_object_object_add(e, "package", json_object_new_int(topo->cores[c].package));
		json_object_object_add(e, "core_id", json_object_new_int(topo->cores[c].core_id));
		json_object_object_add(e, "node", json_object_new_int(topo->cores[c].node));
		domain_name(dom, sizeof(dom), v, c);
		json_object_object_add(e, "domain",
		                       v->cv[c].domain < 0 ? NULL : json_object_new_string(dom));
		for (size_t i = 0; i < topo->cores[c].ncpus; i++)
			json_object_array_add(cl, json_object_new_int(topo->cores[c].cpus[i]));
		json_object_object_add(e, "cpus", cl);
		json_object_object_add(
		    e, "busy_pct",
		    v->cv[c].busy_pct < 0 ? NULL : json_object_new_int(v->cv[c].busy_pct));
		for (size_t i = 0; i < v->jl.n; i++)
			if (v->jl.v[i].core == (int)c)
				json_object_array_add(tl, json_object_new_int(v->jl.v[i].task.tid));
		json_object_object_add(e, "jitter_tids", tl);
		json_object_array_add(cores, e);
	}
	json_object_object_add(root, "cores", cores);
	json_object_object_add(root, "jitter_tasks", json_object_new_int64((int64_t)v->jl.n));
	json_print_put(o->out, root);
}

static void output_text(const struct cli_opts *o, const struct status_view *v)
{
	char cpus[256], busy[24], names[512], idx[24], node[24], jn[24], dom[32];
	static const char *const hdr[] = {"CORE", "NODE",   "DOMAIN", "CPUS",
	                                  "BUSY", "JITTER", "TASKS"};
	const struct ts_topology *topo = &v->topo;
	struct table t;

	kernel_human(o->out, &v->k);
	daemon_human(o->out, &v->reg);
	fprintf(o->out, "Jitter tasks:         %zu\n\n", v->jl.n);
	if (v->topo_err < 0) {
		fprintf(o->out, "No CPU topology: %s\n", strerror(-v->topo_err));
		return;
	}
	table_init(&t, 7, hdr);
	for (size_t c = 0; c < topo->ncores; c++) {
		format_cpulist(cpus, sizeof(cpus), topo->cores[c].cpus, topo->cores[c].ncpus);
		snprintf(idx, sizeof(idx), "%zu", c);
		if (topo->cores[c].node >= 0)
			snprintf(node, sizeof(node), "%d", topo->cores[c].node);
		else
			snprintf(node, sizeof(node), "-");
		domain_name(dom, sizeof(dom), v, c);
		if (v->cv[c].busy_pct >= 0)
			snprintf(busy, sizeof(busy), "%d%%", v->cv[c].busy_pct);
		else
			snprintf(busy, sizeof(busy), "?");
		snprintf(jn, sizeof(jn), "%zu", v->cv[c].njitter);
		jitter_names(names, sizeof(names), &v->jl, c);
		table_add(&t, idx, node, dom, cpus, busy, jn, names[0] ? names : "-");
	}
	table_print(&t, o->out);
	table_free(&t);
	fprintf(o->out, "\nA turbo domain is %s: jitter tasks are packed within theirs.\n",
	        strcmp(v->domain_kind, "node") == 0 ? "a NUMA node" : "a last-level cache");
}

/*
 * Numbers each core's turbo domain densely in order of first appearance: the last-level cache
 * (the NUMA node on powerpc, where the kernel packs within a node), as the series defines it.
 */
static void map_domains(struct status_view *v)
{
	const struct ts_topology *topo = &v->topo;
	_cleanup_free_ int *seen = calloc(topo->ncores + 1, sizeof(*seen));
	int n = 0;

#if defined(__powerpc__) || defined(__powerpc64__)
	v->domain_kind = "node";
#else
	v->domain_kind = "llc";
#endif
	for (size_t c = 0; c < topo->ncores; c++) {
		int key = strcmp(v->domain_kind, "node") == 0
		              ? topo->cores[c].node
		              : topo->cpus[topo->cores[c].cpus[0]].llc;
		int i;

		v->cv[c].domain = -1;
		if (key < 0 || !seen)
			continue;
		for (i = 0; i < n && seen[i] != key; i++)
			;
		if (i == n)
			seen[n++] = key;
		v->cv[c].domain = i;
	}
}

static void status_view_free(struct status_view *v)
{
	free(v->cv);
	jitter_list_free(&v->jl);
	if (v->topo_err == 0)
		ts_topology_free(&v->topo);
	daemon_reach_free(&v->reg);
	client_ledger_free(&v->ledger);
	ts_kernel_info_free(&v->k);
	memset(v, 0, sizeof(*v));
}

/* One round: everything status shows. 0 or -errno (cannot list tasks). */
static int status_gather(const struct cli_opts *o, const struct status_args *a,
                         struct status_view *v)
{
	int r;

	memset(v, 0, sizeof(*v));
	ts_kernel_probe(&v->k);
	daemon_status(o, &v->reg);
	if (a->format == FORMAT_PROMETHEUS && v->reg.reachable)
		client_ledger_load(o, &v->ledger);
	v->topo_err = ts_topology_load(&v->topo);
	v->cv = calloc((v->topo_err == 0 ? v->topo.ncores : 0) + 1, sizeof(*v->cv));
	if (!v->cv)
		return -ENOMEM;
	if (v->topo_err == 0) {
		map_domains(v);
		sample_busy(&v->topo, a->sample_ms, v->cv);
	}
	/* TID, comm and CPU: all in stat. */
	r = jitter_scan(v->topo_err == 0 ? &v->topo : NULL, NULL, NULL, 0, &v->jl);
	if (r < 0)
		return r;
	for (size_t i = 0; i < v->jl.n; i++)
		if (v->jl.v[i].core >= 0)
			v->cv[v->jl.v[i].core].njitter++;
	return 0;
}

int cmd_status(const struct cli_opts *opts, int argc, char **argv)
{
	struct status_args a;
	unsigned int round = 0;
	bool clear;
	int r;

	r = parse_args(opts, argc, argv, &a);
	if (r)
		return r;
	clear = a.watch_s && a.format == FORMAT_TEXT && isatty(fileno(opts->out));
	for (;;) {
		_cleanup_(status_view_free) struct status_view v = {0};

		r = status_gather(opts, &a, &v);
		if (r < 0) {
			cli_err(opts->err, "cannot list tasks: %s", strerror(-r));
		} else {
			if (clear)
				fputs("\033[H\033[2J", opts->out);
			if (a.format == FORMAT_JSON)
				output_json(opts, &v);
			else if (a.format == FORMAT_PROMETHEUS)
				status_prometheus(opts->out, &v);
			else
				output_text(opts, &v);
		}
		fflush(opts->out);
		if (r < 0 || !a.watch_s || (cli_watch_rounds && ++round >= cli_watch_rounds))
			break;
		if (!clear && a.format == FORMAT_TEXT)
			fputc('\n', opts->out);
		sleep_ms(a.watch_s * 1000);
	}
	return r < 0 ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
}
