/*
 * Public IMA signature vectors shared by the unit tests (test_imasig, test_judge).
 *
 * Vectors and where they come from (see tests/data/keylime/README for the Keylime ones):
 *  - Keylime test/test_ima_verification.py (Apache-2.0): SIGNATURES, one RSA-2048 and one
 *    secp256k1 signature over sha256 file digests (/usr/bin/dd, /usr/bin/zmore), verified by
 *    test/data/ima_keys/rsa2048pub.pem and the public half of secp256k1.pem, whose key ids
 *    Keylime's RUNTIME_POLICY_WITH_VERIFICATION_KEYS lists (4081397027, 1394556965); the older
 *    revision's sha1 signature of /usr/bin/dd; BAD_SIGNATURES (a size field that lies); the
 *    ECDSA certificate of KEYRINGS (an ima-buf entry of the .ima keyring).
 *  - Made for this test with `evmctl ima_sign` (ima-evm-utils 1.4) on a 21-byte file
 *    ("attest imasig vector\n"): a P-384/sha384 and an RSA-3072/sha512 signature.
 */
#ifndef TESTS_UNIT_IMASIG_VECTORS_H
#define TESTS_UNIT_IMASIG_VECTORS_H

#include <string.h>

#include "proto/encoding.h"

/* A vector decoded from hex or base64 (empty if it does not decode). */
struct bytes {
	uint8_t b[2048];
	size_t n;
};

static inline struct bytes hex(const char *h)
{
	struct bytes out;
	ssize_t n = hex_decode(h, strlen(h), out.b, sizeof(out.b));

	out.n = n < 0 ? 0 : (size_t)n;
	return out;
}

static inline struct bytes b64(const char *s)
{
	struct bytes out;
	ssize_t n = base64_decode(s, strlen(s), out.b, sizeof(out.b));

	out.n = n < 0 ? 0 : (size_t)n;
	return out;
}

static const char __attribute__((unused)) kl_rsa_pem[] =
	"-----BEGIN PUBLIC KEY-----\n"
	"MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA1cD7bW5tX5qIVgWskS5t\n"
	"zY+XpqWzcW6HFq5npj8dHFIWsAJJCUdoSU631hkyY8HP/RfXDPq/J4IeKvx35EVX\n"
	"j49t1Z1FTJBgUlEbkKvqm0rY6jo7PnJ6BsDRrauXtiEXVKNXcWXDk8ES+9v9Cz26\n"
	"BJYAr+5Xgm2aEyAbj8GhicxUZfsjDm8eJ7ZnQKuhF7jejG5dYAYxnBVu99bQJHI5\n"
	"Fsu3dAjGbys9v7ToNbonS+1bJXdHyEE0swhxBOPvvV6vx5CzRNw1Sou3rT19T4j8\n"
	"wpsFOyYXVcbbRVBAmBE2Qy2UHvojFqaJN/A9lztllyER1S5heGG6CxK3GoR6pkOX\n"
	"AQIDAQAB\n"
	"-----END PUBLIC KEY-----\n";
/* Keylime's verification-keys entry for secp256k1.pem: a DER SubjectPublicKeyInfo in base64. */
static const char __attribute__((unused)) kl_ec_b64[] =
	"MFYwEAYHKoZIzj0CAQYFK4EEAAoDQgAEnNH3Y/xOTwRRd8D6hpodRLnVx71qDTLvJHouno7nU7JSzcXWN1PxK+HQ"
	"Eh1V7sMdwBER4KFKE635JTv6C+BRBg==";
#define KL_RSA_KEYID 4081397027u /* 0xf3452d23 */
#define KL_EC_KEYID 1394556965u  /* 0x531f4025 */

#define KL_DD_SHA256 "d33d5d13792292e202dbf69a6f1b07bc8a02f01424db8489ba7bb7d43c0290ef"
#define KL_DD_SIG                                                                          \
	"030204f3452d2301009dd340c852f37e35748363586939d4199b6684be27e7c1236ca1528f708372ed9cd5" \
	"2a0d991f66448790f5616ed5bd7f9bbd22193b1e3e54f6bf29a1497945a34d1b418b24f4cbeaef897bf3ce" \
	"bca27065ebb8761b46bc2662fe76f141245b9186a5ac8493c7f4976cf0d6dfc085c3e503e3f771bc3ccb12" \
	"1230db76fd8aba4f45f060ad64ab3afd99b4e52824b9eba12e93e46f9dcb2fa01d9cef89f298a0da02a82a" \
	"4fb56924afd3e3c277a1302d99f770d488449df2d43eb5b174a0a528827e6877b965c2f0b7c89cf1aa26a7" \
	"417a892df4c2294e2872d62748b72ea04ecb0689b5d792e615a9bf9d56f6e0f298560bf9441df0a22729c5" \
	"f23389f028c25f"
#define KL_ZMORE_SHA256 "b8ae0b8dd04a5935cd8165aa2260cd11b658bd71629bdb52256a675a1f73907b"
#define KL_ZMORE_SIG                                                                       \
	"030204531f402500483046022100fe24678d21083ead47660e1a2d553a592d777c478d1b0466de6ed484b5" \
	"4956b3022100cad3adb37f277bbb03544d6107751b4cd4f2289d8353fa36257400a99334d5c3"
/* BAD_SIGNATURES: the same field with the size 0x0048 written as 0x4800. */
#define KL_ZMORE_BAD_SIG                                                                   \
	"030204531f402548003046022100fe24678d21083ead47660e1a2d553a592d777c478d1b0466de6ed484b5" \
	"4956b3022100cad3adb37f277bbb03544d6107751b4cd4f2289d8353fa36257400a99334d5c3"
/* The older revision of the test: RSA over the sha1 digest of /usr/bin/dd. */
#define KL_DD_SHA1 "1350320e5f7f51553bac8aa403489a1b135bc101"
#define KL_DD_SHA1_SIG                                                                     \
	"030202f3452d23010084c2a6cf7de1aeefa119220df0da265a7c44d34380f0d97002e7c778d09cfcf88c01" \
	"8e6595df3ee70eda926851f159332f852e7981a8fca1bc5e959958d06d234a0896861f13cc60da825905c8" \
	"ed234df26c1deecfa816d5aa9bfb11b905e2814084a86b588be60423afada8dd0dd5a143774c6d890b6419" \
	"5ac42fb47ef5a9a00f0d6c80711d8e0c2b843ec38c02f60fd46bc46c7b4c329ad2dbb1b762529370" \
	"3f9c739dc4c2bf0769126a2f3cb2cd031d1881cd0af64bf20fd474a993b48620f103a5c14999a2f17d6072" \
	"1bcc019a896b4138a688a59f50cb6cd94a4cfe3b8052e82dec025fef4feabb08c7ce412e3de850f903797e" \
	"293ec27c329f57fd84e0"
/* KEYRINGS: the buffer of the .ima ima-buf entry, a DER ECDSA certificate. */
#define KL_KEYRING_CERT                                                                    \
	"308201d130820178a003020102020101300906072a8648ce3d0401301b3119301706035504030c1054657374" \
	"696e672d45434453412d4341301e170d3231303631313133353831365a170d3232303631313133353831365a" \
	"3021311f301d06035504030c1665636473612d63612d7369676e65642d65632d6b65793059301306072a8648" \
	"ce3d020106082a8648ce3d030107034200044ce55be36765b59de2767f6d6721be8bea8e3db4ccc25ab76c30" \
	"f5d1c11752ae1699cc39d31b378f69fecbe65ce1eb09e075f840fe4c052bafb9039742b76202a381a73081a4" \
	"30090603551d1304023000301d0603551d0e04160414b6fb3c083d19695be441c5f59afb95742cb6058c3056" \
	"0603551d23044f304d80140a51da379e45bd7ac623c3f765b53e1e2dde5195a11fa41d301b31193017060355" \
	"04030c1054657374696e672d45434453412d434182142bb351b0d645e4d8594316ac3c96fc6d9c8379153013" \
	"0603551d25040c300a06082b06010505070302300b0603551d0f040403020780300906072a8648ce3d040103" \
	"48003045022033d47b623c9feefab7d6e68b001ac6463433f99b61ce7b951a32da065a5d17af022100f3d73e" \
	"38070053aec63a941ed36ae0dcfa25ed9cd538c459732a7e782132a4ca"

/* evmctl 1.4, this test's own keys. */
static const char __attribute__((unused)) ev_p384_pem[] =
	"-----BEGIN PUBLIC KEY-----\n"
	"MHYwEAYHKoZIzj0CAQYFK4EEACIDYgAEinF9pOmhaRSLeBz62L4TjEi3J3UYnk/e\n"
	"a0ORQ/zqa9paXecTLv92SRdrHV1bcSSGzaKUROHc5flsKqHIPfMUg+dPdvLl2p4O\n"
	"GwpdkUG2qFXKVLfi7IvK5zYlwcSY26Y2\n"
	"-----END PUBLIC KEY-----\n";
#define EV_SHA384 \
	"a279dbed082b11df4b8199d1ebc8762ac4420311907b4892161a75618682f899f986a7db1e26b62c96de1b9cc2d21bd1"
#define EV_P384_SIG                                                                        \
	"0302058657a06100683066023100847768c062257b2a632a2e8c22469a2df549adfad0e6fcca5731b3e862" \
	"9e45f87e960b24473fe8e469fa3b6a8ac8a525023100bafd3e975ecc070b35b7f403777ef5cea9ba441730" \
	"e37f9e956e3ad0eaa7bd111637d1410d634ac6a77d7ac851e3c9d8"
static const char __attribute__((unused)) ev_rsa3072_pem[] =
	"-----BEGIN PUBLIC KEY-----\n"
	"MIIBojANBgkqhkiG9w0BAQEFAAOCAY8AMIIBigKCAYEAqdFntGED5J9On1D+BXxc\n"
	"EgSbnNpqGMpqLCNWNAxCZ/EC/p2IQX8/d6VB8/DqfYyBNbKWZSE+M2l8Ip39zcmd\n"
	"AI3EPjeCfh4ws3zqbbymxQY+frHrY3fUhBSBMfj1QTpyykEZ1auHN0+Jinab4xnU\n"
	"NgEQBoyPjyZymLHdgz45cw9pHYbrV59ds/iLQkhymM9MQ+AIdCt/4oWEjqImeShN\n"
	"5QAXFdn89GkOR2w65Ga7Jg9Rx8ZXxwmkhhkU7+Af0vTosux7Qf96zRCAfMUomcBt\n"
	"J9nQtd1VzGoX2OjMISQLF78u/eXe9rnrPd7b0IP7+CneYHXo68WRLBXhyIYnfrpl\n"
	"SDqZRXMjDS76PemQkwAS4Zzw+aSKNT6oXw4FPndCO16kWTxeEQE0Jh0Ctmhoeeus\n"
	"aFEshDnQ6OaiNrmPzDkv/scgWXmrEz1WMV7Xe4Lc0D9EuR7u2SPffCNBlMa7ZLlR\n"
	"TCFYGASgvVNmUVQopNDXoAKFoumbcHowM8x97tbJAbfxAgMBAAE=\n"
	"-----END PUBLIC KEY-----\n";
#define EV_SHA512                                                                          \
	"646a130088efa13255ef73ab10a208c08c0ecb39c15769dee942ffb5f0ff1d2f8a9dd13ff6b13d516a3e4af3" \
	"c4de54516c32af96d49448ee2ba9cd2e564df18b"
#define EV_RSA3072_SIG                                                                     \
	"0302064cd59b31018019e4b649947c05de9e0fd311ad4d66cdb3b45e7d0f3342216b533bf3fc94591a5b4e" \
	"8dbeab67987a1328545f6bd20fa0c20c942ea5873a927b91fc94b480c51d6cacf28a58b2d5da62827b03af" \
	"286ab6665799d69c5f5b7b9a25fb0d79cf68078ab493234342b406fab8bff4cf64761b731e36fa7eeaf682" \
	"87a8a06701e1c7061161b11a6edb2ffd33311598ea5f3f321d65cb83c894f18578987c5c72193b3dd9325a" \
	"0cf5ee6b8b81d7cf75c199f6a80bdfba82e501ef86a13f392c64692e86e7bfa66205f1dd9718822e5eff88" \
	"ea7df6594ef6e966ca7772ee85d20a407d6e8eb45fe42fb8d5b03fc61624486aaac0c83b33cc185f549135" \
	"b80e7ec6979d66cbab37688bfe3bbd51834880fc48ad7799cb2fe6c115b9d50fbba2cda1a8af8f17b81367" \
	"8aabe8e7d770fc3f1e6115ad157c7b39ae0135134a885900f0dd15702f1c5715b17ac00c1c8e52a78ebdd9" \
	"e96c280e58338dde34cbf281df59a4a1781cb1e0e024d797f4b1221bb192fd574cf2cb974dc075f1be9ed8" \
	"77b449ef4c46"
/* A certificate for the P-384 key whose subject key identifier ends in 0a0b0c0d. */
static const char __attribute__((unused)) skid_cert_pem[] =
	"-----BEGIN CERTIFICATE-----\n"
	"MIIBzTCCAVKgAwIBAgIUW67I/zcwucQVWt3GG+B8ILm4utUwCgYIKoZIzj0EAwIw\n"
	"HTEbMBkGA1UEAwwSYXR0ZXN0IGltYXNpZyB0ZXN0MB4XDTI2MTIwMzE4MDUxNloX\n"
	"DTM2MTEzMDE4MDUxNlowHTEbMBkGA1UEAwwSYXR0ZXN0IGltYXNpZyB0ZXN0MHYw\n"
	"EAYHKoZIzj0CAQYFK4EEACIDYgAEinF9pOmhaRSLeBz62L4TjEi3J3UYnk/ea0OR\n"
	"Q/zqa9paXecTLv92SRdrHV1bcSSGzaKUROHc5flsKqHIPfMUg+dPdvLl2p4OGwpd\n"
	"kUG2qFXKVLfi7IvK5zYlwcSY26Y2o1MwUTAfBgNVHSMEGDAWgBS2ByglYQWbA3Cu\n"
	"/ms4UD05hlegYTAPBgNVHRMBAf8EBTADAQH/MB0GA1UdDgQWBBQAESIzRFVmd4iZ\n"
	"qrvM3e7/CgsMDTAKBggqhkjOPQQDAgNpADBmAjEAt73rCoUsulL/chrmdsNWCcp4\n"
	"E7K7H0MqIzEFQB5snkiQ+aJ8A/SaNE/4ONPlenJVAjEAgxnGbnf35D3lm/tLaKUB\n"
	"HVr78OxdWF0f0ofwR9sgvVzmJOvCHu+z4e+6JmJAacR7\n"
	"-----END CERTIFICATE-----\n";

#endif
