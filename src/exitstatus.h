/*
 * exitstatus.h - the exit statuses of sqlkcm and each of its commands.
 */
#ifndef SQLKCM_EXITSTATUS_H
#define SQLKCM_EXITSTATUS_H

enum {
	EXIT_OK = 0,		/* done */
	EXIT_FAILURE_RUN = 1,	/* the work failed: cluster, file or database error */
	EXIT_USAGE = 2,		/* bad command line, or a subcommand not built yet */
};

#endif
