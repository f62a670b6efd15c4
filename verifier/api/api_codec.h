/*
 * api_codec: the operator API's resources as they travel, in one place: the agent, its verdicts
 * and its hourly counters (GET /v1/agents, /v1/agents/{id}, .../verdicts, .../counters), the
 * violations (GET /v1/violations) and what a decision did (POST /v1/violations/{id}/approve,
 * dismiss), an agent's history (GET /v1/agents/{id}/history), the named policies and the
 * versions of a policy or an amendment (GET /v1/policies, .../versions), what storing a policy
 * and a rollback did, an agent's amendment, its attestation result and a signing key's rotation
 * (handlers_ear.c), the registrations (/v1/registrations), labels (PUT /v1/agents/{id}/labels,
 * POST /v1/policies/{name}/assign), the audit trail's head (GET /v1/audit/head), a policy as
 * enforced (GET /v1/policies/{name}/enforced), the small changes (an agent's policy, retire,
 * reset, a policy deleted, the rollback and approval requests), the webhook events (their
 * bodies, written by the store in the transaction that raises them), the list answers' wrappers,
 * a verdict's reasons (written by verifier/service/round.c, stored with the verdict) and an
 * agent's boot summary (written by verifier/decision/boot_check.c, stored with the round) with
 * the members of its log the handler adds.
 * The handlers (verifier/http/handlers_*.c) and the store (store.c, the events) fill a struct
 * and encode it; attestctl encodes the requests it sends and decodes the answers into the same
 * structs; their members are named nowhere else in C. docs/openapi.json describes the same
 * members (tests/integration/openapi.sh validates the answers against it); the web page
 * (verifier/http/ui/app.js) reads them by name in JavaScript. tests/unit/test_api_codec holds
 * every resource these encoders write to its schema in docs/openapi.json (each member a property
 * the schema names, each required one written), and tests/install/ui_fields.sh every member the
 * page reads to the same document.
 *
 * This is the lowest of the verifier's layers (it includes only jansson), so that every layer
 * above, the store included, writes the API's JSON through it. The evidence record
 * (GET /v1/verdicts/{id}/evidence) is not here: it is a file format with a strict parser of its
 * own for untrusted input (verifier/decision/evidence_record.h), written by the verifier and
 * read by attestctl verify-evidence through that one module.
 *
 * Encoding: a JSON object whose members come in the order of the struct (the answers are
 * written compact, in that order), NULL when out of memory or a string is not UTF-8.
 * A const char * member that is NULL is encoded as null where the resource says so
 * (last_verdict, ek_cert, ak_pub), else left out.
 * Decoding is lenient, for showing: a member missing or of another type reads as 0, false or
 * NULL; strings and json_t members point into the decoded object (borrowed: valid while it is).
 * The verifier checks the requests it is sent strictly, where it reads them (for example
 * verifier/service/registrations.c); test_api_codec feeds those checks what these encoders
 * write.
 */
#ifndef VERIFIER_HTTP_API_CODEC_H
#define VERIFIER_HTTP_API_CODEC_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

/* The array member of each list answer. */
#define API_AGENTS "agents"     /* GET /v1/agents: {"agents": [agent...]} */
#define API_VERDICTS "verdicts" /* GET .../verdicts: {"agent_id": ID, "verdicts": [verdict...]} */
#define API_HOURS "hours"       /* GET .../counters: {"agent_id": ID, "hours": [hour...]} */
#define API_VIOLATIONS "violations" /* GET /v1/violations: {"violations": [violation...]} */
#define API_HISTORY "history"   /* GET .../history: {"agent_id": ID, "history": [event...]} */
#define API_POLICIES "policies" /* GET /v1/policies: {"policies": [policy summary...]} */
/* GET /v1/policies/{name}/versions: {"name": NAME, "agents": N, "versions": [version...]};
 * GET /v1/agents/{id}/amendment/versions: {"agent_id": ID, "versions": [version...]}. */
#define API_VERSIONS "versions"
#define API_VERSIONS_AGENTS "agents" /* how many agents the policy judges */
#define API_REGISTRATIONS "registrations" /* GET and POST /v1/registrations */

/*
 * The list answers: {MEMBER: [item...]} (api_list_encode: agents, violations, policies,
 * registrations), an agent's {"agent_id": ID, MEMBER: [item...]} (api_agent_list_encode:
 * verdicts, hours, history, an amendment's versions) and a policy's versions
 * {"name": NAME, "agents": N, "versions": [version...]}; items taken (NULL: the encoding is
 * NULL). api_list_items() reads a list answer's array back (borrowed; NULL: not there),
 * api_list_agent_id() the agent it is about and api_policy_versions_agents() how many agents
 * the policy judges (has: whether the member is there).
 */
json_t *api_list_encode(const char *member, json_t *items);
json_t *api_agent_list_encode(const char *agent_id, const char *member, json_t *items);
json_t *api_policy_versions_encode(const char *name, int64_t agents, json_t *versions);
json_t *api_list_items(const json_t *o, const char *member);
const char *api_list_agent_id(const json_t *o);
int64_t api_policy_versions_agents(const json_t *o, bool *has);

/* The policy and amendment versions that judged a verdict; known false: null (not recorded). */
struct api_versions {
	bool known;
	const char *policy;
	int64_t policy_version, amendment_version;
};

struct api_agent {
	const char *agent_id;
	const char *state; /* as shown: pending, active, stale, rejudging, retired */
	const char *policy;
	const char *ak_name; /* hex */
	int64_t created_at, activated_at, boot_number, next_entry, last_verdict_at, open_violations;
	int64_t retired_at, reset_at;
	int64_t last_seen, interval;
	bool interval_reported;
	int64_t stale_after;
	bool stale, rejudging;
	struct api_versions judged_by;
	int64_t policy_version, amendment_version; /* the versions that judge it now */
	json_t *last_reasons;    /* an array of codes; NULL: no member (encode takes it) */
	const char *last_verdict; /* "trusted", "untrusted", NULL: none yet */
	/* GET /v1/agents/{id} only: */
	bool detail;
	const char *ek_cert, *ak_pub; /* base64; NULL: null */
	json_t *boot;                 /* the boot summary; encode takes it (NULL: null) */
	/* Both forms: its labels ({KEY: VALUE}; encode takes it, NULL: {}), and whether it is
	 * registered (admission). */
	json_t *labels;
	bool registered;
};

/*
 * One reason of a verdict, as stored with it (verifier/service/round.c) and answered in a
 * verdict's and an agent.untrusted event's reasons: {code, detail, entry}.
 */
struct api_reason {
	const char *code, *detail;
	int64_t entry;
};

json_t *api_reason_encode(const struct api_reason *r);
void api_reason_decode(const json_t *o, struct api_reason *r);

struct api_verdict {
	int64_t id, time, boot_number;
	const char *verdict; /* "trusted" or "untrusted" */
	bool trusted;
	json_t *reasons;     /* [{code, detail, entry}, ...]; encode takes it (NULL: []) */
	int64_t next_offset;
	struct api_versions judged_by;
};

struct api_hour {
	int64_t hour, rounds, trusted, untrusted;
};

/*
 * A violation. path is its text (proto/text.h: exact when UTF-8, else escaped, and then
 * path_escaped), path_hex its raw bytes; approvable: whether approval can allow it; recurs: the
 * decided violation it recurred after (0: no member); expected (taken) and explanation: what
 * the agent's policy lists for a digest_mismatch and a package policy's words (NULL: no member),
 * added after the list was read (api_violation_annotate()).
 */
struct api_violation {
	int64_t id;
	const char *agent_id;
	int64_t boot_number, entry;
	const char *path;
	bool path_escaped;
	const char *path_hex, *digest, *template_name, *reason;
	int64_t first_seen, last_seen, count;
	const char *state; /* open, approved, dismissed */
	bool approvable;
	int64_t decided_at;
	const char *decision;
	int64_t recurs;
	json_t *expected;
	const char *explanation;
};

/* A digest_mismatch's "expected": the digests the policy and the amendment list for the path
 * (arrays, taken; NULL: []). */
struct api_expected {
	const char *policy;
	int64_t policy_version;
	json_t *digests;
	int64_t amendment_version;
	json_t *amendment_digests;
};

/*
 * What an approval or a dismissal did: the violation's state now, its agent, reason, path and
 * digest, the agent's policy; scope (approvals: "agent" or "policy"; NULL: no member); the
 * policy version it wrote and how many agents use it (into_policy), or the amendment version
 * (into_amendment).
 */
struct api_decision {
	int64_t id;
	const char *state, *agent_id, *reason, *path;
	bool path_escaped;
	const char *digest, *policy, *scope;
	bool into_policy;
	int64_t policy_version, policy_agents;
	bool into_amendment;
	int64_t amendment_version;
};

/* One step of an agent's lifecycle: enrolled, retired, reset, ... by whom, with its detail. */
struct api_agent_event {
	int64_t id, time;
	const char *event, *actor, *detail;
};

/* A named policy: its newest version, when and by whom, how many agents it judges. */
struct api_policy_summary {
	const char *name;
	int64_t version, time;
	const char *actor;
	int64_t agents;
};

/* One version of a policy or an amendment; signer: the key that verified it ("" unsigned). */
struct api_policy_version {
	int64_t version;
	const char *actor;
	int64_t time, bytes;
	bool signed_;
	const char *signer;
};

/*
 * What a rollback did: the version it wrote (or the newest, when that one already had the old
 * text: changed false), the version it came from, the agents judged by it, the signer of the
 * text; and whose: name (a policy) or agent_id (an amendment), one of them.
 */
struct api_rollback {
	int64_t version, from;
	bool changed;
	int64_t agents;
	const char *signer, *name, *agent_id;
};

/* What storing a policy did (PUT /v1/policies/{name}): its new version, the import warnings
 * (an array of strings, taken; NULL: []), and whether its text was signed and by whom. */
struct api_policy_stored {
	const char *name;
	int64_t version;
	json_t *warnings;
	bool signed_;
	const char *signer;
};

/* An agent's amendment (GET /v1/agents/{id}/amendment): its version (0: none yet) and the
 * document (taken; NULL: null). */
struct api_amendment {
	const char *agent_id;
	int64_t version;
	json_t *amendment;
};

/*
 * An attestation result (GET /v1/agents/{id}/ear): the token (200), or, while the round bound to
 * a relying party's nonce has not come (202, pending: token NULL), that nonce and the seconds
 * to ask again after. A key rotation (POST /v1/ear/keys/rotate): the new key's kid and the one
 * it replaced.
 */
struct api_ear {
	const char *agent_id, *token;
	const char *nonce;
	int64_t retry_after;
};

struct api_ear_rotation {
	const char *kid, *retired_kid;
};

/*
 * A registration (GET /v1/registrations: listed true; POST /v1/registrations: listed false, the
 * request's item). Listed: agent_id, ek (how it was registered: "public", by
 * the SHA-256 of its TPM2B_PUBLIC, or "cert"), ek_sha256,
 * policy, labels, actor, created_at. A request's item: agent_id, ek_cert (base64 DER) or else
 * ek_sha256, then policy and labels when given (NULL or empty: no member). labels: {KEY: VALUE};
 * encode takes it (NULL: {} listed, no member in a request).
 */
struct api_registration {
	bool listed;
	const char *agent_id, *ek, *ek_sha256, *ek_cert, *policy;
	json_t *labels;
	const char *actor;
	int64_t created_at;
};

/*
 * What a registration request did (POST: {"registered": N}, count set) or a deletion (DELETE
 * /v1/registrations/{id}: {"agent_id": ID, "registered": false}, agent_id set).
 */
struct api_registered {
	const char *agent_id;
	int64_t count;
};

/*
 * Labels. A change (PUT /v1/agents/{id}/labels): set ({KEY: VALUE}) and remove ([KEY]), each
 * taken and left out when NULL or empty; its answer, an agent's labels now: agent_id and labels
 * (taken; NULL: {}). An assignment by label (POST /v1/policies/{name}/assign): the request's
 * label (KEY=VALUE) and apply; its answer names the policy, the label, whether it was applied,
 * how many agents have the label and the ids it changed or would change (taken; NULL: []).
 */
struct api_labels_change {
	json_t *set, *remove;
};

struct api_agent_labels {
	const char *agent_id;
	json_t *labels;
};

struct api_assign {
	const char *policy, *label;
	bool apply; /* the request's; the answer's "applied" */
	int64_t matching;
	json_t *agents;
};

/*
 * The audit trail's head signed (GET /v1/audit/head: public_key PEM; in an event's audit_head:
 * DER base64): seq, hash (hex), time, signature (DER, base64), public_key. hash NULL: no head
 * signed yet, then only seq (0) and public_key. public_key NULL: no member.
 */
struct api_audit_signed {
	int64_t seq;
	const char *hash;
	int64_t time;
	const char *signature, *public_key;
};

/* The trail's head as an event's transaction saw it, and the newest head signed (has_signed
 * false: none yet, no member). */
struct api_audit_head {
	int64_t seq;
	const char *hash;
	bool has_signed;
	struct api_audit_signed signed_;
};

/* The webhook events' types (their "type"). */
#define API_EVENT_UNTRUSTED "agent.untrusted"
#define API_EVENT_VIOLATION "violation.opened"
#define API_EVENT_STALE "agent.stale"
#define API_EVENT_ENROLLED "agent.enrolled"
#define API_EVENT_RETIRED "agent.retired"
#define API_EVENT_RESET "agent.reset"

/*
 * A webhook event's body: {"id", "type", "time", "agent_id", "data": {...}, "audit_head"}, data
 * by type (the members below it, in this order; the others are not encoded):
 *   agent.untrusted   verdict_id, boot_number, reasons ([{code, detail, entry}]; taken, NULL: [])
 *   violation.opened  violation_id, reason, path, path_escaped, path_hex, digest, boot_number,
 *                     entry, count, recurs (0: no member)
 *   agent.stale       last_seen, interval, stale_after
 *   agent.enrolled    ak_name (hex)
 *   agent.retired     purged, actor
 *   agent.reset       actor
 * audit_head NULL: no member. Another type encodes as NULL.
 */
struct api_event {
	const char *id, *type;
	int64_t time;
	const char *agent_id;
	int64_t verdict_id, boot_number;
	json_t *reasons;
	int64_t violation_id;
	const char *reason, *path;
	bool path_escaped;
	const char *path_hex, *digest;
	int64_t entry, count, recurs;
	int64_t last_seen, interval, stale_after;
	const char *ak_name;
	bool purged;
	const char *actor;
	const struct api_audit_head *audit_head;
};

/*
 * The small requests and answers of an operator's change:
 *   PUT /v1/agents/{id}/policy           request {"policy"}; answer {"agent_id", "policy"}
 *   DELETE /v1/agents/{id}[?purge=yes]   {"agent_id", "state": "retired" or "purged"}
 *   POST /v1/agents/{id}/reset           {"agent_id", "reset": true}
 *   DELETE /v1/policies/{name}           {"policy", "deleted": true}
 *   POST .../rollback                    request {"version"}
 *   POST /v1/violations/{id}/approve     request {"scope"} (NULL: no body member)
 */
struct api_agent_policy {
	const char *agent_id, *policy;
};

/*
 * A policy as the verifier enforces it (GET /v1/policies/{name}/enforced): its name and newest
 * version, its format ("attest" or "keylime"), the import's warnings, the Keylime excludes as
 * written (source_excludes) and the policy in our format; the json_t members taken (NULL: [],
 * [], null).
 */
struct api_enforced {
	const char *name;
	int64_t version;
	const char *format;
	json_t *warnings, *source_excludes, *policy;
};

/*
 * An agent's boot summary (GET /v1/agents/{id} "boot"), as verifier/decision/boot_check.c
 * writes it from the firmware event log and stores it with the round: status (replays,
 * mismatch, corrupt); with a log (has_log), its events, the TPM's startup locality when the log
 * names one (has_locality), the firmware's description, secure_boot (on, off, unknown), PCR 0
 * replayed (NULL: no member), the kernel the log measured into PCR 4 (has_kernel: its digest,
 * the file (NULL: no member), the policy's name for it (NULL: no member) and, when the policy
 * lists kernels (has_allowed), whether it allows it), and the command line the agent reported
 * (NULL: neither it nor cmdline_verified) and whether PCR 9 verified it. Members in key order
 * (the store keeps the text sorted).
 */
struct api_boot_kernel {
	const char *digest, *file, *name;
	bool has_allowed, allowed;
};

struct api_boot_summary {
	const char *status;
	bool has_log;
	int64_t events;
	bool has_locality;
	int64_t startup_locality;
	const char *firmware, *secure_boot, *pcr0;
	bool has_kernel;
	struct api_boot_kernel kernel;
	const char *cmdline;
	bool cmdline_verified;
};

json_t *api_boot_summary_encode(const struct api_boot_summary *b);
void api_boot_summary_decode(const json_t *o, struct api_boot_summary *b);

/*
 * The boot summary's log (GET /v1/agents/{id} "boot"): to the summary stored with the round
 * (api_boot_summary_encode() above) the verifier adds the log's SHA-256
 * (hex), its size and when it arrived, after the summary's own members.
 * api_boot_log_annotate() returns -1 out of memory.
 */
struct api_boot_log {
	const char *log_sha256;
	int64_t log_bytes, received_at;
};

int api_boot_log_annotate(json_t *boot, const struct api_boot_log *l);
void api_boot_log_decode(const json_t *boot, struct api_boot_log *l);

json_t *api_agent_encode(const struct api_agent *a);
void api_agent_decode(const json_t *o, struct api_agent *a);
json_t *api_verdict_encode(const struct api_verdict *v);
void api_verdict_decode(const json_t *o, struct api_verdict *v);
json_t *api_hour_encode(const struct api_hour *h);
void api_hour_decode(const json_t *o, struct api_hour *h);
json_t *api_violation_encode(const struct api_violation *v);
void api_violation_decode(const json_t *o, struct api_violation *v);
/* Adds a violation's expected (taken; NULL: none) and explanation (NULL: none) to o. */
void api_violation_annotate(json_t *o, json_t *expected, const char *explanation);
json_t *api_expected_encode(const struct api_expected *e);
json_t *api_decision_encode(const struct api_decision *d);
void api_decision_decode(const json_t *o, struct api_decision *d);
json_t *api_agent_event_encode(const struct api_agent_event *e);
void api_agent_event_decode(const json_t *o, struct api_agent_event *e);
json_t *api_policy_summary_encode(const struct api_policy_summary *p);
void api_policy_summary_decode(const json_t *o, struct api_policy_summary *p);
json_t *api_policy_version_encode(const struct api_policy_version *v);
void api_policy_version_decode(const json_t *o, struct api_policy_version *v);
json_t *api_rollback_encode(const struct api_rollback *r);
void api_rollback_decode(const json_t *o, struct api_rollback *r);
json_t *api_policy_stored_encode(const struct api_policy_stored *p);
void api_policy_stored_decode(const json_t *o, struct api_policy_stored *p);
json_t *api_amendment_encode(const struct api_amendment *a);
void api_amendment_decode(const json_t *o, struct api_amendment *a);
json_t *api_ear_encode(const struct api_ear *e);
void api_ear_decode(const json_t *o, struct api_ear *e);
json_t *api_ear_rotation_encode(const struct api_ear_rotation *r);
void api_ear_rotation_decode(const json_t *o, struct api_ear_rotation *r);
json_t *api_registration_encode(const struct api_registration *r);
/* Also says whether o is an object whose members, those there, have their types. */
bool api_registration_decode(const json_t *o, struct api_registration *r);
json_t *api_registered_encode(const struct api_registered *r);
void api_registered_decode(const json_t *o, struct api_registered *r);
json_t *api_labels_change_encode(const struct api_labels_change *c);
void api_labels_change_decode(const json_t *o, struct api_labels_change *c);
json_t *api_agent_labels_encode(const struct api_agent_labels *l);
void api_agent_labels_decode(const json_t *o, struct api_agent_labels *l);
/* The request ({"label", "apply"}) and the answer ({"policy", "label", "applied", "matching",
 * "agents"}). */
json_t *api_assign_request_encode(const struct api_assign *a);
json_t *api_assign_encode(const struct api_assign *a);
void api_assign_decode(const json_t *o, struct api_assign *a);
/* The request's apply member (NULL: none), for the handler to check. */
const json_t *api_assign_request_apply(const json_t *o);
json_t *api_audit_signed_encode(const struct api_audit_signed *s);
void api_audit_signed_decode(const json_t *o, struct api_audit_signed *s);
json_t *api_audit_head_encode(const struct api_audit_head *h);
void api_audit_head_decode(const json_t *o, struct api_audit_head *h);
json_t *api_event_encode(const struct api_event *e);
json_t *api_agent_policy_request_encode(const char *policy);
json_t *api_agent_policy_encode(const struct api_agent_policy *p);
void api_agent_policy_decode(const json_t *o, struct api_agent_policy *p);
json_t *api_agent_retired_encode(const char *agent_id, bool purged);
json_t *api_agent_reset_encode(const char *agent_id);
json_t *api_policy_deleted_encode(const char *name);
json_t *api_rollback_request_encode(int64_t version);
/* The request's version member (NULL: none), for the handler to check. */
const json_t *api_rollback_request_version(const json_t *o);
json_t *api_approve_request_encode(const char *scope);
/* The request's scope member (NULL: none), for the handler to check. */
const json_t *api_approve_request_scope(const json_t *o);
json_t *api_enforced_encode(const struct api_enforced *e);
void api_enforced_decode(const json_t *o, struct api_enforced *e);
/* Decodes an event; its audit_head into *head, and e->audit_head = head (NULL: none). */
void api_event_decode(const json_t *o, struct api_event *e, struct api_audit_head *head);

#endif
