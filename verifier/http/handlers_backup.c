#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "common/log.h"
#include "verifier/http/handlers.h"

/*
 * GET /v1/backup: a consistent copy of the store (store_backup()), streamed as the SQLite file
 * it is. Rounds go on while it is taken; the copy holds every verdict acknowledged before.
 */
void handle_backup(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	uint64_t size = 0;
	int fd = -1, ret;

	ret = store_backup(app->store, &fd, &size);
	if (ret) {
		http_reply_error(resp,
				 ret == -ENOSPC ? PROTO_ERR_BACKUP_NO_SPACE : PROTO_ERR_BACKUP_FAILED,
				 "the store could not be copied: %s", strerror(-ret));
		return;
	}
	log_info("backup: a copy of the store, %" PRIu64 " bytes, sent to an operator", size);
	http_reply_file(resp, 200, "application/vnd.sqlite3", fd, size);
}
