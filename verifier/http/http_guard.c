/* Connection deadlines and the body budget; the contract is in http_guard.h. */
#include "verifier/http/http_guard.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

#include "common/log.h"
#include "proto/limits.h"

#define SWEEP_MS 250 /* how late past its deadline a connection may be shut down */

struct http_guard_conn {
	struct http_guard_conn *prev, *next;
	int fd;
	int64_t deadline_ms; /* monotonic; 0: none */
	bool shut;
};

struct http_guard {
	pthread_mutex_t lock; /* the list, every conn's fields, `stop` */
	pthread_cond_t wake;
	struct http_guard_conn *head;
	bool stop;
	pthread_t sweeper;
	uint64_t reserved; /* body bytes, under `lock` too */
};

static int64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Seconds a transfer of `bytes` may take: a fixed allowance plus the bytes at the minimum rate. */
static int64_t transfer_ms(uint64_t bytes)
{
	return (int64_t)LIMIT_TRANSFER_SECONDS * 1000 +
	       (int64_t)(bytes / (LIMIT_TRANSFER_RATE / 1000u));
}

static void *sweep(void *arg)
{
	struct http_guard *g = arg;
	struct timespec until;

	pthread_mutex_lock(&g->lock);
	while (!g->stop) {
		int64_t now = now_ms();

		for (struct http_guard_conn *c = g->head; c; c = c->next) {
			if (c->shut || !c->deadline_ms || now < c->deadline_ms)
				continue;
			/*
			 * Under the lock: MHD has not notified this connection's close, so fd is
			 * still its socket. MHD sees EOF and closes it in its own thread.
			 */
			shutdown(c->fd, SHUT_RDWR);
			c->shut = true;
			log_debug("http: a connection missed its deadline by %lld ms; closed",
				  (long long)(now - c->deadline_ms));
		}
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += SWEEP_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&g->wake, &g->lock, &until);
	}
	pthread_mutex_unlock(&g->lock);
	return NULL;
}

struct http_guard *http_guard_new(void)
{
	struct http_guard *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	pthread_mutex_init(&g->lock, NULL);
	pthread_cond_init(&g->wake, NULL);
	if (pthread_create(&g->sweeper, NULL, sweep, g) != 0) {
		log_error("http: cannot start the connection sweeper");
		pthread_cond_destroy(&g->wake);
		pthread_mutex_destroy(&g->lock);
		free(g);
		return NULL;
	}
	return g;
}

void http_guard_free(struct http_guard *g)
{
	if (!g)
		return;
	pthread_mutex_lock(&g->lock);
	g->stop = true;
	pthread_cond_signal(&g->wake);
	pthread_mutex_unlock(&g->lock);
	pthread_join(g->sweeper, NULL);
	while (g->head)
		http_guard_conn_close(g, g->head);
	pthread_cond_destroy(&g->wake);
	pthread_mutex_destroy(&g->lock);
	free(g);
}

struct http_guard_conn *http_guard_conn_open(struct http_guard *g, int fd)
{
	struct http_guard_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->fd = fd;
	c->deadline_ms = now_ms() + (int64_t)LIMIT_HEADER_SECONDS * 1000;
	pthread_mutex_lock(&g->lock);
	c->next = g->head;
	if (g->head)
		g->head->prev = c;
	g->head = c;
	pthread_mutex_unlock(&g->lock);
	return c;
}

void http_guard_conn_close(struct http_guard *g, struct http_guard_conn *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&g->lock);
	if (c->prev)
		c->prev->next = c->next;
	else
		g->head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	pthread_mutex_unlock(&g->lock);
	free(c);
}

void http_guard_phase(struct http_guard *g, struct http_guard_conn *c,
		      enum http_guard_phase phase, uint64_t bytes)
{
	int64_t deadline = 0, now = now_ms();

	if (!c)
		return;
	if (phase == HTTP_GUARD_HEADERS)
		deadline = now + (int64_t)LIMIT_HEADER_SECONDS * 1000;
	else if (phase == HTTP_GUARD_TRANSFER)
		deadline = now + transfer_ms(bytes);
	pthread_mutex_lock(&g->lock);
	c->deadline_ms = deadline;
	pthread_mutex_unlock(&g->lock);
}

bool http_guard_reserve(struct http_guard *g, uint64_t bytes)
{
	bool ok;

	pthread_mutex_lock(&g->lock);
	ok = bytes <= LIMIT_BODY_BUDGET && g->reserved <= LIMIT_BODY_BUDGET - bytes;
	if (ok)
		g->reserved += bytes;
	pthread_mutex_unlock(&g->lock);
	return ok;
}

void http_guard_release(struct http_guard *g, uint64_t bytes)
{
	pthread_mutex_lock(&g->lock);
	g->reserved -= bytes <= g->reserved ? bytes : g->reserved;
	pthread_mutex_unlock(&g->lock);
}
