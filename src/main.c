/*
 * main.c - the sqlkcm program: hands the command line to the subcommand dispatch.
 */
#include "config.h"

#include <stdio.h>

#include "command.h"

int
main(int argc, char **argv)
{
	return command_main(argc, argv, stdout, stderr);
}
