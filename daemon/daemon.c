/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "daemon.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "notify.h"
#include "procconn.h"
#include "util.h"

int daemon_load_config(const struct daemon *d, struct ts_config **out, char **msgs)
{
	struct ts_config_source src = {
	    .path = d->config_path, .dropin_dir = d->dropin_dir, .lookup = d->lookup};
	return ts_config_load_joined(&src, out, msgs);
}

void daemon_arm_recheck(const struct daemon *d)
{
	uint64_t ms = d->cfg->daemon.recheck_interval_ms;

	if (!d->recheck)
		return;
	/* recheck_interval = 0 means no periodic re-check at all. */
	if (ms == 0) {
		(void)sd_event_source_set_enabled(d->recheck, SD_EVENT_OFF);
		return;
	}
	int r = sd_event_source_set_time_relative(d->recheck, ms * 1000);
	if (r >= 0)
		r = sd_event_source_set_enabled(d->recheck, SD_EVENT_ONESHOT);
	if (r < 0)
		log_warning("cannot arm the re-check timer: %s; cgroup moves are not noticed until "
		            "a reload",
		            strerror(-r));
}

/*
 * Events are handled in batches (engine_on_events()): a batch shows which tasks are already
 * gone. The size bounds how long a batch holds events back.
 */
#define BATCH 256

struct batch {
	struct engine *eng;
	size_t n;
	struct pc_event ev[BATCH];
};

static void batch_flush(struct batch *b)
{
	engine_on_events(b->eng, b->ev, b->n);
	b->n = 0;
}

static void batch_add(void *ctx, const struct pc_event *ev)
{
	struct batch *b = ctx;
	b->ev[b->n++] = *ev;
	if (b->n == BATCH)
		batch_flush(b);
}

void daemon_proc_events(struct daemon *d, int fd)
{
	static struct batch b;
	b.eng = &d->eng;
	b.n = 0;
	int r = procconn_read(fd, batch_add, &b);
	batch_flush(&b);
	if (r == 1) {
		/* The kernel dropped events: only a full scan knows what they were. */
		log_notice("proc connector overflowed (events lost); rescanning all tasks");
		d->eng.st.rescans++;
		engine_scan(&d->eng);
		daemon_update_status(d);
	} else if (r < 0) {
		log_err("proc connector read failed: %s", strerror(-r));
	}
}

size_t daemon_adopt(struct daemon *d)
{
	struct ts_ledger saved = {0};
	struct ts_ledger_report rep;

	if (!d->ledger_path)
		return 0;
	int r = ts_ledger_load(&saved, d->ledger_path, &rep);
	if (r == -EINVAL)
		log_warning("ledger %s is unusable (%s); ignoring it: tags a previous run left "
		            "are now treated as external and not restored on stop (untag them with "
		            "turboschedctl untag PID)",
		            d->ledger_path, rep.why);
	else if (r < 0)
		log_warning("cannot read the ledger %s: %s; ignoring it (tags a previous run left "
		            "are treated as external)",
		            d->ledger_path, strerror(-r));
	if (rep.bad)
		log_warning("ledger %s: %zu malformed entries skipped", d->ledger_path, rep.bad);
	struct adopt_stats st = engine_adopt(&d->eng, &saved);
	ts_ledger_free(&saved);
	if (st.adopted || st.dropped)
		log_info("ledger %s: adopted %zu tasks tagged before the restart, dropped %zu "
		         "(exited, reused or re-clamped meanwhile)",
		         d->ledger_path, st.adopted, st.dropped);
	d->eng.ledger.dirty = true; /* rewrite it: what was dropped must not come back */
	return st.adopted;
}

void daemon_persist(struct daemon *d)
{
	if (!d->ledger_path || !d->eng.ledger.dirty)
		return;
	int r = ts_ledger_save(&d->eng.ledger, d->ledger_path);
	if (r < 0 && r != d->ledger_err)
		log_warning("cannot save the ledger to %s: %s; after a crash the tags of this run "
		            "would be treated as external",
		            d->ledger_path, strerror(-r));
	else if (r == 0 && d->ledger_err)
		log_info("ledger %s saved again", d->ledger_path);
	d->ledger_err = r;
}

int daemon_persist_throttled(struct daemon *d, long long now_ms)
{
	if (!d->ledger_path || !d->eng.ledger.dirty)
		return -1;
	if (d->saved_ms && d->saved_ms + d->save_gap_ms > now_ms)
		return (int)(d->saved_ms + d->save_gap_ms - now_ms);
	long long t0 = ts_now_ms();
	daemon_persist(d);
	long long cost = ts_now_ms() - t0;
	d->saved_ms = now_ms;
	if (!d->eng.ledger.dirty) {
		/* Saves take at most a tenth of the daemon's time, however large the ledger. */
		d->save_gap_ms = cost * 10 > DAEMON_PERSIST_MS ? cost * 10 : DAEMON_PERSIST_MS;
		return -1;
	}
	/* A failed save stays dirty: retry in 10 s, so that a missing directory does not wake
	 * the daemon 4 times a second. */
	d->save_gap_ms = 10000;
	return (int)d->save_gap_ms;
}

void daemon_degraded(const struct daemon *d, char *buf, size_t len)
{
	char causes[160], pc[128] = "";

	engine_causes_str(&d->eng, causes, sizeof(causes));
	if (d->procconn_err)
		snprintf(pc, sizeof(pc),
		         "no proc connector (%s): new tasks wait for the periodic re-check",
		         strerror(-d->procconn_err));
	snprintf(buf, len, "%s%s%s%s", pc, pc[0] && causes[0] ? "; " : "",
	         causes[0] ? "failed tags by cause: " : "", causes);
}

void daemon_update_status(const struct daemon *d)
{
	size_t tagged = ts_ledger_count_tagged(&d->eng.ledger);
	char why[320], degraded[340] = "";

	/* What is wrong comes first: systemctl status may cut the line. */
	daemon_degraded(d, why, sizeof(why));
	if (why[0])
		snprintf(degraded, sizeof(degraded), "DEGRADED: %s; ", why);
	if (d->reload_error)
		notify_status(
		    "%s%zu tasks tagged, %zu rules; last reload FAILED, old config in use: %s",
		    degraded, tagged, ts_config_count(d->cfg, TS_RULE_TAG), d->reload_error);
	else
		notify_status("%s%zu tasks tagged, %zu rules, %zu exclusions", degraded, tagged,
		              ts_config_count(d->cfg, TS_RULE_TAG),
		              ts_config_count(d->cfg, TS_RULE_EXCLUDE));
}

int daemon_reload(struct daemon *d)
{
	struct ts_config *n = NULL;
	char *msgs = NULL;

	notify_reloading();
	d->reloads++;
	int r = daemon_load_config(d, &n, &msgs);
	free(d->reload_error);
	d->reload_error = NULL;
	if (r < 0) {
		d->reload_failures++;
		d->reload_error = msgs ? msgs : strdup("out of memory");
		log_err("reload failed, the previous configuration stays in force:\n%s",
		        d->reload_error ? d->reload_error : "");
	} else {
		struct ts_config *old = d->cfg;
		d->cfg = n;
		d->loaded = time(NULL);
		if (!d->debug)
			log_set_level(n->daemon.log_level);
		engine_set_config(&d->eng, n);
		daemon_arm_recheck(d);
		ts_config_free(old);
		log_info("configuration reloaded: %zu rules, %zu exclusions",
		         ts_config_count(n, TS_RULE_TAG), ts_config_count(n, TS_RULE_EXCLUDE));
	}
	daemon_update_status(d);
	notify_ready();
	return r < 0 ? -EINVAL : 0;
}
