#!/usr/bin/env bash
# Attack matrix, memory (issue 15): 16 concurrent uploads of 60 MiB to the evidence URL. To
# agents that do not exist, and to an agent without a challenge out, nothing is read (404
# unknown_agent, 409 no_challenge, decided from the URL and headers). To an agent with a
# challenge out (anyone may ask for one), bodies are read while they fit in the budget of
# large bodies in flight (LIMIT_BODY_BUDGET, counted three times over: a body, its JSON and its
# decoded log), the others are answered 503 busy with Retry-After. The verifier's peak RSS
# (VmHWM) stays under the bound SECURITY.md documents, and an honest round is trusted after.
# A body sent chunked with a small Content-Length beside it is refused unread (400), as is a
# chunked body to the evidence URL without one (411): a large body is admitted by its length.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../lib/softagent.bash"

MIB=$((1024 * 1024))
SIZE=$((60 * MIB))
# Peak RSS growth allowed, KiB: SECURITY.md's bound (the body budget, 256 MiB: reserved three
# times a body, so two 60 MiB bodies at most in flight) with 32 MiB for the connections' TLS
# and libmicrohttpd buffers.
BOUND_KIB=$(((256 + 32) * 1024))

start_verifier "$W/v" "${VARGS[@]}" || { fail "verifier starts"; finish; exit 1; }
agent a || { finish; exit 1; }
hwm() { awk '/^VmHWM:/ { print $2 }' "/proc/$VPID/status"; }
# An evidence body of SIZE bytes that parses as far as it can: JSON with its fields in order
# and a base64 log of zeros (decoded, then refused as a list that does not parse).
Z32=$(printf '00%.0s' {1..32})
HEAD="{\"nonce\": \"$Z32\", \"attest\": \"AAAA\", \"signature\": \"AAAA\", \"pcrs\": {\"sha256\": {\"10\": \"$Z32\"}}, \"log_offset\": 0, \"log\": \""
{
	printf '%s' "$HEAD"
	head -c $((SIZE - ${#HEAD} - 2)) /dev/zero | tr '\0' 'A'
	printf '"}'
} >"$W/big.json"
check_eq "a 60 MiB evidence body" "$SIZE" "$(stat -c %s "$W/big.json")"

# upload N PATH [CURL-ARGS...]: N uploads of it at once (curl streams a -T file, Content-Length
# from its size unless CURL-ARGS say otherwise); the answers as "STATUS xCOUNT CODE, ..." in
# $W/codes.
upload() {
	local i n=$1 path=$2 pids=()
	shift 2
	: >"$W/codes"
	for i in $(seq 1 "$n"); do
		curl -sS --cacert "$CA" -X POST -T "$W/big.json" -H 'Content-Type: application/json' \
			"$@" -D "$W/headers-$i" -o "$W/answer-$i" -w '%{http_code}\n' \
			"$URL${path//@/$i}" >"$W/code-$i" 2>/dev/null &
		pids+=($!)
	done
	wait "${pids[@]}" # not a bare wait: the verifier is a child of this shell too
	for i in $(seq 1 "$n"); do
		printf '%s %s\n' "$(cat "$W/code-$i")" "$(jq -r '.error.code // .verdict // "?"' "$W/answer-$i" 2>/dev/null)"
	done | sort | uniq -c | awk '{ printf "%s%s x%s %s", sep, $2, $1, $3; sep = ", " }' >"$W/codes"
}

base=$(hwm)
upload 16 "/v1/agents/ghost-@/evidence"
check_eq "16 x 60 MiB to agents that do not exist: refused unread" "404 x16 unknown_agent" "$(cat "$W/codes")"
upload 16 "/v1/agents/a/evidence"
check_eq "16 x 60 MiB to an agent without a challenge out: refused unread" "409 x16 no_challenge" "$(cat "$W/codes")"
grown=$(($(hwm) - base))
check_rss "the verifier's peak RSS grew by ${grown} KiB (< 16 MiB: nothing was read)" "$grown" 16384

# A small Content-Length with the body sent chunked: the length is not the body's (chunked wins,
# RFC 9112 6.3), so the announced 10 bytes must not let 60 MiB past the admission and the budget.
upload 2 "/v1/agents/a/evidence" -H 'Transfer-Encoding: chunked' -H 'Content-Length: 10'
check_eq "2 x 60 MiB chunked with Content-Length: 10: refused unread" "400 x2 bad_request" \
	"$(cat "$W/codes")"
check "the answer names the two headers" grep -q 'Transfer-Encoding' "$W/answer-1"
grown=$(($(hwm) - base))
check_rss "the verifier's peak RSS grew by ${grown} KiB (< 16 MiB: nothing was read)" "$grown" 16384

# Anyone may ask for a challenge in an agent's name: then the bodies can be valid, and are read.
check_eq "an attacker's challenge for agent a" 201 \
	"$(curl -sS --cacert "$CA" -o /dev/null -w '%{http_code}' -X POST "$URL/v1/agents/a/challenges")"
upload 16 "/v1/agents/a/evidence"
answers=$(cat "$W/codes")
check "16 x 60 MiB with a challenge out: read and refused (400) or not read (503 busy): $answers" \
	grep -qxE '(400 x[0-9]+ [a-z_]+|503 x[0-9]+ busy)(, (400 x[0-9]+ [a-z_]+|503 x[0-9]+ busy))*' <<<"$answers"
grown=$(($(hwm) - base))
check_rss "the verifier's peak RSS grew by $((grown / 1024)) MiB (< $((BOUND_KIB / 1024)) MiB)" \
	"$grown" "$BOUND_KIB"
retry=none
for i in $(seq 1 16); do
	if [[ $(cat "$W/code-$i") == 503 ]]; then
		retry=$(tr -d '\r' <"$W/headers-$i" | awk -F': ' 'tolower($1) == "retry-after" { print $2 }')
		break
	fi
done
check "a 503 says when to retry (Retry-After: ${retry:-missing})" grep -qxE '[0-9]+|none' <<<"$retry"
echo "VmHWM: $((base / 1024)) MiB at start, $(($(hwm) / 1024)) MiB after the attacks"

r=$(curl -sS --cacert "$CA" -o "$W/chunked" -w '%{http_code}' -X POST -H 'Transfer-Encoding: chunked' \
	--data-binary '{}' "$URL/v1/agents/a/evidence")
check_eq "a large route's body without a length (chunked): refused unread" "411 length_required" \
	"$r $(jq -r .error.code "$W/chunked")"
trusted "after the attacks: an honest round is trusted" a
finish
