/* SPDX-License-Identifier: GPL-2.0-or-later */
/* turboschedctl: argument parsing, exit codes, table and JSON output (fake syscalls, temp tree). */
#include <check.h>
#include <errno.h>
#include <json-c/json.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "client.h"
#include "errors.h"
#include "helpers.h"
#include "output.h"
#include "scan.h"
#include "util.h"

static char *out_buf, *err_buf;

/* Runs turboschedctl with the given arguments (NULL-terminated); output lands in out_buf/err_buf.
 */
static int run(const char *first, ...)
{
	char *argv[32] = {"turboschedctl", "--socket", "/nonexistent/turboschedd.sock"};
	int argc = 3, rc;
	size_t ol, el;
	FILE *o, *e;
	va_list ap;

	va_start(ap, first);
	for (const char *a = first; a && argc < 31; a = va_arg(ap, const char *))
		argv[argc++] = (char *)a;
	va_end(ap);
	argv[argc] = NULL;
	free(out_buf);
	free(err_buf);
	o = open_memstream(&out_buf, &ol);
	e = open_memstream(&err_buf, &el);
	rc = cli_main(argc, argv, o, e);
	fclose(o);
	fclose(e);
	return rc;
}

static json_object *out_json(void)
{
	json_object *j = json_tokener_parse(out_buf);

	ck_assert_msg(j != NULL, "not JSON: %s", out_buf);
	return j;
}

static json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;

	ck_assert_msg(json_object_object_get_ex(o, key, &v), "no key %s", key);
	return v;
}

static void setup(void)
{
	tree_new();
	fake_install();
}

static void teardown(void)
{
	ts_sched_ops_set(NULL);
	tree_free();
}

START_TEST(usage_errors_exit_2)
{
	ck_assert_int_eq(run(NULL), 2);
	ck_assert_ptr_nonnull(strstr(err_buf, "no command"));
	ck_assert_int_eq(run("frobnicate", NULL), 2);
	ck_assert_ptr_nonnull(strstr(err_buf, "unknown command 'frobnicate'"));
	ck_assert_int_eq(run("--bogus", "status", NULL), 2);
	ck_assert_int_eq(run("tag", NULL), 2);
	ck_assert_ptr_nonnull(strstr(err_buf, "at least one PID"));
	ck_assert_int_eq(run("tag", "12", "abc", NULL), 2);
	ck_assert_ptr_nonnull(strstr(err_buf, "'abc' is not a PID"));
	ck_assert_int_eq(run("untag", "--bogus", "1", NULL), 2);
	ck_assert_int_eq(run("status", "extra", NULL), 2);
	ck_assert_int_eq(run("status", "--sample", "-4", NULL), 2);
	ck_assert_int_eq(run("tasks", "x", NULL), 2);
}
END_TEST

START_TEST(help_and_version)
{
	ck_assert_int_eq(run("--version", NULL), 0);
	ck_assert_ptr_nonnull(strstr(out_buf, "turboschedctl 0."));
	ck_assert_int_eq(run("--help", NULL), 0);
	ck_assert_ptr_nonnull(strstr(out_buf, "untag"));
	ck_assert_ptr_nonnull(strstr(out_buf, "Exit status"));
	ck_assert_int_eq(run("tag", "--help", NULL), 0);
	ck_assert_ptr_nonnull(strstr(out_buf, "--thread"));
}
END_TEST

START_TEST(tag_json_and_exit_codes)
{
	json_object *j, *threads;

	tree_add_task(100, 100, "app", 10, 0, 0);
	tree_add_task(100, 101, "app worker", 11, 1, 0);
	tree_add_task(200, 200, "other", 20, 0, 0);
	fake_add(100, SCHED_OTHER, 0, 1024);
	fake_add(101, SCHED_FIFO, 1024, 1024);
	fake_add(200, SCHED_OTHER, 0, 1024)->set_errno = EPERM;

	ck_assert_int_eq(run("--json", "tag", "100", NULL), 0);
	j = out_json();
	ck_assert_int_eq(json_object_get_int(get(j, "applied")), 2);
	ck_assert_int_eq(json_object_get_int(get(j, "failed")), 0);
	threads = get(j, "threads");
	ck_assert_uint_eq(json_object_array_length(threads), 2);
	ck_assert_str_eq(json_object_get_string(get(json_object_array_get_idx(threads, 1), "comm")),
	                 "app worker");
	ck_assert(json_object_get_boolean(
	    get(json_object_array_get_idx(threads, 1), "util_min_changed")));
	json_object_put(j);
	ck_assert_uint_eq(fake_get(101)->util_max, 0);

	/* one failure and one missing process: exit 1, both reported, the good one still applied */
	ck_assert_int_eq(run("tag", "200", "4711", NULL), 1);
	ck_assert_ptr_nonnull(
	    strstr(out_buf, "failed    pid 200 tid 200 (other): permission denied"));
	ck_assert_ptr_nonnull(strstr(err_buf, "pid 4711: no such process"));
	ck_assert_ptr_nonnull(strstr(err_buf, "2 of 2 failed"));

	/* untag restores what the state file recorded */
	ck_assert_int_eq(run("untag", "100", NULL), 0);
	ck_assert_ptr_nonnull(
	    strstr(out_buf, "util_max 0 -> 1024, util_min 0 -> 1024 [manual-record]"));
	ck_assert_uint_eq(fake_get(101)->util_min, 1024);
}
END_TEST

START_TEST(tag_without_uclamp)
{
	tree_add_task(100, 100, "app", 10, 0, 0);
	fake_add(100, SCHED_OTHER, 0, 1024)->set_errno = EOPNOTSUPP;
	ck_assert_int_eq(run("tag", "100", NULL), 1);
	ck_assert_ptr_nonnull(
	    strstr(err_buf, "this kernel has no utilization clamping (CONFIG_UCLAMP_TASK)"));
	/* Issue 19.7: every PID given is reported, the reason said once (before: "1 of 1"). */
	tree_add_task(200, 200, "app2", 20, 0, 0);
	fake_add(200, SCHED_OTHER, 0, 1024)->set_errno = EOPNOTSUPP;
	ck_assert_int_eq(run("tag", "100", "200", NULL), 1);
	ck_assert_ptr_nonnull(strstr(out_buf, "pid 100 tid 100 (app)"));
	ck_assert_ptr_nonnull(strstr(out_buf, "pid 200 tid 200 (app2)"));
	ck_assert_msg(strstr(err_buf, "2 of 2 failed"), "%s", err_buf);
	const char *once = strstr(err_buf, "no utilization clamping");
	ck_assert_ptr_null(strstr(once + 1, "no utilization clamping"));
}
END_TEST

START_TEST(tasks_table_and_json)
{
	json_object *j, *tasks, *t0;

	tree_add_task(100, 100, "manual one", 10, 1, 0);
	tree_add_task(300, 300, "by uclampset", 30, 3, 0);
	tree_add_task(400, 400, "normal", 40, 2, 0);
	fake_add(100, SCHED_OTHER, 0, 1024);
	fake_add(300, SCHED_OTHER, 0, 0);
	fake_add(400, SCHED_OTHER, 0, 1024);
	ck_assert_int_eq(run("tag", "100", NULL), 0);

	ck_assert_int_eq(run("tasks", NULL), 0);
	ck_assert_ptr_nonnull(strstr(out_buf, "TID  PID  COMM"));
	ck_assert_ptr_nonnull(strstr(out_buf, "manual one"));
	ck_assert_ptr_null(strstr(out_buf, "normal"));
	ck_assert_ptr_nonnull(strstr(err_buf, "not running"));

	ck_assert_int_eq(run("--json", "tasks", NULL), 0);
	j = out_json();
	tasks = get(j, "tasks");
	ck_assert_uint_eq(json_object_array_length(tasks), 2);
	t0 = json_object_array_get_idx(tasks, 0);
	ck_assert_int_eq(json_object_get_int(get(t0, "tid")), 100);
	ck_assert_str_eq(json_object_get_string(get(t0, "tagged_by")), "manual");
	ck_assert_str_eq(json_object_get_string(get(t0, "cgroup")), "/test.slice");
	ck_assert_int_eq(json_object_get_int(get(t0, "cpu")), 1);
	/* not manual and the daemon cannot be asked: unknown, not "external" */
	ck_assert_str_eq(
	    json_object_get_string(get(json_object_array_get_idx(tasks, 1), "tagged_by")),
	    "unknown");
	ck_assert(!json_object_get_boolean(get(j, "daemon_running")));
	json_object_put(j);
}
END_TEST

START_TEST(scan_with_daemon_registry)
{
	struct client_ledger reg = {.reachable = true};
	struct jitter_list jl;

	tree_add_task(500, 500, "ruled", 50, 0, 0);
	tree_add_task(600, 600, "external", 60, 0, 0);
	tree_add_task(700, 700, "reused", 71, 0, 0);
	fake_add(500, SCHED_OTHER, 0, 0);
	fake_add(600, SCHED_OTHER, 0, 0);
	fake_add(700, SCHED_OTHER, 0, 0);
	/* The daemon's "tasks" reply, typed by lib/proto (was: picked apart in cli/daemon.c). */
	json_object *resp = json_tokener_parse(
	    "{\"ok\":true,\"tasks\":["
	    "{\"tid\":500,\"tgid\":500,\"starttime\":50,\"rule\":\"housekeeping\",\"how\":"
	    "\"rule\",\"since\":0,\"util_min\":0,\"util_max\":1024,\"min_lowered\":false},"
	    "{\"tid\":700,\"tgid\":700,\"starttime\":70,\"rule\":\"stale\",\"how\":\"rule\","
	    "\"since\":0,\"util_min\":0,\"util_max\":1024,\"min_lowered\":false}]}");
	ck_assert_int_eq(ts_reply_tasks_parse(resp, &reg.l), 0);
	json_object_put(resp);
	ck_assert_int_eq(jitter_scan(NULL, NULL, &reg, TS_TASK_ALL, &jl), 0);
	ck_assert_uint_eq(jl.n, 3);
	ck_assert_int_eq(jl.v[0].by, TAGGED_RULE);
	ck_assert_str_eq(jl.v[0].rule, "housekeeping");
	ck_assert_int_eq(jl.v[1].by, TAGGED_EXTERNAL);
	ck_assert_int_eq(jl.v[2].by, TAGGED_EXTERNAL); /* start time differs: not the daemon's */
	jitter_list_free(&jl);
	client_ledger_free(&reg);
}
END_TEST

static void write_topology(void)
{
	for (int cpu = 0; cpu < 4; cpu++) {
		char p[128], v[16];

		snprintf(p, sizeof(p), "sys/devices/system/cpu/cpu%d/cache/index3/shared_cpu_list",
		         cpu);
		tree_write(p, cpu < 2 ? "0-1\n" : "2-3\n");

		snprintf(p, sizeof(p), "sys/devices/system/cpu/cpu%d/topology/thread_siblings_list",
		         cpu);
		snprintf(v, sizeof(v), "%d-%d\n", cpu & ~1, cpu | 1);
		tree_write(p, v);
		snprintf(p, sizeof(p), "sys/devices/system/cpu/cpu%d/topology/core_id", cpu);
		snprintf(v, sizeof(v), "%d\n", cpu / 2);
		tree_write(p, v);
	}
	tree_write("sys/devices/system/cpu/online", "0-3\n");
	tree_write("proc/stat", "cpu0 1 0 0 1\ncpu1 1 0 0 1\ncpu2 1 0 0 1\ncpu3 1 0 0 1\n");
}

START_TEST(status_json_per_core)
{
	json_object *j, *cores, *c1, *k;

	write_topology();
	tree_write("proc/sys/kernel/sched_pack_jitter", "1\n");
	tree_write("sys/kernel/debug/sched/pack_jitter/stats", "key 1\npacked 17\nnew_one 2\n");
	tree_add_task(100, 100, "jit", 10, 3, 0);
	tree_add_task(200, 200, "busy", 20, 0, 0);
	fake_add(100, SCHED_OTHER, 0, 0);
	fake_add(200, SCHED_OTHER, 0, 1024);

	ck_assert_int_eq(run("--json", "status", "--sample", "0", NULL), 0);
	j = out_json();
	k = get(j, "kernel");
	ck_assert(json_object_get_boolean(get(k, "uclamp")));
	ck_assert(json_object_get_boolean(get(k, "turbosched")));
	ck_assert(json_object_get_boolean(get(k, "packing")));
	ck_assert(json_object_get_boolean(get(k, "static_key")));
	ck_assert_int_eq(json_object_get_int(get(get(k, "counters"), "new_one")), 2);
	ck_assert(!json_object_get_boolean(get(get(j, "daemon"), "running")));
	cores = get(j, "cores");
	ck_assert_uint_eq(json_object_array_length(cores), 2);
	c1 = json_object_array_get_idx(cores, 1);
	ck_assert_uint_eq(json_object_array_length(get(c1, "cpus")), 2);
	ck_assert_int_eq(json_object_get_int(json_object_array_get_idx(get(c1, "jitter_tids"), 0)),
	                 100);
	ck_assert_uint_eq(
	    json_object_array_length(get(json_object_array_get_idx(cores, 0), "jitter_tids")), 0);
	ck_assert_int_eq(json_object_get_int(get(j, "jitter_tasks")), 1);
	json_object_put(j);

	ck_assert_int_eq(run("status", "--sample", "0", NULL), 0);
	ck_assert_ptr_nonnull(strstr(out_buf, "packing on"));
	ck_assert_ptr_nonnull(strstr(out_buf, "packed=17"));
	ck_assert_ptr_nonnull(strstr(out_buf, "1     -     llc1    2-3   ?     1       100(jit)"));
	ck_assert_ptr_nonnull(strstr(out_buf, "A turbo domain is a last-level cache"));
}
END_TEST

/*
 * A stand-in daemon in a child process: answers `n` connections, "tasks" with an empty registry
 * and "status" with a failed last reload. The socket exists when this returns.
 */
static pid_t fake_daemon(const char *path, int n)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	strcpy(sa.sun_path, path);
	unlink(path);
	int l = socket(AF_UNIX, SOCK_STREAM, 0);
	ck_assert_int_eq(bind(l, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(l, 4), 0);
	pid_t c = fork();
	ck_assert_int_ge(c, 0);
	if (c) {
		close(l);
		return c;
	}
	for (int i = 0; i < n; i++) {
		int fd = accept(l, NULL, NULL);
		uint8_t buf[4096];
		size_t have = 0, plen;
		ssize_t r;
		while ((r = read(fd, buf + have, sizeof(buf) - have)) > 0) {
			have += (size_t)r;
			if (ts_frame_complete(buf, have, sizeof(buf), &plen) == 1)
				break;
		}
		struct ts_request req;
		char err[128];
		json_object *resp;
		if (r <= 0 || ts_request_parse((char *)buf + 4, plen, &req, err, sizeof(err)) < 0)
			_exit(1);
		if (req.cmd == TS_CMD_STATUS)
			resp = json_tokener_parse(
			    "{\"ok\":true,\"pid\":4242,\"version\":\"0.1.0\",\"tagged\":3,"
			    "\"last_reload\":{\"count\":2,\"failures\":1,\"ok\":false,"
			    "\"error\":\"/etc/turbosched/conf.d/10-x.conf:3: [rule x] unknown key "
			    "'com'\"},\"stats\":{\"events\":1000,\"late\":7,\"lag_max_us\":48500,"
			    "\"late_ms\":10}}");
		else if (req.cmd == TS_CMD_RULES)
			resp = json_tokener_parse(
			    "{\"ok\":true,\"rules\":[{\"name\":\"house\",\"file\":\"/etc/t.conf\","
			    "\"line\":1,\"kind\":\"rule\",\"threads\":\"all\",\"comm\":[\"a*\"],"
			    "\"cgroup\":[],\"user\":[]}]}");
		else
			resp = json_tokener_parse(
			    "{\"ok\":true,\"tasks\":["
			    "{\"tid\":500,\"tgid\":500,\"starttime\":50,\"rule\":\"house\",\"how\":"
			    "\"rule\",\"since\":0,\"util_min\":0,\"util_max\":1024,"
			    "\"min_lowered\":false},"
			    "{\"tid\":501,\"tgid\":500,\"starttime\":50,\"rule\":\"house\",\"how\":"
			    "\"inherited\",\"since\":0,\"util_min\":0,\"util_max\":1024,"
			    "\"min_lowered\":false}]}");
		size_t len;
		uint8_t *out = ts_frame_encode(resp, &len);
		if (write(fd, out, len) != (ssize_t)len)
			_exit(1);
		close(fd);
	}
	_exit(0);
}

/* The daemon's failed reload and its late events, in JSON and for people. */
START_TEST(status_shows_failed_reload)
{
	char sock[108];
	int st;
	snprintf(sock, sizeof(sock), "%s/control", ts_root_get());
	write_topology();
	/* one connection: status alone says whether the daemon is up (was: tasks, then status) */
	pid_t d = fake_daemon(sock, 1);
	ck_assert_int_eq(run("--socket", sock, "--json", "status", "--sample", "0", NULL), 0);
	ck_assert_int_eq(waitpid(d, &st, 0), d);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	json_object *j = out_json(), *dj = get(j, "daemon"), *rl = get(dj, "last_reload");
	ck_assert(json_object_get_boolean(get(dj, "running")));
	ck_assert_int_eq(json_object_get_int(get(dj, "pid")), 4242);
	ck_assert(!json_object_get_boolean(get(rl, "ok")));
	ck_assert_str_eq(json_object_get_string(get(rl, "error")),
	                 "/etc/turbosched/conf.d/10-x.conf:3: [rule x] unknown key 'com'");
	ck_assert_int_eq(json_object_get_int(get(get(dj, "stats"), "late")), 7);
	json_object_put(j);

	d = fake_daemon(sock, 1);
	ck_assert_int_eq(run("--socket", sock, "status", "--sample", "0", NULL), 0);
	ck_assert_int_eq(waitpid(d, &st, 0), d);
	ck_assert_ptr_nonnull(strstr(out_buf, "Daemon:               running (pid 4242, 3 tasks "
	                                      "tagged)\n"
	                                      "Events:               7 of 1000 handled more "
	                                      "than 10 ms late (worst 48.5 ms): matching tasks "
	                                      "shorter-lived than that may have run untagged\n"
	                                      "Last reload:          FAILED, the previous "
	                                      "configuration stays in force:\n"
	                                      "/etc/turbosched/conf.d/10-x.conf:3: [rule x] "
	                                      "unknown key 'com'\n"));
}
END_TEST

/* Global options work after the command too, as systemctl takes them; --help is the same
 * everywhere: stdout, exit 0. */
START_TEST(global_options_anywhere_and_help)
{
	static const char *const cmds[] = {"tag",   "untag",   "run",   "status",
	                                   "tasks", "explain", "rules", "reload"};

	write_topology();
	ck_assert_int_eq(run("status", "--json", "--sample", "0", NULL), 0);
	json_object_put(out_json());
	ck_assert_int_eq(run("status", "--sample", "0", "-j", NULL), 0);
	json_object_put(out_json());
	ck_assert_int_eq(run("status", "--socket=/nonexistent/x", "--sample=0", NULL), 0);
	ck_assert_int_eq(run("status", "--socket", NULL), 2);
	ck_assert_ptr_nonnull(strstr(err_buf, "'--socket' needs an argument"));
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		ck_assert_int_eq(run(cmds[i], "--help", NULL), 0);
		ck_assert_ptr_nonnull(strstr(out_buf, "Usage: turboschedctl [OPTIONS] "));
		ck_assert_ptr_nonnull(strstr(out_buf, cmds[i]));
		ck_assert_ptr_nonnull(strstr(out_buf, "--json"));
		ck_assert_str_eq(err_buf, "");
		ck_assert_int_eq(run(cmds[i], "-h", NULL), 0);
		/* Every command is in the top-level help. */
		ck_assert_int_eq(run("--help", NULL), 0);
		ck_assert_ptr_nonnull(strstr(out_buf, cmds[i]));
	}
	ck_assert_int_eq(run("status", "--help", NULL), 0);
	ck_assert_ptr_nonnull(strstr(out_buf, "--watch"));
	ck_assert_ptr_nonnull(strstr(out_buf, "--format"));
	ck_assert_int_eq(run("--help", NULL), 0);
	ck_assert_ptr_nonnull(strstr(out_buf, "--watch"));
	ck_assert_ptr_nonnull(strstr(out_buf, "--thread"));
	ck_assert_ptr_nonnull(strstr(out_buf, "--config"));
	ck_assert_ptr_nonnull(strstr(out_buf, "--format"));
	/* "tag -- sleep 100" points to run. */
	ck_assert_int_eq(run("tag", "--", "sleep", "100", NULL), 2);
	ck_assert_ptr_nonnull(strstr(err_buf, "turboschedctl run COMMAND"));
}
END_TEST

/* run tags itself, records the tag, and execs: in a child, as the real command would. */
START_TEST(run_starts_tagged)
{
	int st;
	pid_t c;

	ck_assert_int_eq(run("run", NULL), 2);
	c = fork();
	ck_assert_int_ge(c, 0);
	if (c == 0) {
		fake_add(getpid(), SCHED_OTHER, 0, 1024);
		/* "--json" after the command to run is its own, not a global option. */
		tree_add_task(getpid(), getpid(), "ctl", 10, 0, 0);
		_exit(run("run", "--", "/nonexistent/cmd", "--json", NULL) == 127 &&
		              strstr(err_buf, "cannot run '/nonexistent/cmd'") &&
		              fake_get(getpid())->util_max == 0
		          ? 0
		          : 1);
	}
	ck_assert_int_eq(waitpid(c, &st, 0), c);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* A tag that fails: the command is not started. */
	ck_assert_int_eq(run("run", "/bin/true", NULL), 1);
	ck_assert_ptr_nonnull(strstr(err_buf, "cannot tag '/bin/true' before starting it"));
}
END_TEST

START_TEST(status_watch_rounds)
{
	write_topology();
	cli_watch_rounds = 2;
	ck_assert_int_eq(run("status", "--watch=1", "--sample=0", NULL), 0);
	cli_watch_rounds = 0;
	ck_assert_ptr_nonnull(strstr(out_buf, "Jitter tasks:"));
	ck_assert_ptr_nonnull(strstr(strstr(out_buf, "Jitter tasks:") + 1, "Jitter tasks:"));
	ck_assert_int_eq(run("status", "--watch=0", NULL), 2);
	ck_assert_int_eq(run("status", "--format=xml", NULL), 2);
}
END_TEST

/* Each rule's count of tagged tasks, from the daemon's ledger. */
START_TEST(rules_show_tagged_counts)
{
	char sock[108];
	int st;
	pid_t d;

	snprintf(sock, sizeof(sock), "%s/control", ts_root_get());
	d = fake_daemon(sock, 2);
	ck_assert_int_eq(run("--socket", sock, "rules", NULL), 0);
	ck_assert_int_eq(waitpid(d, &st, 0), d);
	ck_assert_ptr_nonnull(strstr(out_buf, "TAGGED"));
	ck_assert_ptr_nonnull(strstr(out_buf, "house  2"));
	d = fake_daemon(sock, 2);
	ck_assert_int_eq(run("--socket", sock, "rules", "--json", NULL), 0);
	ck_assert_int_eq(waitpid(d, &st, 0), d);
	json_object *j = out_json();
	ck_assert_int_eq(
	    json_object_get_int(get(json_object_array_get_idx(get(j, "rules"), 0), "tagged")), 2);
	json_object_put(j);
}
END_TEST

/* `promtool check metrics` (the linter of Debian's prometheus package) passes, when installed. */
static void promtool_check(const char *text)
{
	const char *promtool = getenv("PROMTOOL");
	char cmd[4200];
	FILE *p;

	if (!promtool || !*promtool)
		return;
	snprintf(cmd, sizeof(cmd), "%s check metrics 2>&1 >/dev/null", promtool);
	p = popen(cmd, "w");
	ck_assert_ptr_nonnull(p);
	fputs(text, p);
	ck_assert_msg(pclose(p) == 0, "promtool check metrics failed on:\n%.2000s", text);
}

/* The Prometheus text format: every family typed, counters _total, values from the fixtures. */
START_TEST(status_prometheus)
{
	char sock[108];
	int st;
	pid_t d;

	write_topology();
	tree_write("proc/sys/kernel/sched_pack_jitter", "1\n");
	tree_write("sys/kernel/debug/sched/pack_jitter/stats",
	           "key 1\njitter_tasks 1\njitter_runnable 0\npacked 17\npacked_transient 2\n"
	           "fallback 9\nfallback_idle 5\nfallback_full 3\nlb_refused 4\n");
	tree_add_task(100, 100, "jit", 10, 3, 0);
	fake_add(100, SCHED_OTHER, 0, 0);
	snprintf(sock, sizeof(sock), "%s/control", ts_root_get());
	d = fake_daemon(sock, 2);
	ck_assert_int_eq(
	    run("--socket", sock, "status", "--format=prometheus", "--sample", "0", NULL), 0);
	ck_assert_int_eq(waitpid(d, &st, 0), d);
	static const char *const want[] = {
	    "# TYPE turbosched_jitter_tasks gauge\nturbosched_jitter_tasks 1\n",
	    "# TYPE turbosched_packed_placements_total counter\n"
	    "turbosched_packed_placements_total 17\n",
	    "turbosched_packed_transient_placements_total 2\n",
	    "turbosched_fallback_placements_total{reason=\"idle\"} 5\n"
	    "turbosched_fallback_placements_total{reason=\"full\"} 3\n"
	    "turbosched_fallback_placements_total{reason=\"other\"} 1\n",
	    "turbosched_balancer_refused_moves_total 4\n",
	    /* --sample 0: no busy share measured, so the family has no samples */
	    "# TYPE turbosched_core_busy_ratio gauge\n# HELP",
	    "turbosched_core_jitter_tasks{core=\"1\",cpus=\"2,3\",node=\"-1\",domain=\"llc1\"} 1\n",
	    "turbosched_daemon_up 1\n",
	    "turbosched_daemon_degraded 0\n",
	    "turbosched_daemon_tagged_tasks{rule=\"house\"} 2\n",
	    "turbosched_daemon_late_events_total 7\n",
	    "turbosched_daemon_event_lag_max_seconds 0.048500\n",
	    "turbosched_daemon_reload_failures_total 1\n",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		ck_assert_msg(strstr(out_buf, want[i]), "missing %s in:\n%.3000s", want[i],
		              out_buf);
	ck_assert_ptr_null(strstr(out_buf, "idle_skipped"));
	promtool_check(out_buf);
	/* Every sample's family has a TYPE line, every counter ends in _total. */
	for (char *l = out_buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		char name[128], type[160];
		if (*l == '#')
			continue;
		ck_assert_int_eq(sscanf(l, "%127[a-z_]", name), 1);
		snprintf(type, sizeof(type), "# TYPE %s ", name);
		ck_assert_msg(strstr(out_buf, type), "no TYPE for %s", name);
	}

	/* Not root: no counters, the daemon down. */
	tree_remove("sys/kernel/debug/sched/pack_jitter/stats");
	ck_assert_int_eq(run("status", "--format=prometheus", "--sample=0", NULL), 0);
	ck_assert_ptr_nonnull(strstr(out_buf, "turbosched_kernel_counters_available 0\n"));
	ck_assert_ptr_nonnull(strstr(out_buf, "turbosched_daemon_up 0\n"));
	ck_assert_ptr_null(strstr(out_buf, "turbosched_packed"));
	promtool_check(out_buf);
	/* A kernel with idle_skipped and without the fall-back split. */
	tree_write("sys/kernel/debug/sched/pack_jitter/stats", "fallback 6\nidle_skipped 3\n");
	ck_assert_int_eq(run("status", "--format=prometheus", "--sample=0", NULL), 0);
	ck_assert_ptr_nonnull(strstr(out_buf, "turbosched_idle_skipped_total 3\n"));
	ck_assert_ptr_nonnull(
	    strstr(out_buf, "turbosched_fallback_placements_total{reason=\"other\"} 6\n"));
	promtool_check(out_buf);
}
END_TEST

START_TEST(table_and_cpulist_format)
{
	static const char *const hdr[] = {"A", "LONGER", "C"};
	struct table t;
	char buf[64];
	int cpus[] = {0, 1, 2, 5, 7, 8};
	size_t len;
	char *s;
	FILE *f;

	table_init(&t, 3, hdr);
	table_add(&t, "xyz", "1", "last");
	table_add(&t, "q", NULL, "z");
	f = open_memstream(&s, &len);
	table_print(&t, f);
	fclose(f);
	ck_assert_str_eq(s, "A    LONGER  C\nxyz  1       last\nq    -       z\n");
	free(s);
	table_free(&t);
	format_cpulist(buf, sizeof(buf), cpus, 6);
	ck_assert_str_eq(buf, "0-2,5,7-8");
}
END_TEST

START_TEST(permission_message)
{
	char buf[256];

	cli_clamp_error(buf, sizeof(buf), EPERM, 0, false);
	ck_assert_ptr_nonnull(strstr(buf, "owned by root (uid 0)"));
	ck_assert_ptr_nonnull(strstr(buf, "needs CAP_SYS_NICE"));
	cli_clamp_error(buf, sizeof(buf), EPERM, (uid_t)-1, true);
	ck_assert_ptr_nonnull(strstr(buf, "although CAP_SYS_NICE is held"));
	cli_clamp_error(buf, sizeof(buf), -ESRCH, 0, false);
	ck_assert_str_eq(buf, "no such process");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cli");
	TCase *tc = tcase_create("cli");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, usage_errors_exit_2);
	tcase_add_test(tc, help_and_version);
	tcase_add_test(tc, tag_json_and_exit_codes);
	tcase_add_test(tc, tag_without_uclamp);
	tcase_add_test(tc, tasks_table_and_json);
	tcase_add_test(tc, scan_with_daemon_registry);
	tcase_add_test(tc, status_json_per_core);
	tcase_add_test(tc, status_shows_failed_reload);
	tcase_add_test(tc, global_options_anywhere_and_help);
	tcase_add_test(tc, run_starts_tagged);
	tcase_add_test(tc, status_watch_rounds);
	tcase_add_test(tc, rules_show_tagged_counts);
	tcase_add_test(tc, status_prometheus);
	tcase_add_test(tc, table_and_cpulist_format);
	tcase_add_test(tc, permission_message);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
