/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The control requests: each reply is built from the daemon's state by lib/proto. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "build_config.h"
#include "daemon.h"
#include "log.h"
#include "task.h"

static json_object *reply_status(struct daemon *d)
{
	const struct engine_stats *st = &d->eng.st;
	char why[320];
	struct ts_status s = {
	    .pid = getpid(),
	    .version = TURBOSCHED_VERSION,
	    .started = d->started,
	    .has_config = true,
	    .config = {.files = (const char *const *)d->cfg->files,
	               .nfiles = d->cfg->nfiles,
	               .loaded = d->loaded,
	               .rules = ts_config_count(d->cfg, TS_RULE_TAG),
	               .excludes = ts_config_count(d->cfg, TS_RULE_EXCLUDE),
	               .recheck_interval_ms = d->cfg->daemon.recheck_interval_ms,
	               .restore_on_stop = d->cfg->daemon.restore_on_stop},
	    .last_reload = {.count = d->reloads,
	                    .failures = d->reload_failures,
	                    .error = d->reload_error},
	    .tagged = ts_ledger_count_tagged(&d->eng.ledger),
	    .has_proc_connector = true,
	    .proc_connector = {.subscribed = d->procconn_err == 0,
	                       .error = d->procconn_err ? strerror(-d->procconn_err) : NULL},
	    .has_control = true,
	};

#define COPY(name) s.stats.name = st->name;
	TS_STATUS_STATS(COPY)
#undef COPY
#define COPY(name) s.control.name = d->ctl.st.name;
	TS_STATUS_CONTROL(COPY)
#undef COPY
	s.stats.late_ms = ENGINE_LATE_MS;
	for (size_t i = 0; i < ENGINE_CAUSES && i < TS_STATUS_CAUSES && d->eng.causes[i].err; i++) {
		const char *n =
		    d->eng.causes[i].err > 0 ? strerrorname_np(d->eng.causes[i].err) : NULL;
		s.stats.causes[i].name = n ? n : "other";
		s.stats.causes[i].count = d->eng.causes[i].count;
		s.stats.ncauses++;
	}
	daemon_degraded(d, why, sizeof(why));
	s.degraded = why[0] ? why : NULL;
	return ts_reply_status(&s);
}

static json_object *reply_tasks(struct daemon *d)
{
	/* Serialized by client_respond() right away, while the ledger is as it is now. */
	json_object *o = ts_reply_tasks(&d->eng.ledger);
	return o ? o : ts_response_error("out of memory listing %zu tasks", d->eng.ledger.n);
}

static json_object *reply_explain(struct daemon *d, pid_t pid)
{
	struct ts_explain e;
	unsigned long long starttime = 0;
	int err = ts_explain_pid(&d->cfg->rules, pid, &e);

	if (err == -ESRCH)
		return ts_response_error("no such process or thread: %d", (int)pid);
	if (err < 0)
		return ts_response_error("cannot read task %d: %s", (int)pid, strerror(-err));
	/* Who owns it, by either ledger: an entry counts only if it is this very task, not an
	 * earlier user of the TID. */
	const struct ts_ledger_entry *owner = NULL;
	if (ts_task_starttime(0, pid, &starttime) == 0) {
		owner = ts_ledger_get(&d->eng.manual, pid, starttime);
		if (!owner)
			owner = ts_ledger_get(&d->eng.ledger, pid, starttime);
	}
	if (owner) {
		e.owned = true;
		e.owner = *owner;
	}
	json_object *o = ts_reply_explain(&e);
	ts_explain_free(&e);
	return o;
}

static json_object *reply_rules(struct daemon *d)
{
	return ts_reply_rules(&d->cfg->rules, d->cfg->files, d->cfg->nfiles, false);
}

static json_object *reply_reload(struct daemon *d)
{
	if (daemon_reload(d) < 0)
		return ts_response_error("reload failed, the previous configuration stays in "
		                         "force:\n%s",
		                         d->reload_error ? d->reload_error : "");
	return ts_response_ok();
}

json_object *daemon_handle(void *ctx, const struct ts_request *req, const struct ucred *peer)
{
	struct daemon *d = ctx;

	(void)peer;
	/* A manual tag or untag since the last look changes counts and owners. */
	engine_sync_manual(&d->eng);
	switch (req->cmd) {
	case TS_CMD_STATUS:
		return reply_status(d);
	case TS_CMD_TASKS:
		return reply_tasks(d);
	case TS_CMD_EXPLAIN:
		return reply_explain(d, req->pid);
	case TS_CMD_RULES:
		return reply_rules(d);
	case TS_CMD_RELOAD:
		return reply_reload(d);
	case TS_CMD_COUNT:
		break;
	}
	return ts_response_error("unknown command");
}
