/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Proc connector parsing on hand-built datagrams, spoofed senders, ENOBUFS reporting. */
#include <check.h>
#include <errno.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "log.h"
#include "procconn.h"

static union {
	struct nlmsghdr h;
	char b[4096];
} dgram;
static size_t dlen;

/* Appends one netlink message with a proc_event of `evlen` bytes. */
static struct proc_event *append(unsigned idx, size_t evlen)
{
	return nl_put_proc_event(dgram.b, &dlen, idx, evlen);
}

static struct pc_event got[8];
static int ngot;

static void collect(void *ctx, const struct pc_event *ev)
{
	(void)ctx;
	if (ngot < 8)
		got[ngot++] = *ev;
}

static void reset(void)
{
	dlen = 0;
	ngot = 0;
	log_set_level(LOG_ERR);
}

START_TEST(test_parse_all_kinds)
{
	reset();
	struct proc_event *e = append(CN_IDX_PROC, sizeof(*e));
	e->what = PROC_EVENT_FORK;
	e->event_data.fork.parent_pid = 10;
	e->event_data.fork.parent_tgid = 10;
	e->event_data.fork.child_pid = 11;
	e->event_data.fork.child_tgid = 11;
	e = append(CN_IDX_PROC, sizeof(*e));
	e->what = PROC_EVENT_EXEC;
	e->event_data.exec.process_pid = 11;
	e->event_data.exec.process_tgid = 11;
	e = append(CN_IDX_PROC, sizeof(*e));
	e->what = PROC_EVENT_COMM;
	e->event_data.comm.process_pid = 12;
	e->event_data.comm.process_tgid = 11;
	e = append(CN_IDX_PROC, sizeof(*e));
	e->what = PROC_EVENT_UID;
	e->event_data.id.process_pid = 11;
	e->event_data.id.process_tgid = 11;
	e = append(CN_IDX_PROC, sizeof(*e));
	e->what = PROC_EVENT_NONE; /* the ack of LISTEN */
	e = append(CN_IDX_PROC, sizeof(*e));
	e->what = PROC_EVENT_SID; /* not subscribed to in spirit: ignored */
	e->event_data.sid.process_pid = 11;
	e = append(CN_IDX_PROC + 1, sizeof(*e)); /* another connector user */
	e->what = PROC_EVENT_EXIT;
	e = append(CN_IDX_PROC, sizeof(*e));
	e->what = PROC_EVENT_EXIT;
	e->event_data.exit.process_pid = 12;
	e->event_data.exit.process_tgid = 11;

	ck_assert_int_eq(procconn_parse(dgram.b, dlen, collect, NULL), 5);
	ck_assert_int_eq(ngot, 5);
	ck_assert_int_eq(got[0].what, PC_FORK);
	ck_assert_int_eq(got[0].ptid, 10);
	ck_assert_int_eq(got[0].tid, 11);
	ck_assert_int_eq(got[1].what, PC_EXEC);
	ck_assert_int_eq(got[2].what, PC_COMM);
	ck_assert_int_eq(got[2].tid, 12);
	ck_assert_int_eq(got[2].tgid, 11);
	ck_assert_int_eq(got[3].what, PC_UID);
	ck_assert_int_eq(got[4].what, PC_EXIT);
	ck_assert_int_eq(got[4].tid, 12);
}
END_TEST

START_TEST(test_parse_malformed)
{
	reset();
	/* An event too short for its fork data. */
	struct proc_event *e = append(CN_IDX_PROC, offsetof(struct proc_event, event_data) + 4);
	e->what = PROC_EVENT_FORK;
	ck_assert_int_eq(procconn_parse(dgram.b, dlen, collect, NULL), -EBADMSG);
	ck_assert_int_eq(ngot, 0);

	/* cn_msg claiming more data than the netlink message holds. */
	reset();
	e = append(CN_IDX_PROC, sizeof(*e));
	struct cn_msg *cn = NLMSG_DATA(&dgram.h);
	cn->len = 2000;
	ck_assert_int_eq(procconn_parse(dgram.b, dlen, collect, NULL), -EBADMSG);

	/* A truncated datagram stops the walk without reading past the end. */
	reset();
	e = append(CN_IDX_PROC, sizeof(*e));
	e->what = PROC_EVENT_EXEC;
	e->event_data.exec.process_pid = 5;
	e->event_data.exec.process_tgid = 5;
	ck_assert_int_eq(procconn_parse(dgram.b, 10, collect, NULL), 0);
	ck_assert_int_eq(procconn_parse(dgram.b, dlen, collect, NULL), 1);

	/* A zero pid is nonsense. */
	reset();
	e = append(CN_IDX_PROC, sizeof(*e));
	e->what = PROC_EVENT_EXEC;
	ck_assert_int_eq(procconn_parse(dgram.b, dlen, collect, NULL), -EBADMSG);
}
END_TEST

/* Fake receive: a script of (sender, errno) steps. */
static int step;
static unsigned sender;
static ssize_t scripted(int fd, void *buf, size_t len, struct sockaddr_nl *from)
{
	(void)fd;
	switch (step++) {
	case 0:
		errno = ENOBUFS;
		return -1;
	case 1:
		memcpy(buf, dgram.b, dlen < len ? dlen : len);
		from->nl_pid = sender;
		return (ssize_t)dlen;
	default:
		errno = EAGAIN;
		return -1;
	}
}

START_TEST(test_read_enobufs_and_spoofing)
{
	reset();
	struct proc_event *e = append(CN_IDX_PROC, sizeof(*e));
	e->what = PROC_EVENT_EXEC;
	e->event_data.exec.process_pid = 7;
	e->event_data.exec.process_tgid = 7;
	procconn_set_recv(scripted);

	step = 0;
	sender = 0;                                            /* the kernel */
	ck_assert_int_eq(procconn_read(-1, collect, NULL), 1); /* events were lost */
	ck_assert_int_eq(ngot, 1);                             /* ... and the rest delivered */

	ngot = 0;
	step = 0;
	sender = 4242; /* a user-space process pretending */
	ck_assert_int_eq(procconn_read(-1, collect, NULL), 1);
	ck_assert_int_eq(ngot, 0);

	step = 1;
	sender = 0;
	ck_assert_int_eq(procconn_read(-1, collect, NULL), 0);
	ck_assert_int_eq(ngot, 1);
	procconn_set_recv(NULL);
}
END_TEST

START_TEST(test_fuzzer_regression_short_fork)
{
	/* tests/fuzz/corpus-procconn/regress-misaligned-event: a FORK whose cn_msg announces only
	 * 20 bytes. The event used to be read in place at a 4-byte aligned offset (undefined
	 * behaviour for struct proc_event, caught by UBSan); it is now copied, then refused. */
	static const uint8_t bytes[] = {0x38, 0, 0, 0, 3,    0, 0, 0, 0, 0, 0, 0, 0, 0,
	                                0,    0, 1, 0, 0,    0, 1, 0, 0, 0, 0, 0, 0, 0,
	                                0,    0, 0, 0, 0x14, 0, 0, 0, 1, 0, 0, 0, 0, 0,
	                                0,    0, 0, 0, 0,    0, 0, 0, 0, 0, 1, 0, 0, 0};
	reset();
	memcpy(dgram.b, bytes, sizeof(bytes));
	ck_assert_int_eq(procconn_parse(dgram.b, sizeof(bytes), collect, NULL), -EBADMSG);
	ck_assert_int_eq(ngot, 0);
	/* A datagram shorter than its header says ends the walk instead of reading past it. */
	ck_assert_int_eq(procconn_parse(dgram.b, 40, collect, NULL), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("daemon_procconn");
	TCase *tc = tcase_create("procconn");
	tcase_add_test(tc, test_parse_all_kinds);
	tcase_add_test(tc, test_parse_malformed);
	tcase_add_test(tc, test_read_enobufs_and_spoofing);
	tcase_add_test(tc, test_fuzzer_regression_short_fork);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
