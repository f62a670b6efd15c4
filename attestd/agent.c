/* Enrollment and attestation rounds; see agent.h. */
#include "attestd/agent.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "attestd/client.h"
#include "attestd/ekfile.h"
#include "attestd/imalist.h"
#include "attestd/imatrim.h"
#include "attestd/pace.h"
#include "attestd/tpm.h"
#include "attestd/watch.h"
#include "common/file.h"
#include "common/log.h"
#include "common/sdnotify.h"
#include "proto/dynbuf.h"
#include "proto/encoding.h"
#include "proto/errors.h"

#define SLEEP_SLICE_MS 200u

struct agent {
	const struct attestd_config *cfg;
	volatile sig_atomic_t *stop;
	struct tpm *tpm;
	struct ekfile ek_file; /* --ek-cert, read once; ek_file.cert NULL: none given */
	struct client *client;
	struct imalist *list;
	struct imatrim *trim; /* the export of deleted records, and deletion (imatrim.h) */
	struct list_watch *watch;
	struct list_mark round_mark; /* the list's mark when the last round began (watch.h) */
	bool round_marked;           /* round_mark was read */
	struct pace pace; /* rounds that new measurements bring forward (pace.h) */
	bool send_more;   /* the last round sent part of what it read, and the verifier kept it */
	bool enrolled;
	char boot_id[64]; /* the kernel's boot_id when the last verdict arrived; "" unknown */
	bool event_log_warned; /* the event log could not be read: said once */
	/* The challenge the last verdict carried: the next round answers it without asking. */
	struct challenge next;
	bool has_next;
};

/* What a failed step means for the caller. */
enum step_fail {
	STEP_RETRY,  /* transient: retry with backoff */
	STEP_FATAL,  /* the verifier refused us for good (e.g. agent_exists): --once exits 2 */
};

unsigned agent_backoff_next(unsigned *base_ms)
{
	unsigned base, span, d, r = 0;

	if (*base_ms < AGENT_BACKOFF_MIN_MS)
		base = AGENT_BACKOFF_MIN_MS;
	else if (*base_ms >= AGENT_BACKOFF_MAX_MS / 2)
		base = AGENT_BACKOFF_MAX_MS;
	else
		base = *base_ms * 2;
	*base_ms = base;
	span = base / 5; /* +-20% */
	if (RAND_bytes((unsigned char *)&r, sizeof(r)) != 1)
		r = (unsigned)rand();
	d = base - span + r % (2 * span + 1);
	/* attestd(8) promises at most 60 s: at the cap the jitter folds below it. */
	return d > AGENT_BACKOFF_MAX_MS ? 2 * AGENT_BACKOFF_MAX_MS - d : d;
}

/* Sleeps ms, waking early when *stop is set. */
static void nap(struct agent *a, unsigned ms)
{
	while (ms > 0 && !*a->stop) {
		unsigned slice = ms < SLEEP_SLICE_MS ? ms : SLEEP_SLICE_MS;
		struct timespec ts = { .tv_sec = slice / 1000, .tv_nsec = (long)(slice % 1000) * 1000000L };

		nanosleep(&ts, NULL); /* EINTR from our signal ends the slice early: fine */
		ms -= slice;
	}
}

static int state_path(const struct agent *a, const char *name, char *out, size_t cap)
{
	int n = snprintf(out, cap, "%s/%s", a->cfg->state_dir, name);

	return (n < 0 || (size_t)n >= cap) ? -ENAMETOOLONG : 0;
}

/*
 * Reads a small text file into out (NUL-terminated, trailing newline dropped); -EFBIG if it
 * does not fit.
 */
static int read_small_file(const char *path, char *out, size_t cap)
{
	struct dynbuf b;
	size_t n;
	int ret;

	dynbuf_init(&b, cap - 1);
	ret = file_read(path, &b);
	if (ret == 0) {
		n = (size_t)snprintf(out, cap, "%s", dynbuf_str(&b));
		if (n > 0 && out[n - 1] == '\n')
			out[n - 1] = '\0';
	}
	dynbuf_release(&b);
	return ret;
}

/*
 * True when the kernel booted since the last verdict (its boot_id changed). The verifier's
 * challenge still names the old boot's next entry; sending the new list from entry 0 at once
 * lets the verifier open the new boot session without a round wasted on a `reboot` verdict.
 */
static bool booted_since_last_verdict(struct agent *a, char *now, size_t cap)
{
	char path[PATH_MAX];

	if (read_small_file("/proc/sys/kernel/random/boot_id", now, cap) < 0)
		return false;
	if (!a->boot_id[0] && state_path(a, "boot-id", path, sizeof(path)) == 0)
		(void)read_small_file(path, a->boot_id, sizeof(a->boot_id));
	return a->boot_id[0] && strcmp(a->boot_id, now) != 0;
}

/* The marker names what we enrolled as and with whom: a changed id or verifier re-enrolls. */
static int marker_text(const struct agent *a, char *out, size_t cap)
{
	int n = snprintf(out, cap, "agent_id=%s\nverifier=%s\n", a->cfg->agent_id,
			 a->cfg->verifier);

	return (n < 0 || (size_t)n >= cap) ? -ENAMETOOLONG : 0;
}

static bool marker_present(const struct agent *a)
{
	char path[PATH_MAX], want[PATH_MAX + 256];
	struct dynbuf got;
	bool same;

	if (state_path(a, "enrolled", path, sizeof(path)) < 0 ||
	    marker_text(a, want, sizeof(want)) < 0)
		return false;
	dynbuf_init(&got, sizeof(want));
	same = file_read(path, &got) == 0 && strcmp(dynbuf_str(&got), want) == 0;
	dynbuf_release(&got);
	return same;
}

static int write_state_file(const struct agent *a, const char *name, const char *text)
{
	char path[PATH_MAX];
	int ret;

	if (state_path(a, name, path, sizeof(path)) < 0)
		return -ENAMETOOLONG;
	ret = file_write_atomic(path, text, strlen(text), 0600);
	if (ret < 0)
		log_error("cannot write state file '%s': %s", path, strerror(-ret));
	return ret;
}

static void marker_drop(struct agent *a)
{
	char path[PATH_MAX];

	a->enrolled = false;
	a->has_next = false;
	if (state_path(a, "enrolled", path, sizeof(path)) == 0)
		unlink(path);
}

static int marker_write(struct agent *a)
{
	char text[PATH_MAX + 256];
	int ret = marker_text(a, text, sizeof(text));

	if (ret == 0)
		ret = write_state_file(a, "enrolled", text);
	if (ret == 0)
		a->enrolled = true;
	return ret;
}

/* Drops the TPM connection after a TPM failure: the next step reconnects and reloads. */
static void tpm_reset(struct agent *a)
{
	tpm_close(a->tpm);
	a->tpm = NULL;
}

/* Opens the TPM with the EK the settings choose (--ek-profile, --ek-cert's key). */
static int agent_tpm_ek(struct agent *a)
{
	int ret;

	if (a->cfg->ek_cert && !a->ek_file.cert) {
		ret = ekfile_read(a->cfg->ek_cert, &a->ek_file);
		if (ret < 0)
			return ret;
	}
	a->tpm = tpm_open(a->cfg->tcti);
	if (!a->tpm)
		return -EIO;
	ret = tpm_ek_choose(a->tpm,
			    strcasecmp(a->cfg->ek_profile, "auto") == 0
				    ? NULL
				    : tpmkey_ek_profile_by_id(a->cfg->ek_profile),
			    a->ek_file.key);
	if (ret < 0)
		tpm_reset(a);
	return ret;
}

/* Opens what a step needs: TPM with EK and AK, HTTPS client, list reader. */
static int agent_setup(struct agent *a)
{
	bool created = false;
	int ret;

	if (!a->client) {
		a->client = client_new(a->cfg->verifier, a->cfg->ca);
		if (!a->client)
			return -ENOMEM;
	}
	if (!a->list) {
		a->list = imalist_new(a->cfg->ima_list);
		if (!a->list)
			return -ENOMEM;
	}
	if (!a->trim) {
		a->trim = imatrim_new(a->cfg->ima_list, a->cfg->ima_export,
				      a->cfg->ima_keep_records);
		if (!a->trim)
			return -ENOMEM;
		/* A crash between an export and its deletion, or a new boot: logged, and counted
		 * again before the export is used. */
		(void)imatrim_reconcile(a->trim);
	}
	if (!a->watch && a->cfg->watch) {
		a->watch = list_watch_new(a->cfg->ima_list);
		if (!a->watch)
			return -ENOMEM;
	}
	if (a->tpm)
		return 0;
	if ((ret = agent_tpm_ek(a)) < 0)
		return ret;
	ret = tpm_ak_load_or_create(a->tpm, a->cfg->state_dir, a->cfg->ak_alg, &created);
	if (ret < 0) {
		tpm_reset(a);
		return ret;
	}
	if (created)
		marker_drop(a); /* a new AK means a new enrollment */
	else
		a->enrolled = marker_present(a);
	return 0;
}

/* STATUS= for `systemctl status` (common/sdnotify.h); a no-op outside systemd. */
static void __attribute__((format(printf, 1, 2))) notify_status(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	int n = snprintf(msg, sizeof(msg), "STATUS=");

	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
	va_end(ap);
	(void)sdnotify(msg);
}

/*
 * The EK certificate and the intermediates sent with it: the --ek-cert file's, else the
 * TPM's NV; the chain is the file's intermediates, then those the TPM keeps in NV.
 */
static int agent_ek_cert(struct agent *a, struct enroll_request *req)
{
	struct dynbuf chain;
	unsigned n = a->ek_file.nchain;
	int ret;

	if (a->ek_file.cert) {
		req->ek_cert = malloc(a->ek_file.cert_len);
		if (!req->ek_cert)
			return -ENOMEM;
		memcpy(req->ek_cert, a->ek_file.cert, a->ek_file.cert_len);
		req->ek_cert_len = a->ek_file.cert_len;
	} else {
		ret = tpm_ek_cert(a->tpm, &req->ek_cert, &req->ek_cert_len);
		if (ret < 0)
			return ret;
	}
	dynbuf_init(&chain, LIMIT_EK_CHAIN);
	ret = dynbuf_add(&chain, a->ek_file.chain.buf, a->ek_file.chain.len);
	if (ret == 0)
		ret = tpm_ek_chain(a->tpm, &chain, &n);
	if (ret == 0 && chain.len) {
		req->ek_chain = malloc(chain.len);
		if (!req->ek_chain) {
			ret = -ENOMEM;
		} else {
			memcpy(req->ek_chain, chain.buf, chain.len);
			req->ek_chain_len = chain.len;
			log_debug("sending %u intermediate certificates with the ek certificate", n);
		}
	}
	dynbuf_release(&chain);
	return ret;
}

static int agent_enroll(struct agent *a, enum step_fail *why)
{
	struct enroll_request req;
	struct enroll_response resp = { 0 };
	struct activate_request act;
	struct client_error err;
	int ret;

	memset(&req, 0, sizeof(req));
	memset(&act, 0, sizeof(act));
	snprintf(req.agent_id, sizeof(req.agent_id), "%s", a->cfg->agent_id);
	if ((ret = tpm_ek_public(a->tpm, &req.ek_pub, &req.ek_pub_len)) < 0 ||
	    (ret = agent_ek_cert(a, &req)) < 0 ||
	    (ret = tpm_ak_public(a->tpm, &req.ak_pub, &req.ak_pub_len)) < 0) {
		if (ret == -ENOENT)
			log_error("the tpm has no ek certificate at the profile's nv index; the "
				  "verifier needs one to trust the ek: give it with --ek-cert FILE");
		if (ret != -EINVAL && ret != -EFBIG)
			tpm_reset(a);
		goto out;
	}
	ret = client_enroll(a->client, &req, &resp, &err);
	if (ret == -EPROTO && proto_error_action(err.status, err.code) == PROTO_ACTION_DONE) {
		log_info("verifier says agent '%s' is already enrolled with this ak",
			 a->cfg->agent_id);
		ret = marker_write(a);
		goto out;
	}
	if (ret < 0) {
		if (ret == -EPROTO &&
		    proto_error_action(err.status, err.code) == PROTO_ACTION_GIVE_UP) {
			log_error("enrollment of agent '%s' refused: %s (%s)", a->cfg->agent_id,
				  err.code, err.message);
			*why = STEP_FATAL;
		}
		goto out;
	}
	ret = tpm_activate_credential(a->tpm, resp.credential_blob, resp.credential_blob_len,
				      resp.encrypted_secret, resp.encrypted_secret_len, act.secret,
				      sizeof(act.secret), &act.secret_len);
	if (ret < 0) {
		if (ret != -EINVAL)
			tpm_reset(a);
		goto out;
	}
	ret = client_activate(a->client, a->cfg->agent_id, &act, &err);
	if (ret < 0) {
		if (ret == -EPROTO &&
		    proto_error_action(err.status, err.code) == PROTO_ACTION_GIVE_UP)
			*why = STEP_FATAL;
		goto out;
	}
	ret = marker_write(a);
	if (ret == 0)
		log_info("agent '%s' enrolled and activated", a->cfg->agent_id);
out:
	OPENSSL_cleanse(&act, sizeof(act));
	free(req.ek_pub);
	free(req.ek_cert);
	free(req.ak_pub);
	free(req.ek_chain);
	enroll_response_release(&resp);
	return ret;
}

/* "verdict trusted id=N next_offset=N" or "... untrusted ... reasons=a,b": one line, no newline. */
static void format_verdict(const struct verdict_response *v, char *buf, size_t cap)
{
	size_t n = (size_t)snprintf(buf, cap, "verdict %s id=%lld next_offset=%llu",
				    v->trusted ? "trusted" : "untrusted", (long long)v->verdict_id,
				    (unsigned long long)v->next_offset);

	for (unsigned i = 0; i < v->nreasons && n < cap; i++)
		n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? "," : " reasons=",
				      v->reason[i].code);
}

static void print_verdict(const struct verdict_response *v)
{
	char line[2048];

	format_verdict(v, line, sizeof(line));
	printf("%s\n", line);
	fflush(stdout);
}

/* Keeps the evidence sent last (operators and tests look at it; it holds no secret). */
static void keep_last_evidence(struct agent *a, const struct evidence *ev)
{
	char *json = evidence_encode(ev);

	if (json)
		write_state_file(a, "last-evidence.json", json);
	free(json);
}

/*
 * The firmware's event log and the kernel command line, into ev, unless the verifier holds
 * this very log already (its challenge names the SHA-256). A machine without a log, or
 * --event-log none, sends none; a log that cannot be read is left out with a warning (once):
 * the round goes on, and a boot policy on the verifier says what it misses.
 */
static void attach_boot_log(struct agent *a, const struct challenge *ch, struct evidence *ev)
{
	struct dynbuf log, cmd;
	uint8_t sha[32];
	int ret;

	if (!strcmp(a->cfg->event_log, "none"))
		return;
	dynbuf_init(&log, LIMIT_EVENTLOG_BYTES);
	ret = file_read(a->cfg->event_log, &log);
	if (ret < 0 || log.len == 0) {
		if (!a->event_log_warned)
			log_warn("cannot read the firmware event log '%s': %s; no boot log is sent",
				 a->cfg->event_log, ret < 0 ? strerror(-ret) : "empty");
		a->event_log_warned = true;
		dynbuf_release(&log);
		return;
	}
	a->event_log_warned = false;
	EVP_Digest(log.buf, log.len, sha, NULL, EVP_sha256(), NULL);
	if (ch->has_boot_log_sha256 && !memcmp(sha, ch->boot_log_sha256, sizeof(sha))) {
		dynbuf_release(&log);
		return;
	}
	ev->boot_log = (uint8_t *)dynbuf_take(&log, &ev->boot_log_len);
	if (!ev->boot_log)
		return;
	dynbuf_init(&cmd, LIMIT_CMDLINE + 1);
	ret = file_read(a->cfg->cmdline, &cmd);
	if (ret == 0 && cmd.len && cmd.buf[cmd.len - 1] == '\n')
		dynbuf_setlen(&cmd, cmd.len - 1);
	if (ret == 0 && cmd.len <= LIMIT_CMDLINE && !memchr(cmd.buf, 0, cmd.len)) {
		/* The protocol is JSON: a command line that is not UTF-8 cannot travel. */
		json_t *t = json_stringn(dynbuf_str(&cmd), cmd.len);

		if (t)
			ev->boot_cmdline = dynbuf_take(&cmd, NULL);
		json_decref(t);
	}
	if (!ev->boot_cmdline)
		log_warn("cannot send the kernel command line '%s': %s", a->cfg->cmdline,
			 ret < 0 ? strerror(-ret) : "longer than " LIMIT_STR(LIMIT_CMDLINE) " bytes, or not UTF-8");
	dynbuf_release(&cmd);
	log_info("sending the firmware event log (%zu bytes)%s", ev->boot_log_len,
		 ch->has_boot_log_sha256 ? ": the verifier holds another" : "");
}

/*
 * Whether the verifier answered that it does not know this agent as active (purged, its store
 * restored without it, never activated, retired and then reset by an operator): then the
 * enrolled marker is dropped, so that agent_step() enrolls again. Asked for a challenge, or
 * answering the one a verdict carried. A retired agent that was not reset keeps its marker:
 * its enrollment would be refused as well.
 */
static bool forgotten(struct agent *a, int ret, const struct client_error *err)
{
	if (ret != -EPROTO || proto_error_action(err->status, err->code) != PROTO_ACTION_ENROLL)
		return false;
	log_warn("verifier does not know agent '%s' as active (%s); enrolling again",
		 a->cfg->agent_id, err->code);
	marker_drop(a);
	return true;
}

/*
 * One round answering `given` (the challenge the last verdict carried), or a challenge asked
 * for when `given` is NULL; on success *v holds the verdict. *refused: the verifier refused
 * `given`'s nonce (PROTO_ACTION_NEW_CHALLENGE in proto/errors.h).
 */
/*
 * The passport (--ear-file): the EAR of the verdict just received, replacing the last one
 * atomically (a reader sees the old one or the new one, never a mix). Readable by all: it is a
 * signed statement meant to be shown, no secret. A verdict without one (an older verifier, or
 * one that restarted between the commit and the signature) leaves the file as it was: its
 * "exp" says until when it stands.
 */
static void write_ear(struct agent *a, const char *ear)
{
	size_t n;
	char *text;
	int ret;

	if (!ear) {
		log_warn("the verifier sent no attestation result (EAR) with the verdict (an older"
			 " verifier?); \"%s\" keeps the last one", a->cfg->ear_file);
		return;
	}
	n = strlen(ear);
	text = malloc(n + 2);
	if (!text)
		return;
	memcpy(text, ear, n);
	text[n] = '\n';
	text[n + 1] = '\0';
	ret = file_write_atomic(a->cfg->ear_file, text, n + 1, 0644);
	/* Whatever the umask (the unit's is 0077): local services read it. */
	if (ret == 0 && chmod(a->cfg->ear_file, 0644) < 0)
		ret = -errno;
	if (ret < 0)
		log_error("cannot write the attestation result to \"%s\": %s", a->cfg->ear_file,
			  strerror(-ret));
	free(text);
}

static int round_once(struct agent *a, const struct challenge *given, struct verdict_response *v,
		      enum step_fail *why, bool *refused)
{
	struct challenge ch;
	struct evidence ev;
	struct imalist_chunk chunk = { 0 };
	struct client_error err;
	char *ear = NULL;
	int ret = 0;

	memset(&ev, 0, sizeof(ev));
	memset(&err, 0, sizeof(err));
	*refused = false;
	if (given)
		ch = *given;
	else
		ret = client_challenge(a->client, a->cfg->agent_id, &ch, &err);
	if (forgotten(a, ret, &err))
		return ret;
	if (ret < 0)
		return ret;

	/* Before the quote: an entry measured from here on brings the next round forward, even if
	 * this round's read already carries it (a round too many, never one too few). */
	a->round_marked = a->watch && list_watch_mark(a->watch, &a->round_mark) == 0;

	/* Quote first, then read the list: IMA appends an entry before it extends PCR 10. */
	ev.pcrs = ch.selection;
	ret = tpm_quote(a->tpm, ch.nonce, ch.nonce_len, &ev.pcrs, &ev.attest, &ev.attest_len,
			&ev.signature, &ev.signature_len);
	if (ret < 0) {
		if (ret != -EAGAIN && ret != -EINVAL)
			tpm_reset(a);
		goto out;
	}
	uint64_t offset = ch.log_offset;
	char boot_now[64] = "";
	if (offset && booted_since_last_verdict(a, boot_now, sizeof(boot_now))) {
		log_info("the machine booted since the last verdict; sending the list from entry 0");
		offset = 0;
	}
	ret = imatrim_read(a->trim, a->list, offset, 0, &chunk);
	if (ret < 0)
		goto out;
	if (chunk.short_list && offset) {
		/* Fewer entries than the verifier has seen: the list restarted, as after a reboot. */
		log_info("the ima list is shorter than entry %llu the verifier expects; it restarted, "
			 "sending it from entry 0", (unsigned long long)offset);
		free(chunk.data);
		memset(&chunk, 0, sizeof(chunk));
		offset = 0;
		ret = imatrim_read(a->trim, a->list, offset, 0, &chunk);
		if (ret < 0)
			goto out;
	}
	/* Entries the kernel deleted and the export lacks: the chunk starts at the kernel's first,
	 * and log_deleted tells the verifier why (proto/evidence.h, "Deleted records"). */
	ev.log_deleted = imatrim_log_deleted(&chunk, offset);
	offset = chunk.first;
	memcpy(ev.nonce, ch.nonce, ch.nonce_len);
	ev.nonce_len = ch.nonce_len;
	/* How long until the next round: the verifier calls the agent stale after a few. */
	ev.interval = a->cfg->interval;
	ev.want_ear = a->cfg->ear_file != NULL;
	attach_boot_log(a, &ch, &ev);
	ev.log_offset = offset;
	ev.log_more = chunk.more;
	ev.log = chunk.data;
	ev.log_len = chunk.len;
	chunk.data = NULL;
	if (chunk.count)
		log_info("sent entries %llu-%llu log_offset=%llu (%zu bytes%s)",
			 (unsigned long long)offset, (unsigned long long)(offset + chunk.count - 1),
			 (unsigned long long)offset, ev.log_len, chunk.more ? ", more next round" : "");
	else
		log_info("sent no new entries log_offset=%llu", (unsigned long long)offset);
	keep_last_evidence(a, &ev);
	ret = client_evidence(a->client, a->cfg->agent_id, &ev, v, ev.want_ear ? &ear : NULL, &err);
	if (ret == 0 && ev.want_ear)
		write_ear(a, ear);
	if (ret == 0 && (boot_now[0] || read_small_file("/proc/sys/kernel/random/boot_id", boot_now,
							 sizeof(boot_now)) == 0) &&
	    strcmp(boot_now, a->boot_id) != 0) {
		snprintf(a->boot_id, sizeof(a->boot_id), "%s", boot_now);
		(void)write_state_file(a, "boot-id", boot_now);
	}
	if (given && ret == -EPROTO &&
	    proto_error_action(err.status, err.code) == PROTO_ACTION_NEW_CHALLENGE)
		*refused = true;
	else if (forgotten(a, ret, &err))
		; /* agent_step() enrolls again */
	else if (ret == -EPROTO && proto_error_action(err.status, err.code) == PROTO_ACTION_GIVE_UP)
		*why = STEP_FATAL; /* the verifier refused our evidence for good */
	if (ret == 0 && v->has_next_challenge) {
		a->next = v->next_challenge;
		a->has_next = true;
	}
	/* The rest of a list larger than one request goes next round, at once, as long as the
	 * verifier keeps the parts (its next_offset moved past this one's start); an older
	 * verifier that does not (pcr_mismatch) gets the rounds of the interval. */
	a->send_more = ret == 0 && chunk.more && v->next_offset > offset;
	if (ret == 0) {
		/* The verifier committed its replay up to next_offset before it answered: records
		 * below it may leave kernel memory (exported first). A failure is logged and
		 * retried after the next verdict; the round stands. */
		uint64_t to;

		(void)imatrim_after_verdict(a->trim, a->list, v->next_offset, &to);
	}
out:
	free(chunk.data);
	free(ear);
	evidence_release(&ev);
	OPENSSL_cleanse(&ch, sizeof(ch));
	return ret;
}

/*
 * One round; on success *v holds the verdict. A round answers the challenge the last verdict
 * carried (one exchange: proto/evidence.h, "One exchange per round"), or asks for one when
 * there is none or the verifier does not take it.
 */
static int agent_round(struct agent *a, struct verdict_response *v, enum step_fail *why)
{
	struct challenge given;
	bool has_given = a->has_next, refused = false;
	int ret;

	a->has_next = false;
	given = a->next;
	OPENSSL_cleanse(&a->next, sizeof(a->next));
	if (has_given) {
		ret = round_once(a, &given, v, why, &refused);
		OPENSSL_cleanse(&given, sizeof(given));
		if (!refused)
			return ret;
		log_info("the verifier does not take the challenge it gave with the last verdict"
			 " (it restarted, the nonce expired, or the round is large); asking for one");
	}
	return round_once(a, NULL, v, why, &refused);
}

/* Setup, enrollment if needed, one round. */
static int agent_step(struct agent *a, struct verdict_response *v, enum step_fail *why)
{
	int ret;

	*why = STEP_RETRY;
	ret = agent_setup(a);
	if (ret < 0)
		return ret;
	if (*a->stop)
		return -EINTR;
	if (!a->enrolled) {
		ret = agent_enroll(a, why);
		if (ret < 0)
			return ret;
		if (*a->stop)
			return -EINTR;
	}
	ret = agent_round(a, v, why);
	if (ret < 0 && !a->enrolled && !*a->stop) {
		/* The verifier forgot us: enroll and try once more right away. */
		ret = agent_enroll(a, why);
		if (ret == 0)
			ret = agent_round(a, v, why);
	}
	return ret;
}

static void agent_release(struct agent *a)
{
	tpm_close(a->tpm);
	ekfile_release(&a->ek_file);
	client_free(a->client);
	imalist_free(a->list);
	imatrim_free(a->trim);
	list_watch_free(a->watch);
}

/* Seconds on CLOCK_MONOTONIC: the time the pace of brought-forward rounds is kept in. */
static double monotonic_seconds(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

/*
 * The wait after a verdict: the interval (the heartbeat), cut short when the list's mark moved
 * since the last round began and the pace (--round-burst, --round-gap) allows a round now, or
 * within the interval. Without --watch, a plain nap.
 */
static void wait_next_round(struct agent *a)
{
	unsigned interval_ms = a->cfg->interval * 1000u, watch_ms = a->cfg->watch * 1000u;
	unsigned waited = 0;
	struct list_mark now;

	if (!a->watch || !a->round_marked || !watch_ms) {
		nap(a, interval_ms);
		return;
	}
	while (waited < interval_ms && !*a->stop) {
		unsigned step = interval_ms - waited < watch_ms ? interval_ms - waited : watch_ms;

		nap(a, step);
		waited += step;
		if (*a->stop || waited >= interval_ms)
			return;
		if (list_watch_mark(a->watch, &now) < 0 || !list_mark_changed(&a->round_mark, &now))
			continue;
		double left = pace_wait(&a->pace, monotonic_seconds());
		if (left > 0.0) {
			/* A millisecond over, so that the token is whole when the nap ends. */
			unsigned left_ms = (unsigned)(left * 1000.0) + 1u;

			if (waited + left_ms >= interval_ms)
				continue; /* the heartbeat comes first */
			nap(a, left_ms);
			waited += left_ms;
			if (*a->stop)
				return;
		}
		if (pace_spend(&a->pace, monotonic_seconds()) < 0)
			continue; /* not whole yet: look again at the next step */
		log_info("new measurements since the last round; sending a round now");
		return;
	}
}

int agent_print_ek_sha256(const struct attestd_config *cfg)
{
	struct agent a = { .cfg = cfg };
	uint8_t *pub = NULL, d[32];
	char hex[2 * sizeof(d) + 1];
	unsigned int dlen = 0;
	size_t len = 0;
	int ret;

	/* The EK and its public area exactly as agent_enroll() sends them. */
	if ((ret = agent_tpm_ek(&a)) < 0 || (ret = tpm_ek_public(a.tpm, &pub, &len)) < 0)
		goto out;
	if (EVP_Digest(pub, len, d, &dlen, EVP_sha256(), NULL) != 1 || dlen != sizeof(d)) {
		ret = -EIO;
		goto out;
	}
	hex_encode(d, sizeof(d), hex);
	printf("%s\n", hex);
	ret = fflush(stdout) ? -EIO : 0;
out:
	if (ret < 0)
		log_error("cannot read the EK's public area: %s", strerror(-ret));
	free(pub);
	tpm_close(a.tpm);
	ekfile_release(&a.ek_file);
	return ret;
}

int agent_run(const struct attestd_config *cfg, volatile sig_atomic_t *stop)
{
	struct agent a = { .cfg = cfg, .stop = stop };
	struct verdict_response *v = malloc(sizeof(*v)); /* ~35 KiB: keep it off the stack */
	unsigned backoff = 0;
	bool ready = false;
	enum step_fail why;
	int ret;

	if (!v)
		return cfg->once ? AGENT_EXIT_ERROR : -ENOMEM;
	srand((unsigned)time(NULL) ^ (unsigned)getpid());
	pace_init(&a.pace, cfg->round_burst, cfg->round_gap, monotonic_seconds());
	if (cfg->once) {
		ret = agent_step(&a, v, &why);
		if (ret == 0) {
			print_verdict(v);
			ret = v->trusted ? AGENT_EXIT_TRUSTED : AGENT_EXIT_UNTRUSTED;
		} else {
			printf("error %s\n", strerror(-ret));
			ret = AGENT_EXIT_ERROR;
		}
		goto out;
	}
	log_info("agent '%s' attesting to '%s' every %u s", cfg->agent_id, cfg->verifier,
		 cfg->interval);
	while (!*stop) {
		ret = agent_step(&a, v, &why);
		if (*stop)
			break;
		/* Ready once the TPM answered with our AK: what is left (the verifier, the network)
		 * comes and goes, and waiting for it would fail the unit's start. */
		if (!ready && a.tpm) {
			(void)sdnotify("READY=1");
			ready = true;
		}
		if (ret == 0) {
			backoff = 0;
			/* Every verdict is an event for whoever reads the guest's log; last-verdict lets
			 * local tooling see the latest without parsing the log. */
			char line[2048];
			format_verdict(v, line, sizeof(line) - 1); /* room for the newline */
			if (v->trusted)
				log_info("%s", line);
			else
				log_warn("%s", line);
			notify_status("%s", line);
			snprintf(line + strlen(line), sizeof(line) - strlen(line), "\n");
			write_state_file(&a, "last-verdict", line);
			if (a.send_more)
				log_info("more entries than one round holds: sending the rest now");
			else
				wait_next_round(&a);
			continue;
		}
		{
			unsigned ms = agent_backoff_next(&backoff);

			log_warn("round failed (%s%s); retrying in %u ms", strerror(-ret),
				 why == STEP_FATAL ? ", refused by the verifier" : "", ms);
			notify_status("round failed (%s%s); retrying", strerror(-ret),
				      why == STEP_FATAL ? ", refused by the verifier" : "");
			nap(&a, ms);
		}
	}
	log_info("stopping");
	(void)sdnotify("STOPPING=1");
	ret = 0;
out:
	agent_release(&a);
	free(v);
	return ret;
}
