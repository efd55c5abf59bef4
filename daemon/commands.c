/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The control commands: each builds its JSON response from the daemon's state. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "build_config.h"
#include "daemon.h"
#include "log.h"
#include "task.h"

#define ADD(o, k, v) json_object_object_add((o), (k), (v))

static json_object *cmd_status(struct daemon *d)
{
	json_object *o = ts_response_ok(), *c = json_object_new_object(),
	            *files = json_object_new_array(), *s = json_object_new_object(),
	            *rl = json_object_new_object(), *ctl = json_object_new_object();
	const struct engine_stats *st = &d->eng.st;

	ADD(o, "pid", json_object_new_int(getpid()));
	ADD(o, "version", json_object_new_string(TURBOSCHED_VERSION));
	ADD(o, "started", json_object_new_int64(d->started));
	for (size_t i = 0; i < d->cfg->nfiles; i++)
		json_object_array_add(files, json_object_new_string(d->cfg->files[i]));
	ADD(c, "files", files);
	ADD(c, "loaded", json_object_new_int64(d->loaded));
	ADD(c, "rules", json_object_new_int64((int64_t)ts_config_count(d->cfg, TS_RULE_TAG)));
	ADD(c, "excludes",
	    json_object_new_int64((int64_t)ts_config_count(d->cfg, TS_RULE_EXCLUDE)));
	ADD(c, "recheck_interval_ms", json_object_new_int64(d->cfg->daemon.recheck_interval_ms));
	ADD(c, "restore_on_stop", json_object_new_boolean(d->cfg->daemon.restore_on_stop));
	ADD(o, "config", c);
	ADD(rl, "count", json_object_new_int64((int64_t)d->reloads));
	ADD(rl, "failures", json_object_new_int64((int64_t)d->reload_failures));
	ADD(rl, "ok", json_object_new_boolean(d->reload_error == NULL));
	ADD(rl, "error", d->reload_error ? json_object_new_string(d->reload_error) : NULL);
	ADD(o, "last_reload", rl);
	ADD(o, "tagged", json_object_new_int64((int64_t)ts_ledger_count_tagged(&d->eng.ledger)));
#define STAT(name) ADD(s, #name, json_object_new_int64((int64_t)st->name))
	STAT(events);
	STAT(scans);
	STAT(rescans);
	STAT(tagged);
	STAT(restored);
	STAT(vanished);
	STAT(failures);
	STAT(external);
	STAT(skipped);
	STAT(late);
	STAT(lag_max_us);
	ADD(s, "late_ms", json_object_new_int(ENGINE_LATE_MS));
#undef STAT
	json_object *causes = json_object_new_object();
	for (size_t i = 0; i < ENGINE_CAUSES && d->eng.causes[i].err; i++) {
		const char *n =
		    d->eng.causes[i].err > 0 ? strerrorname_np(d->eng.causes[i].err) : NULL;
		ADD(causes, n ? n : "other",
		    json_object_new_int64((int64_t)d->eng.causes[i].count));
	}
	ADD(s, "failures_by_cause", causes);
	ADD(o, "stats", s);
	json_object *pc = json_object_new_object();
	ADD(pc, "subscribed", json_object_new_boolean(d->procconn_err == 0));
	ADD(pc, "error",
	    d->procconn_err ? json_object_new_string(strerror(-d->procconn_err)) : NULL);
	ADD(o, "proc_connector", pc);
	char why[320];
	daemon_degraded(d, why, sizeof(why));
	ADD(o, "degraded", why[0] ? json_object_new_string(why) : NULL);
	ADD(ctl, "served", json_object_new_int64((int64_t)d->ctl.st.served));
	ADD(ctl, "refused", json_object_new_int64((int64_t)d->ctl.st.refused));
	ADD(ctl, "timeouts", json_object_new_int64((int64_t)d->ctl.st.timeouts));
	ADD(ctl, "evicted", json_object_new_int64((int64_t)d->ctl.st.evicted));
	ADD(ctl, "rejected", json_object_new_int64((int64_t)d->ctl.st.rejected));
	ADD(ctl, "uid_limited", json_object_new_int64((int64_t)d->ctl.st.uid_limited));
	ADD(o, "control", ctl);
	return o;
}

static json_object *cmd_tasks(struct daemon *d)
{
	/* Serialized by client_respond() right away, while the ledger is as it is now. */
	json_object *o = ts_reply_tasks(&d->eng.ledger);
	return o ? o : ts_response_error("out of memory listing %zu tasks", d->eng.ledger.n);
}

static json_object *cmd_explain(struct daemon *d, pid_t pid)
{
	int err;
	json_object *o = ts_explain_pid(&d->cfg->rules, pid, &err);

	if (err == -ESRCH)
		return ts_response_error("no such process or thread: %d", (int)pid);
	if (!o)
		return ts_response_error("cannot read task %d: %s", (int)pid, strerror(-err));
	ADD(o, "ok", json_object_new_boolean(1));
	ADD(o, "source", json_object_new_string("daemon"));
	json_object *st;
	unsigned long long starttime = 0;
	/* Who owns it, by either ledger: an entry counts only if it is this very task, not an
	 * earlier user of the TID. */
	const struct ts_ledger_entry *e = NULL;
	if (ts_task_starttime(0, pid, &starttime) == 0) {
		e = ts_ledger_get(&d->eng.manual, pid, starttime);
		if (!e)
			e = ts_ledger_get(&d->eng.ledger, pid, starttime);
	}
	st = e ? ts_ledger_entry_to_json(e) : NULL;
	ADD(o, "registry", st);
	return o;
}

static json_object *cmd_rules(struct daemon *d)
{
	json_object *o = ts_response_ok(), *files = json_object_new_array();
	ADD(o, "rules", ts_rules_to_json(&d->cfg->rules));
	for (size_t i = 0; i < d->cfg->nfiles; i++)
		json_object_array_add(files, json_object_new_string(d->cfg->files[i]));
	ADD(o, "files", files);
	return o;
}

static json_object *cmd_reload(struct daemon *d)
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
		return cmd_status(d);
	case TS_CMD_TASKS:
		return cmd_tasks(d);
	case TS_CMD_EXPLAIN:
		return cmd_explain(d, req->pid);
	case TS_CMD_RULES:
		return cmd_rules(d);
	case TS_CMD_RELOAD:
		return cmd_reload(d);
	case TS_CMD_COUNT:
		break;
	}
	return ts_response_error("unknown command");
}
