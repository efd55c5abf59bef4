/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The program entry point; everything else lives in cli_main() so tests can call it. */
#include "commands.h"

int main(int argc, char **argv)
{
	return cli_main(argc, argv, stdout, stderr);
}
