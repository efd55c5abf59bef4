/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef TS_TEST_HELPERS_CLI_H
#define TS_TEST_HELPERS_CLI_H

/*
 * turboschedctl itself (cli_main) running COMMAND PID on the tests' fake /proc and syscalls,
 * output discarded, with no daemon to ask (its socket path does not exist); its exit code.
 */
int ctl_quiet(const char *cmd, const char *pid);

#endif
