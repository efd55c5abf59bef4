/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "helpers.h"

#include <errno.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

struct fake_sched fake;
static char root[256];

int run_suite(Suite *s)
{
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

struct proc_event *nl_put_proc_event(void *buf, size_t *len, unsigned int idx, size_t evlen)
{
	struct nlmsghdr *nh = (struct nlmsghdr *)((char *)buf + *len);
	size_t payload = sizeof(struct cn_msg) + evlen;
	memset(nh, 0, NLMSG_SPACE(payload));
	nh->nlmsg_len = NLMSG_LENGTH(payload);
	nh->nlmsg_type = NLMSG_DONE;
	struct cn_msg *cn = NLMSG_DATA(nh);
	cn->id.idx = idx;
	cn->id.val = CN_VAL_PROC;
	cn->len = (unsigned short)evlen;
	*len += NLMSG_SPACE(payload);
	return (struct proc_event *)(void *)cn->data;
}

const char *fixture(const char *name)
{
	static char buf[4096];
	const char *dir = getenv("FIXTURES");

	snprintf(buf, sizeof(buf), "%s/%s", dir ? dir : "tests/unit/fixtures", name);
	return buf;
}

static void mkdirs(const char *path)
{
	char tmp[4096];

	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++) {
		if (*p == '/') {
			*p = '\0';
			mkdir(tmp, 0755);
			*p = '/';
		}
	}
}

void tree_write(const char *rel, const char *content)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	mkdirs(path);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		abort();
	}
	fputs(content, f);
	fclose(f);
}

void tree_symlink(const char *rel, const char *target)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	mkdirs(path);
	unlink(path);
	if (symlink(target, path) < 0) {
		perror(path);
		abort();
	}
}

void tree_remove(const char *rel)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	unlink(path);
}

const char *tree_new(void)
{
	char run[300];

	snprintf(root, sizeof(root), "/tmp/ts-test-XXXXXX");
	if (!mkdtemp(root))
		abort();
	ts_root_set(root);
	/* /run always exists on a real system; the state directory is created below it. */
	snprintf(run, sizeof(run), "%s/run", root);
	mkdir(run, 0755);
	tree_write("proc/sys/kernel/sched_util_clamp_max", "1024\n");
	return root;
}

static int rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(p);
}

void tree_free(void)
{
	if (root[0])
		nftw(root, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	root[0] = '\0';
	ts_root_set("");
}

static void write_stat(pid_t dir, pid_t tid, const char *comm, unsigned long long st, int cpu,
                       pid_t ppid)
{
	char rel[256], line[1024];

	/* Fields 3..: state, ppid, 17 zeros up to field 21, starttime (22), ..., cpu (39), ... */
	snprintf(
	    line, sizeof(line),
	    "%d (%s) S %d 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0 %llu 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 "
	    "0 %d 0 0 0 0 0\n",
	    (int)tid, comm, (int)ppid, st, cpu);
	snprintf(rel, sizeof(rel), "proc/%d/task/%d/stat", (int)dir, (int)tid);
	tree_write(rel, line);
}

void tree_add_task(pid_t tgid, pid_t tid, const char *comm, unsigned long long st, int cpu,
                   uid_t uid)
{
	tree_add_child(1, tgid, tid, comm, st, cpu, uid);
}

void tree_add_child(pid_t ppid, pid_t tgid, pid_t tid, const char *comm, unsigned long long st,
                    int cpu, uid_t uid)
{
	char rel[256], buf[512];

	write_stat(tgid, tid, comm, st, cpu, ppid);
	if (tid != tgid)
		write_stat(tid, tid, comm, st, cpu, ppid);
	snprintf(rel, sizeof(rel), "proc/%d/task/%d/status", (int)tgid, (int)tid);
	snprintf(buf, sizeof(buf), "Name:\t%s\nTgid:\t%d\nPid:\t%d\nUid:\t%u\t%u\t%u\t%u\n", comm,
	         (int)tgid, (int)tid, uid, uid, uid, uid);
	tree_write(rel, buf);
	if (tid != tgid) {
		snprintf(rel, sizeof(rel), "proc/%d/task/%d/status", (int)tid, (int)tid);
		tree_write(rel, buf);
	}
	snprintf(rel, sizeof(rel), "proc/%d/task/%d/cgroup", (int)tgid, (int)tid);
	tree_write(rel, "0::/test.slice\n");
}

void tree_set_starttime(pid_t tgid, pid_t tid, unsigned long long st)
{
	write_stat(tgid, tid, "stranger", st, 0, 1);
	if (tid != tgid)
		write_stat(tid, tid, "stranger", st, 0, 1);
}

void tree_remove_task(pid_t tgid, pid_t tid)
{
	char rel[512];

	snprintf(rel, sizeof(rel), "%s/proc/%d/task/%d", root, (int)tgid, (int)tid);
	nftw(rel, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	if (tid != tgid) {
		snprintf(rel, sizeof(rel), "%s/proc/%d", root, (int)tid);
		nftw(rel, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	}
}

struct fake_task *fake_get(pid_t tid)
{
	for (int i = 0; i < fake.n; i++)
		if (fake.t[i].tid == tid && fake.t[i].exists)
			return &fake.t[i];
	return NULL;
}

struct fake_task *fake_add(pid_t tid, uint32_t policy, uint32_t util_min, uint32_t util_max)
{
	struct fake_task *t = &fake.t[fake.n++];

	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->exists = true;
	t->policy = policy;
	t->util_min = util_min;
	t->util_max = util_max;
	return t;
}

static int fake_getattr(pid_t tid, struct sched_attr *a, unsigned int size, unsigned int flags)
{
	struct fake_task *t;

	if (fake.before_get)
		fake.before_get(tid);
	t = fake_get(tid);
	if (!t) {
		errno = ESRCH;
		return -1;
	}
	memset(a, 0, size);
	a->size = SCHED_ATTR_SIZE_VER1;
	a->sched_policy = t->policy;
	a->sched_util_min = t->util_min;
	a->sched_util_max = t->util_max;
	return 0;
}

/* Mirrors the kernel's checks that matter here: KEEP flags, clamp range, min <= max, reset. */
static int fake_setattr(pid_t tid, struct sched_attr *a, unsigned int flags)
{
	struct fake_task *t = fake_get(tid);
	uint32_t mn, mx;

	fake.nset++;
	fake.last = *a;
	fake.last_flags = flags;
	if (!t) {
		errno = ESRCH;
		return -1;
	}
	if (t->set_errno) {
		errno = t->set_errno;
		return -1;
	}
	mn = a->sched_flags & SCHED_FLAG_UTIL_CLAMP_MIN ? a->sched_util_min : t->util_min;
	mx = a->sched_flags & SCHED_FLAG_UTIL_CLAMP_MAX ? a->sched_util_max : t->util_max;
	if ((mn != TS_UCLAMP_RESET && mn > 1024) || (mx != TS_UCLAMP_RESET && mx > 1024)) {
		errno = EINVAL;
		return -1;
	}
	if (mn == TS_UCLAMP_RESET)
		mn = ts_policy_is_rt(t->policy) ? 1024 : 0;
	if (mx == TS_UCLAMP_RESET)
		mx = 1024;
	if (mn > mx) {
		errno = EINVAL;
		return -1;
	}
	t->util_min = mn;
	t->util_max = mx;
	if (fake.after_set)
		fake.after_set(tid);
	return 0;
}

static const struct ts_sched_ops fake_ops = {
    .setattr = fake_setattr,
    .getattr = fake_getattr,
};

void fake_install(void)
{
	memset(&fake, 0, sizeof(fake));
	ts_sched_ops_set(&fake_ops);
}
