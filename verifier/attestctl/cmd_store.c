/*
 * attestctl store copy FROM-URI TO-URI
 *
 * Moves a verifier's store from one backend to another (SQLite to PostgreSQL and back), offline:
 * every verifier on either store is stopped first. Everything is copied (store_copy()): agents
 * and their keys, boot states and logs, verdicts, violations with the operators' decisions,
 * policies with every version and amendment, the agents' history, spent challenges and webhook
 * events not yet delivered. The target is created (or brought to this build's schema) and must
 * hold nothing; the copy is one transaction on it, so a failure leaves it as it was.
 * Exit: 0 copied, 1 the target is not empty, 2 usage or a store error.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "verifier/attestctl/commands.h"
#include "verifier/store/store.h"

int cmd_store(int argc, char **argv)
{
	int ret;

	if (argc != 4 || strcmp(argv[1], "copy") != 0) {
		fprintf(stderr, "usage: attestctl store copy FROM-URI TO-URI\n");
		return 2;
	}
	if (!strcmp(argv[2], argv[3])) {
		fprintf(stderr, "attestctl: store copy: FROM-URI and TO-URI are the same store\n");
		return 2;
	}
	ret = store_copy(argv[2], argv[3]);
	if (ret == -ENOTEMPTY) {
		fprintf(stderr, "attestctl: store copy: \"%s\" is not empty; nothing was copied\n",
			argv[3]);
		return 1;
	}
	if (ret) {
		fprintf(stderr, "attestctl: store copy failed: %s; the target is left as it was\n",
			strerror(-ret));
		return 2;
	}
	printf("store copied\n"); /* not the URIs: they may carry a password */
	return 0;
}
