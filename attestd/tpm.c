/* The TPM through tpm2-tss ESYS; see tpm.h. */
#include "attestd/tpm.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <tss2/tss2_esys.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>
#include <tss2/tss2_tctildr.h>

#include "common/file.h"
#include "common/log.h"
#include "proto/dynbuf.h"
#include "proto/ekcert.h"
#include "proto/tpmkey.h"

#define QUOTE_TRIES 5
#define NV_CHUNK_DEFAULT 512u /* every TPM 2.0 takes this much per NV_Read */
#define BLOB_FILE_MAX 4096u

struct tpm {
	TSS2_TCTI_CONTEXT *tcti;
	ESYS_CONTEXT *ctx;
	const struct tpmkey_ek_profile *ek_profile; /* the EK's template; NULL: not chosen yet */
	ESYS_TR ek;
	bool ek_transient; /* created here: flush on close; else a persistent handle: close */
	ESYS_TR ak;
	TPM2B_PUBLIC ak_pub;
};

/* Logs a TSS2_RC decoded and maps it to -errno. */
static int rc_fail(const char *what, TSS2_RC rc)
{
	log_error("tpm %s failed: %s (0x%x)", what, Tss2_RC_Decode(rc), (unsigned)rc);
	/* TPM_RC_HANDLE (format 1, any parameter/handle number): no such object or index. */
	if ((rc & 0xffff00bfu) == (TPM2_RC_FMT1 | 0x0bu))
		return -ENOENT;
	return -EIO;
}

struct tpm *tpm_open(const char *tcti)
{
	struct tpm *t = calloc(1, sizeof(*t));
	TSS2_RC rc;

	if (!t)
		return NULL;
	t->ek = ESYS_TR_NONE;
	t->ak = ESYS_TR_NONE;
	rc = Tss2_TctiLdr_Initialize(tcti, &t->tcti);
	if (rc != TSS2_RC_SUCCESS) {
		log_error("cannot open tpm tcti '%s': %s (0x%x); check --tcti and that the tpm "
			  "device exists",
			  tcti, Tss2_RC_Decode(rc), (unsigned)rc);
		free(t);
		return NULL;
	}
	rc = Esys_Initialize(&t->ctx, t->tcti, NULL);
	if (rc != TSS2_RC_SUCCESS) {
		rc_fail("esys initialize", rc);
		Tss2_TctiLdr_Finalize(&t->tcti);
		free(t);
		return NULL;
	}
	return t;
}

void tpm_close(struct tpm *t)
{
	if (!t)
		return;
	if (t->ak != ESYS_TR_NONE)
		Esys_FlushContext(t->ctx, t->ak);
	if (t->ek != ESYS_TR_NONE) {
		if (t->ek_transient)
			Esys_FlushContext(t->ctx, t->ek);
		else
			Esys_TR_Close(t->ctx, &t->ek);
	}
	Esys_Finalize(&t->ctx);
	Tss2_TctiLdr_Finalize(&t->tcti);
	free(t);
}

/* True if the NV index exists (an error other than "no such index" is logged). */
static bool nv_index_exists(struct tpm *t, uint32_t index)
{
	ESYS_TR nv = ESYS_TR_NONE;
	TSS2_RC rc;

	rc = Esys_TR_FromTPMPublic(t->ctx, index, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &nv);
	if (rc != TSS2_RC_SUCCESS)
		return false;
	Esys_TR_Close(t->ctx, &nv);
	return true;
}

int tpm_ek_choose(struct tpm *t, const struct tpmkey_ek_profile *want,
		  const EVP_PKEY *cert_key)
{
	const struct tpmkey_ek_profile *ps;
	size_t n;

	if (t->ek_profile)
		return 0;
	if (want) {
		t->ek_profile = want;
	} else if (cert_key) {
		t->ek_profile = tpmkey_ek_profile_for_key(cert_key);
		if (!t->ek_profile) {
			log_error("the --ek-cert certificate's key is of no ek profile attestd "
				  "knows (rsa 2048/3072/4096, ecc p-256/p-384/p-521)");
			return -EINVAL;
		}
	} else {
		ps = tpmkey_ek_profiles(&n);
		for (size_t i = 0; i < n && !t->ek_profile; i++)
			if (nv_index_exists(t, ps[i].cert_nv_index))
				t->ek_profile = &ps[i];
		if (!t->ek_profile) {
			log_error("the tpm holds no ek certificate at any nv index of the ek "
				  "credential profile (0x%08x ...); give the certificate with "
				  "--ek-cert FILE",
				  ps[0].cert_nv_index);
			return -ENOENT;
		}
	}
	log_info("ek profile %s, certificate nv index 0x%08x", t->ek_profile->name,
		 t->ek_profile->cert_nv_index);
	return 0;
}

/* Where makers and tools persist EKs: the RSA EK's handle, and the usual one of an ECC EK. */
static const uint32_t ek_persistent_handles[] = { 0x81010001u, 0x81010002u };

/*
 * A persistent key is used only when it is an EK of the chosen profile (its template, field
 * for field): any other key there is not the one the EK certificate was made for.
 */
static bool ek_load_persistent(struct tpm *t)
{
	for (size_t i = 0; i < sizeof(ek_persistent_handles) / sizeof(ek_persistent_handles[0]);
	     i++) {
		TPM2B_PUBLIC *pub = NULL;
		ESYS_TR h = ESYS_TR_NONE;
		bool ours;
		TSS2_RC rc;

		rc = Esys_TR_FromTPMPublic(t->ctx, ek_persistent_handles[i], ESYS_TR_NONE,
					   ESYS_TR_NONE, ESYS_TR_NONE, &h);
		if (rc != TSS2_RC_SUCCESS)
			continue;
		rc = Esys_ReadPublic(t->ctx, h, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &pub,
				     NULL, NULL);
		ours = rc == TSS2_RC_SUCCESS &&
		       tpmkey_ek_profile_of(&pub->publicArea) == t->ek_profile;
		Esys_Free(pub);
		if (ours) {
			t->ek = h;
			t->ek_transient = false;
			log_debug("using the ek at persistent handle 0x%x",
				  ek_persistent_handles[i]);
			return true;
		}
		Esys_TR_Close(t->ctx, &h);
	}
	return false;
}

int tpm_ek_load(struct tpm *t)
{
	TPM2B_PUBLIC tmpl = { 0 };
	TPM2B_SENSITIVE_CREATE sens = { 0 };
	TPM2B_DATA outside = { 0 };
	TPML_PCR_SELECTION creation_pcr = { 0 };
	ESYS_TR h = ESYS_TR_NONE;
	TSS2_RC rc;
	int ret;

	if (t->ek != ESYS_TR_NONE)
		return 0;
	ret = tpm_ek_choose(t, NULL, NULL);
	if (ret < 0)
		return ret;
	if (ek_load_persistent(t))
		return 0;
	/* Same template, same endorsement seed: the same key the certificate was made for. */
	tmpl.publicArea = t->ek_profile->tmpl;
	rc = Esys_CreatePrimary(t->ctx, ESYS_TR_RH_ENDORSEMENT, ESYS_TR_PASSWORD, ESYS_TR_NONE,
				ESYS_TR_NONE, &sens, &tmpl, &outside, &creation_pcr, &h, NULL,
				NULL, NULL, NULL);
	if (rc != TSS2_RC_SUCCESS)
		return rc_fail("createprimary of the ek", rc);
	t->ek = h;
	t->ek_transient = true;
	log_debug("created a transient ek from template %s", t->ek_profile->name);
	return 0;
}

static int marshal_public(const TPM2B_PUBLIC *pub, uint8_t **out, size_t *out_len)
{
	uint8_t *buf = malloc(sizeof(TPM2B_PUBLIC));
	size_t off = 0;
	TSS2_RC rc;

	if (!buf)
		return -ENOMEM;
	rc = Tss2_MU_TPM2B_PUBLIC_Marshal(pub, buf, sizeof(TPM2B_PUBLIC), &off);
	if (rc != TSS2_RC_SUCCESS) {
		free(buf);
		return rc_fail("marshal of a public key", rc);
	}
	*out = buf;
	*out_len = off;
	return 0;
}

int tpm_ek_public(struct tpm *t, uint8_t **out, size_t *out_len)
{
	TPM2B_PUBLIC *pub = NULL;
	TSS2_RC rc;
	int ret;

	ret = tpm_ek_load(t);
	if (ret < 0)
		return ret;
	rc = Esys_ReadPublic(t->ctx, t->ek, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &pub, NULL,
			     NULL);
	if (rc != TSS2_RC_SUCCESS)
		return rc_fail("readpublic of the ek", rc);
	ret = marshal_public(pub, out, out_len);
	Esys_Free(pub);
	return ret;
}

static uint32_t nv_buffer_max(struct tpm *t)
{
	TPMS_CAPABILITY_DATA *cap = NULL;
	TPMI_YES_NO more;
	uint32_t v = NV_CHUNK_DEFAULT;
	TSS2_RC rc;

	rc = Esys_GetCapability(t->ctx, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
				TPM2_CAP_TPM_PROPERTIES, TPM2_PT_NV_BUFFER_MAX, 1, &more, &cap);
	if (rc == TSS2_RC_SUCCESS && cap->data.tpmProperties.count == 1 &&
	    cap->data.tpmProperties.tpmProperty[0].property == TPM2_PT_NV_BUFFER_MAX &&
	    cap->data.tpmProperties.tpmProperty[0].value > 0)
		v = cap->data.tpmProperties.tpmProperty[0].value;
	Esys_Free(cap);
	if (v > TPM2_MAX_NV_BUFFER_SIZE)
		v = TPM2_MAX_NV_BUFFER_SIZE;
	return v;
}

/*
 * Reads NV index `index` whole into a new buffer (*out, *out_len): -ENOENT if it is not
 * defined, -EINVAL if it is empty or larger than cap. `what` names it in logs.
 */
static int nv_read_all(struct tpm *t, uint32_t index, size_t cap, const char *what,
		       uint8_t **out, size_t *out_len)
{
	TPM2B_NV_PUBLIC *nvpub = NULL;
	ESYS_TR nv = ESYS_TR_NONE, auth;
	uint8_t *buf = NULL;
	uint16_t size, off = 0;
	uint32_t chunk;
	char msg[96];
	TSS2_RC rc;
	int ret;

	rc = Esys_TR_FromTPMPublic(t->ctx, index, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &nv);
	if (rc != TSS2_RC_SUCCESS) {
		snprintf(msg, sizeof(msg), "lookup of the %s nv index 0x%08x", what, index);
		ret = rc_fail(msg, rc);
		nv = ESYS_TR_NONE;
		goto out;
	}
	rc = Esys_NV_ReadPublic(t->ctx, nv, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &nvpub,
				NULL);
	if (rc != TSS2_RC_SUCCESS) {
		snprintf(msg, sizeof(msg), "nv_readpublic of the %s", what);
		ret = rc_fail(msg, rc);
		goto out;
	}
	size = nvpub->nvPublic.dataSize;
	if (size == 0 || size > cap) {
		log_error("%s nv index 0x%08x has a bad size: %u (at most %zu)", what, index, size,
			  cap);
		ret = -EINVAL;
		goto out;
	}
	/* EK certificate indices are readable with their own (empty) auth or the owner's. */
	auth = (nvpub->nvPublic.attributes & TPMA_NV_AUTHREAD) ? nv : ESYS_TR_RH_OWNER;
	chunk = nv_buffer_max(t);
	buf = malloc(size);
	if (!buf) {
		ret = -ENOMEM;
		goto out;
	}
	while (off < size) {
		TPM2B_MAX_NV_BUFFER *data = NULL;
		uint32_t rest = (uint32_t)size - off;
		uint16_t n = (uint16_t)(rest < chunk ? rest : chunk);

		rc = Esys_NV_Read(t->ctx, auth, nv, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE,
				  n, off, &data);
		if (rc != TSS2_RC_SUCCESS) {
			snprintf(msg, sizeof(msg), "nv_read of the %s", what);
			ret = rc_fail(msg, rc);
			goto out;
		}
		if (data->size != n) {
			log_error("nv_read returned %u bytes, asked %u", data->size, n);
			Esys_Free(data);
			ret = -EIO;
			goto out;
		}
		memcpy(buf + off, data->buffer, n);
		off = (uint16_t)(off + n);
		Esys_Free(data);
	}
	*out = buf;
	*out_len = size;
	buf = NULL;
	ret = 0;
out:
	free(buf);
	Esys_Free(nvpub);
	if (nv != ESYS_TR_NONE)
		Esys_TR_Close(t->ctx, &nv);
	return ret;
}

int tpm_ek_cert(struct tpm *t, uint8_t **out, size_t *out_len)
{
	size_t size;
	int ret;

	ret = tpm_ek_choose(t, NULL, NULL);
	if (ret < 0)
		return ret;
	ret = nv_read_all(t, t->ek_profile->cert_nv_index, LIMIT_EK_CERT, "ek certificate", out,
			  &size);
	if (ret < 0)
		return ret;
	/*
	 * The index may be larger than the certificate (STMicro fills the rest with 0xFF): send
	 * the certificate alone. Bytes that are neither a certificate nor fill go as they are, for
	 * the verifier to refuse with its reason.
	 */
	*out_len = size;
	if (ekcert_trim(*out, size, out_len) == 0 && *out_len < size)
		log_debug("ek certificate: %zu bytes in an nv index of %zu", *out_len, size);
	return 0;
}

int tpm_ek_chain(struct tpm *t, struct dynbuf *chain, unsigned *ncerts)
{
	for (uint32_t index = TPM_EK_CHAIN_NV_FIRST; index <= TPM_EK_CHAIN_NV_LAST; index++) {
		uint8_t *buf = NULL;
		size_t len = 0, off = 0, cert_len;
		int ret, more;

		if (!nv_index_exists(t, index))
			return 0; /* the chain's indices are consecutive: the first gap ends it */
		ret = nv_read_all(t, index, LIMIT_EK_CHAIN, "ek certificate chain", &buf, &len);
		if (ret < 0)
			return ret;
		while ((more = ekcert_next(buf, len, &off, &cert_len)) == 0) {
			if (*ncerts >= LIMIT_EK_CHAIN_CERTS ||
			    dynbuf_add(chain, buf + off - cert_len, cert_len) < 0) {
				log_error("the ek certificate chain in nv is longer than %u "
					  "certificates or %u bytes",
					  LIMIT_EK_CHAIN_CERTS, LIMIT_EK_CHAIN);
				free(buf);
				return -EFBIG;
			}
			(*ncerts)++;
		}
		free(buf);
		if (more < 0) {
			log_error("nv index 0x%08x holds bytes that are not der certificates",
				  index);
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * A policy session satisfying the EK's authPolicy, in the EK's nameAlg, as the EK Credential
 * Profile prescribes: PolicySecret(TPM_RH_ENDORSEMENT) (PolicyA, the low range's policy), then
 * for the high range's PolicyB = PolicyOR(PolicyA, PolicyC) the PolicyOR over both branches.
 * The caller flushes it.
 */
static int ek_session(struct tpm *t, ESYS_TR *session)
{
	TPMT_SYM_DEF sym = { .algorithm = TPM2_ALG_NULL };
	TPM2B_DIGEST branches[2];
	TPML_DIGEST list = { 0 };
	TSS2_RC rc;
	int n;

	n = tpmkey_ek_policy_branches(t->ek_profile, branches);
	if (n < 0) {
		log_error("no policy session for ek profile %s", t->ek_profile->name);
		return -EINVAL;
	}
	rc = Esys_StartAuthSession(t->ctx, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
				   ESYS_TR_NONE, NULL, TPM2_SE_POLICY, &sym,
				   t->ek_profile->tmpl.nameAlg, session);
	if (rc != TSS2_RC_SUCCESS)
		return rc_fail("startauthsession for the ek", rc);
	rc = Esys_PolicySecret(t->ctx, ESYS_TR_RH_ENDORSEMENT, *session, ESYS_TR_PASSWORD,
			       ESYS_TR_NONE, ESYS_TR_NONE, NULL, NULL, NULL, 0, NULL, NULL);
	if (rc != TSS2_RC_SUCCESS) {
		Esys_FlushContext(t->ctx, *session);
		*session = ESYS_TR_NONE;
		return rc_fail("policysecret(endorsement) for the ek", rc);
	}
	if (n == 0)
		return 0;
	list.count = (UINT32)n;
	for (int i = 0; i < n; i++)
		list.digests[i] = branches[i];
	rc = Esys_PolicyOR(t->ctx, *session, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &list);
	if (rc != TSS2_RC_SUCCESS) {
		Esys_FlushContext(t->ctx, *session);
		*session = ESYS_TR_NONE;
		return rc_fail("policyor(policya, policyc) for the high-range ek", rc);
	}
	return 0;
}

static void session_flush(struct tpm *t, ESYS_TR *session)
{
	if (*session != ESYS_TR_NONE)
		Esys_FlushContext(t->ctx, *session);
	*session = ESYS_TR_NONE;
}

static enum tpmkey_kind ak_kind(enum attestd_ak_alg alg)
{
	return alg == ATTESTD_AK_ECC ? TPMKEY_ECC_P256 : TPMKEY_RSA2048;
}

static int path_join(char *out, size_t cap, const char *dir, const char *name)
{
	int n = snprintf(out, cap, "%s/%s", dir, name);

	return (n < 0 || (size_t)n >= cap) ? -ENAMETOOLONG : 0;
}

/* Reads a whole small file (at most cap - 1 bytes); -ENOENT if missing, -EFBIG if larger. */
static int read_small_file(const char *path, uint8_t *buf, size_t cap, size_t *len)
{
	struct dynbuf b;
	int ret;

	*len = 0;
	dynbuf_init(&b, cap - 1);
	ret = file_read(path, &b);
	if (ret == 0 && b.len) {
		memcpy(buf, b.buf, b.len);
		*len = b.len;
		OPENSSL_cleanse(b.buf, b.len);
	}
	dynbuf_release(&b);
	return ret;
}

/* Writes a file so that a crash leaves the old or the new content, never a mix. */
static int write_file_atomic(const char *dir, const char *name, const uint8_t *buf, size_t len)
{
	char path[PATH_MAX];
	int ret;

	if (path_join(path, sizeof(path), dir, name) < 0)
		return -ENAMETOOLONG;
	ret = file_write_atomic(path, buf, len, 0600);
	if (ret < 0)
		log_error("cannot write '%s': %s", path, strerror(-ret));
	return ret;
}

static int ensure_dir(const char *dir)
{
	if (mkdir(dir, 0700) == 0 || errno == EEXIST)
		return 0;
	log_error("cannot create state dir '%s': %s", dir, strerror(errno));
	return -errno;
}

/* Loads saved AK blobs; -ENOENT if there are none, -EIO if the TPM refuses them. */
static int ak_load_saved(struct tpm *t, const char *dir)
{
	char path[PATH_MAX];
	uint8_t buf[BLOB_FILE_MAX];
	size_t len = 0, off = 0;
	TPM2B_PUBLIC pub = { 0 }, tmpl;
	TPM2B_PRIVATE priv = { 0 };
	ESYS_TR session = ESYS_TR_NONE;
	TSS2_RC rc;
	int ret;

	if (path_join(path, sizeof(path), dir, "ak.pub") < 0)
		return -ENAMETOOLONG;
	ret = read_small_file(path, buf, sizeof(buf), &len);
	if (ret < 0)
		return ret;
	rc = Tss2_MU_TPM2B_PUBLIC_Unmarshal(buf, len, &off, &pub);
	if (rc != TSS2_RC_SUCCESS || off != len) {
		log_warn("saved ak public '%s' is malformed; creating a new ak", path);
		return -EINVAL;
	}
	if (path_join(path, sizeof(path), dir, "ak.priv") < 0)
		return -ENAMETOOLONG;
	ret = read_small_file(path, buf, sizeof(buf), &len);
	if (ret < 0)
		return ret;
	off = 0;
	rc = Tss2_MU_TPM2B_PRIVATE_Unmarshal(buf, len, &off, &priv);
	OPENSSL_cleanse(buf, sizeof(buf));
	if (rc != TSS2_RC_SUCCESS || off != len) {
		log_warn("saved ak private '%s' is malformed; creating a new ak", path);
		ret = -EINVAL;
		goto out;
	}
	tpmkey_ak_template(&tmpl, pub.publicArea.type == TPM2_ALG_ECC ? TPMKEY_ECC_P256
								      : TPMKEY_RSA2048);
	if (pub.publicArea.objectAttributes != tmpl.publicArea.objectAttributes) {
		log_warn("saved ak has unexpected attributes 0x%x; creating a new ak",
			 (unsigned)pub.publicArea.objectAttributes);
		ret = -EINVAL;
		goto out;
	}
	ret = ek_session(t, &session);
	if (ret < 0)
		goto out;
	rc = Esys_Load(t->ctx, t->ek, session, ESYS_TR_NONE, ESYS_TR_NONE, &priv, &pub, &t->ak);
	session_flush(t, &session);
	if (rc != TSS2_RC_SUCCESS) {
		t->ak = ESYS_TR_NONE;
		ret = rc_fail("load of the saved ak (was the tpm cleared?)", rc);
		goto out;
	}
	t->ak_pub = pub;
	ret = 0;
out:
	OPENSSL_cleanse(&priv, sizeof(priv));
	return ret;
}

static int ak_create(struct tpm *t, const char *dir, enum attestd_ak_alg alg)
{
	TPM2B_PUBLIC tmpl;
	TPM2B_SENSITIVE_CREATE sens = { 0 };
	TPM2B_DATA outside = { 0 };
	TPML_PCR_SELECTION creation_pcr = { 0 };
	TPM2B_PUBLIC *pub = NULL;
	TPM2B_PRIVATE *priv = NULL;
	ESYS_TR session = ESYS_TR_NONE;
	uint8_t buf[sizeof(TPM2B_PRIVATE) > sizeof(TPM2B_PUBLIC) ? sizeof(TPM2B_PRIVATE)
								   : sizeof(TPM2B_PUBLIC)];
	size_t off;
	TSS2_RC rc;
	int ret;

	tpmkey_ak_template(&tmpl, ak_kind(alg));
	ret = ek_session(t, &session);
	if (ret < 0)
		return ret;
	rc = Esys_Create(t->ctx, t->ek, session, ESYS_TR_NONE, ESYS_TR_NONE, &sens, &tmpl,
			 &outside, &creation_pcr, &priv, &pub, NULL, NULL, NULL);
	session_flush(t, &session);
	if (rc != TSS2_RC_SUCCESS)
		return rc_fail("create of the ak under the ek", rc);

	ret = ek_session(t, &session);
	if (ret < 0)
		goto out;
	rc = Esys_Load(t->ctx, t->ek, session, ESYS_TR_NONE, ESYS_TR_NONE, priv, pub, &t->ak);
	session_flush(t, &session);
	if (rc != TSS2_RC_SUCCESS) {
		t->ak = ESYS_TR_NONE;
		ret = rc_fail("load of the new ak", rc);
		goto out;
	}
	t->ak_pub = *pub;

	/* Private first: a public without its private is useless, the reverse is detected. */
	off = 0;
	rc = Tss2_MU_TPM2B_PRIVATE_Marshal(priv, buf, sizeof(buf), &off);
	if (rc != TSS2_RC_SUCCESS) {
		ret = rc_fail("marshal of the ak private", rc);
		goto out;
	}
	ret = write_file_atomic(dir, "ak.priv", buf, off);
	OPENSSL_cleanse(buf, sizeof(buf));
	if (ret < 0)
		goto out;
	off = 0;
	rc = Tss2_MU_TPM2B_PUBLIC_Marshal(pub, buf, sizeof(buf), &off);
	if (rc != TSS2_RC_SUCCESS) {
		ret = rc_fail("marshal of the ak public", rc);
		goto out;
	}
	ret = write_file_atomic(dir, "ak.pub", buf, off);
out:
	if (priv)
		OPENSSL_cleanse(priv, sizeof(*priv));
	Esys_Free(priv);
	Esys_Free(pub);
	return ret;
}

int tpm_ak_load_or_create(struct tpm *t, const char *state_dir, enum attestd_ak_alg alg,
			  bool *created)
{
	int ret;

	*created = false;
	if (t->ak != ESYS_TR_NONE)
		return 0;
	ret = tpm_ek_load(t);
	if (ret < 0)
		return ret;
	ret = ensure_dir(state_dir);
	if (ret < 0)
		return ret;
	ret = ak_load_saved(t, state_dir);
	if (ret == 0) {
		TPMI_ALG_PUBLIC want = alg == ATTESTD_AK_ECC ? TPM2_ALG_ECC : TPM2_ALG_RSA;

		if (t->ak_pub.publicArea.type != want)
			log_warn("saved ak is not of the configured type; keeping the enrolled "
				 "ak (delete '%s/ak.pub' to change it)",
				 state_dir);
		log_info("loaded the saved ak from '%s'", state_dir);
		return 0;
	}
	/* A transport failure must not make us replace an enrolled AK. */
	if (ret != -ENOENT && ret != -EINVAL && ret != -EIO)
		return ret;
	if (ret == -EIO) {
		/* The TPM refused the blobs: probe that it answers before replacing them. */
		TPMS_CAPABILITY_DATA *cap = NULL;
		TPMI_YES_NO more;
		TSS2_RC rc = Esys_GetCapability(t->ctx, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
						TPM2_CAP_TPM_PROPERTIES, TPM2_PT_MANUFACTURER,
						1, &more, &cap);

		Esys_Free(cap);
		if (rc != TSS2_RC_SUCCESS)
			return rc_fail("getcapability", rc);
	}
	ret = ak_create(t, state_dir, alg);
	if (ret == 0) {
		*created = true;
		log_info("created a new %s ak and saved it in '%s'",
			 alg == ATTESTD_AK_ECC ? "ecc p-256" : "rsa-2048", state_dir);
	}
	return ret;
}

int tpm_ak_public(struct tpm *t, uint8_t **out, size_t *out_len)
{
	if (t->ak == ESYS_TR_NONE)
		return -ENOENT;
	return marshal_public(&t->ak_pub, out, out_len);
}

int tpm_ak_name(struct tpm *t, uint8_t *name, size_t *name_len)
{
	TPM2B_NAME *n = NULL;
	TSS2_RC rc;

	if (t->ak == ESYS_TR_NONE)
		return -ENOENT;
	rc = Esys_TR_GetName(t->ctx, t->ak, &n);
	if (rc != TSS2_RC_SUCCESS)
		return rc_fail("getname of the ak", rc);
	if (n->size > LIMIT_TPM_NAME) {
		Esys_Free(n);
		return -EIO;
	}
	memcpy(name, n->name, n->size);
	*name_len = n->size;
	Esys_Free(n);
	return 0;
}

int tpm_activate_credential(struct tpm *t, const uint8_t *blob, size_t blob_len,
			    const uint8_t *secret, size_t secret_len, uint8_t *out, size_t cap,
			    size_t *out_len)
{
	TPM2B_ID_OBJECT cred = { 0 };
	TPM2B_ENCRYPTED_SECRET enc = { 0 };
	TPM2B_DIGEST *info = NULL;
	ESYS_TR session = ESYS_TR_NONE;
	size_t off = 0;
	TSS2_RC rc;
	int ret;

	if (t->ak == ESYS_TR_NONE)
		return -ENOENT;
	rc = Tss2_MU_TPM2B_ID_OBJECT_Unmarshal(blob, blob_len, &off, &cred);
	if (rc != TSS2_RC_SUCCESS || off != blob_len) {
		log_error("credential blob from the verifier is malformed (%zu bytes)", blob_len);
		return -EINVAL;
	}
	off = 0;
	rc = Tss2_MU_TPM2B_ENCRYPTED_SECRET_Unmarshal(secret, secret_len, &off, &enc);
	if (rc != TSS2_RC_SUCCESS || off != secret_len) {
		log_error("encrypted secret from the verifier is malformed (%zu bytes)",
			  secret_len);
		return -EINVAL;
	}
	ret = ek_session(t, &session);
	if (ret < 0)
		return ret;
	rc = Esys_ActivateCredential(t->ctx, t->ak, t->ek, ESYS_TR_PASSWORD, session,
				     ESYS_TR_NONE, &cred, &enc, &info);
	session_flush(t, &session);
	if (rc != TSS2_RC_SUCCESS)
		return rc_fail("activatecredential (the credential was not made for this "
			       "tpm's ek and ak)",
			       rc);
	if (info->size > cap) {
		ret = -ENOSPC;
		goto out;
	}
	memcpy(out, info->buffer, info->size);
	*out_len = info->size;
	ret = 0;
out:
	OPENSSL_cleanse(info, sizeof(*info));
	Esys_Free(info);
	return ret;
}

static void to_tpml(const struct pcr_set *set, TPML_PCR_SELECTION *sel)
{
	memset(sel, 0, sizeof(*sel));
	for (unsigned i = 0; i < set->nbanks && i < TPM2_NUM_PCR_BANKS; i++) {
		TPMS_PCR_SELECTION *s = &sel->pcrSelections[sel->count];

		if (!set->bank[i].mask)
			continue;
		s->hash = set->bank[i].alg;
		s->sizeofSelect = 3;
		s->pcrSelect[0] = (uint8_t)(set->bank[i].mask & 0xff);
		s->pcrSelect[1] = (uint8_t)((set->bank[i].mask >> 8) & 0xff);
		s->pcrSelect[2] = (uint8_t)((set->bank[i].mask >> 16) & 0xff);
		sel->count++;
	}
}

int tpm_pcr_read(struct tpm *t, struct pcr_set *pcrs)
{
	uint32_t left[LIMIT_PCR_BANKS];
	unsigned rounds = 0;

	for (unsigned i = 0; i < pcrs->nbanks; i++) {
		if (!pcr_alg_digest_size(pcrs->bank[i].alg))
			return -EINVAL;
		left[i] = pcrs->bank[i].mask & ((1u << PCR_COUNT) - 1);
	}
	for (;;) {
		struct pcr_set want = *pcrs;
		TPML_PCR_SELECTION sel, *got_sel = NULL;
		TPML_DIGEST *vals = NULL;
		UINT32 counter;
		unsigned k = 0, progress = 0;
		TSS2_RC rc;

		for (unsigned i = 0; i < want.nbanks; i++)
			want.bank[i].mask = left[i];
		to_tpml(&want, &sel);
		if (sel.count == 0)
			return 0;
		/* 24 PCRs x 4 banks at 8 per call: 12 calls at most if the TPM progresses. */
		if (++rounds > PCR_COUNT * LIMIT_PCR_BANKS)
			return -EIO;
		rc = Esys_PCR_Read(t->ctx, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &sel,
				   &counter, &got_sel, &vals);
		if (rc != TSS2_RC_SUCCESS)
			return rc_fail("pcr_read", rc);
		/* Values come in the order of the returned selection, PCRs ascending. */
		for (UINT32 s = 0; s < got_sel->count; s++) {
			const TPMS_PCR_SELECTION *ps = &got_sel->pcrSelections[s];
			struct pcr_bank *b = NULL;
			unsigned bi = 0;

			for (bi = 0; bi < pcrs->nbanks; bi++)
				if (pcrs->bank[bi].alg == ps->hash) {
					b = &pcrs->bank[bi];
					break;
				}
			for (unsigned p = 0; p < PCR_COUNT && p / 8 < ps->sizeofSelect; p++) {
				size_t dsz;

				if (!(ps->pcrSelect[p / 8] & (1u << (p % 8))))
					continue;
				if (!b || !(left[bi] & (1u << p)) || k >= vals->count)
					goto bad;
				dsz = pcr_alg_digest_size(b->alg);
				if (vals->digests[k].size != dsz)
					goto bad;
				memcpy(b->value[p], vals->digests[k].buffer, dsz);
				left[bi] &= ~(1u << p);
				k++;
				progress++;
			}
		}
		if (k != vals->count || progress == 0)
			goto bad;
		Esys_Free(got_sel);
		Esys_Free(vals);
		continue;
bad:
		log_error("tpm pcr_read answer does not match the selection");
		Esys_Free(got_sel);
		Esys_Free(vals);
		return -EIO;
	}
}

static bool same_values(const struct pcr_set *a, const struct pcr_set *b)
{
	for (unsigned i = 0; i < a->nbanks; i++) {
		size_t dsz = pcr_alg_digest_size(a->bank[i].alg);

		for (unsigned p = 0; p < PCR_COUNT; p++)
			if ((a->bank[i].mask & (1u << p)) &&
			    memcmp(a->bank[i].value[p], b->bank[i].value[p], dsz) != 0)
				return false;
	}
	return true;
}

int tpm_quote(struct tpm *t, const uint8_t *nonce, size_t nonce_len, struct pcr_set *pcrs,
	      uint8_t **attest, size_t *attest_len, uint8_t **sig, size_t *sig_len)
{
	TPM2B_DATA qual = { 0 };
	TPMT_SIG_SCHEME scheme = { .scheme = TPM2_ALG_NULL }; /* the AK's own scheme */
	TPML_PCR_SELECTION sel;
	struct pcr_set after;
	int ret;

	*attest = *sig = NULL;
	if (t->ak == ESYS_TR_NONE)
		return -ENOENT;
	if (nonce_len > sizeof(qual.buffer) || nonce_len > LIMIT_NONCE_BYTES)
		return -EINVAL;
	qual.size = (uint16_t)nonce_len;
	memcpy(qual.buffer, nonce, nonce_len);
	to_tpml(pcrs, &sel);
	if (sel.count == 0)
		return -EINVAL;

	for (int attempt = 0; attempt < QUOTE_TRIES; attempt++) {
		TPM2B_ATTEST *quoted = NULL;
		TPMT_SIGNATURE *signature = NULL;
		uint8_t *sbuf;
		size_t off = 0;
		TSS2_RC rc;

		ret = tpm_pcr_read(t, pcrs);
		if (ret < 0)
			return ret;
		rc = Esys_Quote(t->ctx, t->ak, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &qual,
				&scheme, &sel, &quoted, &signature);
		if (rc != TSS2_RC_SUCCESS)
			return rc_fail("quote", rc);
		after = *pcrs;
		ret = tpm_pcr_read(t, &after);
		if (ret == 0 && !same_values(pcrs, &after)) {
			/* IMA extended between the reads: the values may not be the quoted ones. */
			log_debug("pcrs moved during the quote; retrying");
			Esys_Free(quoted);
			Esys_Free(signature);
			continue;
		}
		if (ret < 0) {
			Esys_Free(quoted);
			Esys_Free(signature);
			return ret;
		}
		*attest = malloc(quoted->size ? quoted->size : 1);
		sbuf = malloc(sizeof(TPMT_SIGNATURE));
		if (!*attest || !sbuf) {
			ret = -ENOMEM;
		} else {
			memcpy(*attest, quoted->attestationData, quoted->size);
			*attest_len = quoted->size;
			rc = Tss2_MU_TPMT_SIGNATURE_Marshal(signature, sbuf, sizeof(TPMT_SIGNATURE),
							    &off);
			ret = rc == TSS2_RC_SUCCESS ? 0 : rc_fail("marshal of the signature", rc);
		}
		Esys_Free(quoted);
		Esys_Free(signature);
		if (ret < 0) {
			free(*attest);
			free(sbuf);
			*attest = NULL;
			return ret;
		}
		*sig = sbuf;
		*sig_len = off;
		return 0;
	}
	log_warn("pcrs kept changing during %d quotes; will retry next round", QUOTE_TRIES);
	return -EAGAIN;
}
