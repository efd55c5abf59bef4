/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The daemon's state and the operations main.c and the control commands share. */
#ifndef TSD_DAEMON_H
#define TSD_DAEMON_H

#include <json-c/json.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <systemd/sd-event.h>
#include <time.h>

#include "config.h"
#include "control.h"
#include "engine.h"
#include "proto.h"

struct daemon {
	/* options */
	const char *config_path;  /* NULL: the default */
	const char *dropin_dir;   /* NULL: conf.d/ next to the config */
	ts_user_lookup_fn lookup; /* NULL: getpwnam_r (tests inject) */
	bool debug;               /* --debug: log level fixed at debug */
	const char *ledger_path;  /* the ledger file (lib/ledger.h); NULL: not persisted */
	/* state */
	struct ts_config *cfg;
	struct engine eng;
	sd_event *event;
	sd_event_source *recheck; /* the periodic re-check; NULL in tests */
	sd_event_source *persist; /* wakes the loop for a deferred ledger save */
	struct control ctl;
	time_t started, loaded;
	unsigned long long reloads, reload_failures;
	char *reload_error;    /* why the last reload failed; NULL when it worked */
	int ledger_err;        /* last ts_ledger_save() error, so each cause is logged once */
	long long saved_ms;    /* ts_now_ms() of the last ledger save attempt */
	long long save_gap_ms; /* how long after it the next save may come */
	int procconn_err;      /* 0: subscribed to the proc connector; else why not (-errno) */
};

/* Loads the configuration; on error returns -EINVAL and *msgs (joined, caller frees). */
int daemon_load_config(const struct daemon *d, struct ts_config **out, char **msgs);

/*
 * Reload: parse the new configuration; on error keep the old one in force and remember why
 * (journal, STATUS=, control socket); else switch and re-evaluate every task. 0 or -EINVAL.
 */
int daemon_reload(struct daemon *d);

/* (Re)arms the re-check timer from the configuration's recheck_interval. */
void daemon_arm_recheck(const struct daemon *d);

/* Reads the proc connector; lost events (ENOBUFS) trigger a full rescan. */
void daemon_proc_events(struct daemon *d, int fd);

/*
 * Start-up, before the first scan: reads the ledger file a previous run left (killed without
 * its orderly stop) and adopts what is still ours (engine_adopt()). A missing file is normal; a
 * corrupt one is logged as a warning and ignored. Returns how many tasks were adopted.
 */
size_t daemon_adopt(struct daemon *d);

/* Writes the ledger file now if the ledger changed. */
void daemon_persist(struct daemon *d);

/*
 * The event loop's save: a change after a quiet spell is written at once (a kill -9 right
 * after a tag loses nothing), further changes at most every DAEMON_PERSIST_MS (or ten times
 * what the last save took, if longer), because each save rewrites the whole file and a fork
 * storm changes the ledger thousands of times a second. Returns the milliseconds until a deferred
 * save is due (the loop's timeout), or -1 when nothing is pending.
 */
#define DAEMON_PERSIST_MS 250
int daemon_persist_throttled(struct daemon *d, long long now_ms);

/*
 * Why the daemon works less than it should, for people ("" when it does not): no proc connector
 * subscription, failed tags by cause.
 */
void daemon_degraded(const struct daemon *d, char *buf, size_t len);

/* Refreshes STATUS= with the counts, led by "DEGRADED: why; " when daemon_degraded() says so. */
void daemon_update_status(const struct daemon *d);

/* The control socket's command handler (control_handler). */
json_object *daemon_handle(void *ctx, const struct ts_request *req, const struct ucred *peer);

#endif
