/* attestd configuration file and command line; see config.h. */
#include "attestd/config.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "proto/evidence.h"

enum opt_kind { OPT_STRING, OPT_UINT, OPT_ALG, OPT_BOOL };

struct opt {
	const char *name;
	enum opt_kind kind;
	size_t off; /* offsetof the field in struct attestd_config */
};

#define OPT_OFF(f) offsetof(struct attestd_config, f)

static const struct opt opts[] = {
	{ "verifier", OPT_STRING, OPT_OFF(verifier) },
	{ "ca", OPT_STRING, OPT_OFF(ca) },
	{ "agent-id", OPT_STRING, OPT_OFF(agent_id) },
	{ "tcti", OPT_STRING, OPT_OFF(tcti) },
	{ "ima-list", OPT_STRING, OPT_OFF(ima_list) },
	{ "event-log", OPT_STRING, OPT_OFF(event_log) },
	{ "cmdline", OPT_STRING, OPT_OFF(cmdline) },
	{ "state-dir", OPT_STRING, OPT_OFF(state_dir) },
	{ "interval", OPT_UINT, OPT_OFF(interval) },
	{ "ak-alg", OPT_ALG, OPT_OFF(ak_alg) },
	{ "once", OPT_BOOL, OPT_OFF(once) },
	{ "foreground", OPT_BOOL, OPT_OFF(foreground) },
	{ "debug", OPT_BOOL, OPT_OFF(debug) },
};

static const struct opt *opt_find(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		if (strlen(opts[i].name) == len && memcmp(opts[i].name, name, len) == 0)
			return &opts[i];
	return NULL;
}

static int parse_bool(const char *v, bool *out)
{
	if (!strcmp(v, "true") || !strcmp(v, "yes") || !strcmp(v, "1")) {
		*out = true;
		return 0;
	}
	if (!strcmp(v, "false") || !strcmp(v, "no") || !strcmp(v, "0")) {
		*out = false;
		return 0;
	}
	return -EINVAL;
}

/* Sets one option from text; where names the source for the log ("file:line" or "argv"). */
static int opt_apply(struct attestd_config *cfg, const struct opt *o, const char *value,
		     const char *where)
{
	char *base = (char *)cfg;

	switch (o->kind) {
	case OPT_STRING: {
		char **field = (char **)(base + o->off);
		char *copy;

		if (value[0] == '\0') {
			log_error("empty value for '%s' in %s", o->name, where);
			return -EINVAL;
		}
		if (strlen(value) >= PATH_MAX) {
			log_error("value for '%s' too long in %s", o->name, where);
			return -EINVAL;
		}
		copy = strdup(value);
		if (!copy)
			return -ENOMEM;
		free(*field);
		*field = copy;
		return 0;
	}
	case OPT_UINT: {
		unsigned *field = (unsigned *)(base + o->off);
		char *end;
		unsigned long v;

		if (value[0] < '0' || value[0] > '9')
			goto bad_uint;
		errno = 0;
		v = strtoul(value, &end, 10);
		if (errno || *end != '\0' || v < 1 || v > ATTESTD_MAX_INTERVAL)
			goto bad_uint;
		*field = (unsigned)v;
		return 0;
bad_uint:
		log_error("bad value for '%s' in %s: '%s' (want 1..%u)", o->name, where, value,
			  ATTESTD_MAX_INTERVAL);
		return -EINVAL;
	}
	case OPT_ALG: {
		enum attestd_ak_alg *field = (enum attestd_ak_alg *)(base + o->off);

		if (!strcmp(value, "rsa")) {
			*field = ATTESTD_AK_RSA;
		} else if (!strcmp(value, "ecc")) {
			*field = ATTESTD_AK_ECC;
		} else {
			log_error("bad value for '%s' in %s: '%s' (want rsa or ecc)", o->name, where,
				  value);
			return -EINVAL;
		}
		return 0;
	}
	case OPT_BOOL: {
		bool *field = (bool *)(base + o->off);

		if (parse_bool(value, field) < 0) {
			log_error("bad value for '%s' in %s: '%s' (want true or false)", o->name,
				  where, value);
			return -EINVAL;
		}
		return 0;
	}
	}
	return -EINVAL;
}

static char *trim(char *s)
{
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n' || end[-1] == '\r'))
		*--end = '\0';
	return s;
}

int config_load_file(struct attestd_config *cfg, const char *path, bool missing_ok)
{
	char line[ATTESTD_CONFIG_LINE_MAX];
	char where[PATH_MAX + 32];
	unsigned lineno = 0;
	int ret = 0;
	FILE *f = fopen(path, "re");

	if (!f) {
		ret = -errno;
		if (ret == -ENOENT && missing_ok)
			return 0;
		log_error("cannot open config file '%s': %s", path, strerror(-ret));
		return ret == -ENOENT ? -ENOENT : -EINVAL;
	}
	while (fgets(line, sizeof(line), f)) {
		char *s, *eq, *key, *value;
		const struct opt *o;

		lineno++;
		snprintf(where, sizeof(where), "%s:%u", path, lineno);
		if (!strchr(line, '\n') && !feof(f)) {
			log_error("line too long in %s", where);
			ret = -EINVAL;
			goto out;
		}
		/* '#' starts a comment anywhere: no value we accept contains one. */
		s = strchr(line, '#');
		if (s)
			*s = '\0';
		s = trim(line);
		if (*s == '\0')
			continue;
		eq = strchr(s, '=');
		if (!eq) {
			log_error("expected 'key = value' in %s", where);
			ret = -EINVAL;
			goto out;
		}
		*eq = '\0';
		key = trim(s);
		value = trim(eq + 1);
		o = opt_find(key, strlen(key));
		if (!o) {
			log_error("unknown key in %s: '%s'", where, key);
			ret = -EINVAL;
			goto out;
		}
		ret = opt_apply(cfg, o, value, where);
		if (ret < 0)
			goto out;
	}
	if (ferror(f)) {
		log_error("cannot read config file '%s'", path);
		ret = -EINVAL;
	}
out:
	fclose(f);
	return ret;
}

static int set_default(char **field, const char *value)
{
	if (*field)
		return 0;
	*field = strdup(value);
	return *field ? 0 : -ENOMEM;
}

/*
 * Walks argv once. With apply false it only finds --config (and validates nothing else);
 * with apply true it sets every other option. Two passes make the command line win over the
 * file whatever the order of the arguments.
 */
static int parse_args(struct attestd_config *cfg, int argc, char *const argv[], bool apply,
		      const char **config_path)
{
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		const char *name, *eq, *value = NULL;
		size_t name_len;
		const struct opt *o;

		if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
			cfg->help = true;
			continue;
		}
		if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0') {
			if (apply)
				log_error("unexpected argument '%s'", arg);
			return -EINVAL;
		}
		name = arg + 2;
		eq = strchr(name, '=');
		name_len = eq ? (size_t)(eq - name) : strlen(name);
		if (eq)
			value = eq + 1;

		if (name_len == 6 && !memcmp(name, "config", 6)) {
			if (!value) {
				if (i + 1 >= argc) {
					log_error("option '--config' needs a value");
					return -EINVAL;
				}
				value = argv[++i];
			}
			if (!apply)
				*config_path = value;
			continue;
		}
		o = opt_find(name, name_len);
		if (!o) {
			if (apply)
				log_error("unknown option '%s' (see --help)", arg);
			return -EINVAL;
		}
		if (o->kind == OPT_BOOL && !value) {
			value = "true";
		} else if (!value) {
			if (i + 1 >= argc) {
				if (apply)
					log_error("option '--%s' needs a value", o->name);
				return -EINVAL;
			}
			value = argv[++i];
		}
		if (apply) {
			int ret = opt_apply(cfg, o, value, "command line");

			if (ret < 0)
				return ret;
		}
	}
	return 0;
}

int config_parse(struct attestd_config *cfg, int argc, char *const argv[])
{
	const char *config_path = NULL;
	char host[256];
	int ret;

	memset(cfg, 0, sizeof(*cfg));
	cfg->interval = ATTESTD_DEFAULT_INTERVAL;
	cfg->ak_alg = ATTESTD_AK_RSA;

	/* First pass: find --config; errors are reported by the second pass. */
	if (parse_args(cfg, argc, argv, false, &config_path) < 0 && !cfg->help) {
		ret = parse_args(cfg, argc, argv, true, &config_path);
		return ret < 0 ? ret : -EINVAL;
	}
	if (cfg->help)
		return 0;
	if (config_path)
		ret = config_load_file(cfg, config_path, false);
	else
		ret = config_load_file(cfg, ATTESTD_DEFAULT_CONFIG, true);
	if (ret < 0)
		return -EINVAL;
	ret = parse_args(cfg, argc, argv, true, &config_path);
	if (ret < 0)
		return ret;

	if (!cfg->agent_id) {
		if (gethostname(host, sizeof(host)) < 0) {
			log_error("cannot read the hostname: %s; set --agent-id", strerror(errno));
			return -EINVAL;
		}
		host[sizeof(host) - 1] = '\0';
		cfg->agent_id = strdup(host);
		if (!cfg->agent_id)
			return -ENOMEM;
	}
	if (set_default(&cfg->tcti, ATTESTD_DEFAULT_TCTI) < 0 ||
	    set_default(&cfg->ima_list, ATTESTD_DEFAULT_IMA_LIST) < 0 ||
	    set_default(&cfg->event_log, ATTESTD_DEFAULT_EVENT_LOG) < 0 ||
	    set_default(&cfg->cmdline, ATTESTD_DEFAULT_CMDLINE) < 0 ||
	    set_default(&cfg->state_dir, ATTESTD_DEFAULT_STATE_DIR) < 0)
		return -ENOMEM;
	return 0;
}

int config_check(const struct attestd_config *cfg)
{
	if (!cfg->verifier) {
		log_error("no verifier url; set --verifier https://host:port");
		return -EINVAL;
	}
	/* TLS is not optional: the evidence and the enrollment credential travel over it. */
	if (strncmp(cfg->verifier, "https://", 8) != 0 || cfg->verifier[8] == '\0') {
		log_error("verifier url must start with https://: '%s'", cfg->verifier);
		return -EINVAL;
	}
	if (!cfg->ca) {
		log_error("no ca file for the verifier's certificate; set --ca FILE");
		return -EINVAL;
	}
	if (!cfg->agent_id || !agent_id_valid(cfg->agent_id)) {
		log_error("bad agent id '%s': use 1..%u of [A-Za-z0-9._-], not starting with '.'",
			  cfg->agent_id ? cfg->agent_id : "", LIMIT_AGENT_ID);
		return -EINVAL;
	}
	return 0;
}

void config_release(struct attestd_config *cfg)
{
	if (!cfg)
		return;
	free(cfg->verifier);
	free(cfg->ca);
	free(cfg->agent_id);
	free(cfg->tcti);
	free(cfg->ima_list);
	free(cfg->event_log);
	free(cfg->cmdline);
	free(cfg->state_dir);
	cfg->verifier = cfg->ca = cfg->agent_id = NULL;
	cfg->tcti = cfg->ima_list = cfg->state_dir = cfg->event_log = cfg->cmdline = NULL;
}

void config_usage(FILE *out)
{
	fprintf(out,
		"usage: attestd [--config FILE] [--verifier URL] [--ca FILE] [--agent-id ID]\n"
		"               [--tcti TCTI] [--ima-list PATH] [--state-dir DIR]\n"
		"               [--event-log PATH|none] [--cmdline PATH]\n"
		"               [--interval SECONDS] [--ak-alg rsa|ecc] [--once] [--foreground]\n"
		"               [--debug]\n"
		"defaults: config %s, tcti %s,\n"
		"          ima list %s,\n"
		"          event log %s (none: never send one),\n"
		"          kernel command line %s,\n"
		"          state dir %s, interval %u s, ak rsa, agent id = hostname\n"
		"--once: enroll if needed, one round, print the verdict; exit 0 trusted,\n"
		"        1 untrusted, 2 error. attestd never forks: --foreground is the default.\n",
		ATTESTD_DEFAULT_CONFIG, ATTESTD_DEFAULT_TCTI, ATTESTD_DEFAULT_IMA_LIST,
		ATTESTD_DEFAULT_EVENT_LOG, ATTESTD_DEFAULT_CMDLINE, ATTESTD_DEFAULT_STATE_DIR, ATTESTD_DEFAULT_INTERVAL);
}
