/*
 * webhooks: delivers the events the store wrote into its outbox (store.h, "Webhook outbox") to
 * the operators' HTTP receivers, and raises agent.stale for agents that went silent.
 *
 * One thread owns the delivery: for each URL it claims the oldest due row, POSTs its body with
 * libcurl (common/http_client.h) and deletes the row on a 2xx answer; any other answer or a
 * transport failure counts an attempt and makes the row due again after a capped exponential
 * backoff (webhook_backoff()). A row is deleted only after its receiver acknowledged it, and the
 * outbox is the store's, so delivery is at least once across restarts and crashes: a receiver
 * recognises a repeated delivery by the event id (body "id", header X-Attest-Event-Id). Order is
 * oldest first per URL while the receiver answers; a row waiting for its retry does not hold
 * back the others.
 *
 * Every delivery is signed (verifier(8), WEBHOOKS): X-Attest-Timestamp is the delivery time
 * (Unix seconds) and X-Attest-Signature is "sha256=" and the lowercase hex HMAC-SHA256, keyed
 * with the shared secret, of the timestamp, one ".", and the body. The timestamp in the signed
 * material lets a receiver refuse an old delivery replayed to it.
 *
 * The same thread scans the agents once a second and raises agent.stale (once per silence,
 * store_agent_mark_stale()) for each active agent past its stale time.
 */
#ifndef VERIFIER_WEBHOOKS_H
#define VERIFIER_WEBHOOKS_H

#include <stddef.h>
#include <stdint.h>

struct app;
struct webhooks;

#define WEBHOOK_SIG_HEX 64u

struct webhooks_config {
	const char *const *urls;  /* http:// or https:// */
	size_t n;
	const char *secret_file;  /* the shared secret: the file's one line, at least 16 bytes */
	const char *ca_file;      /* PEM trust anchors for https receivers; NULL: the system's */
	unsigned max_backoff;     /* seconds: the longest wait between two attempts of a row */
};

/*
 * Checks the configuration (URLs, the secret), tells the store where events go
 * (store_set_webhooks(): call before the store is shared) and starts the thread. 0, or
 * -EINVAL / -ENOMEM / -errno of the secret file (logged). n == 0: nothing to do, *out NULL.
 */
int webhooks_start(struct app *app, const struct webhooks_config *cfg, struct webhooks **out);
/*
 * Wakes the thread to deliver now: a round that committed an event calls it, so that the
 * event leaves within the round's time instead of at the thread's next second. Kicks made
 * while the thread works are one look at the outbox, not one each. NULL-safe; thread-safe.
 */
void webhooks_kick(struct webhooks *w);

/* Stops the thread (a delivery in flight ends first, within its timeout); NULL-safe. */
void webhooks_stop(struct webhooks *w);

/* The signature header's hex: HMAC-SHA256(secret, "TIMESTAMP.BODY"). 0 or -EIO. */
int webhook_sign(const uint8_t *secret, size_t secret_len, int64_t timestamp, const char *body,
		 size_t body_len, char hex[WEBHOOK_SIG_HEX + 1]);

/* Seconds before attempt `attempts` + 1 of a row that failed `attempts` times (>= 1): 1, 2,
 * 4, ... doubling, at most max_backoff. */
unsigned webhook_backoff(uint32_t attempts, unsigned max_backoff);

#endif
