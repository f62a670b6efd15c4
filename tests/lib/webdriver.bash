# The operator page in a real browser, for the ui_* tests: Debian's chromium driven by
# chromedriver over the W3C WebDriver HTTP protocol with curl + jq. Source after tests/lib.sh;
# `wd_start DIR` starts chromedriver and one headless session (sets S, the session's path;
# ends it when the test exits), or returns 1 after saying why. The helpers take CSS selectors.

CHROMIUM=/usr/bin/chromium
CHROMEDRIVER=/usr/bin/chromedriver
ELEM=element-6066-11e4-a52e-4f735466cecf # the W3C web element key

# wd_usable: 0 when chromium, chromedriver, curl and jq are installed.
wd_usable() {
	local bin
	for bin in "$CHROMIUM" "$CHROMEDRIVER"; do
		[[ -x $bin ]] || { skip "$bin not installed (make deps)"; return 1; }
	done
	for bin in curl jq base64; do
		command -v $bin >/dev/null || { skip "$bin not installed"; return 1; }
	done
}

# wd METHOD PATH [JSON]: one WebDriver command; prints the answer's JSON.
wd() {
	if [[ $# -ge 3 ]]; then
		curl -sS -X "$1" -H 'Content-Type: application/json' --data-binary "$3" "$WD$2"
	else
		curl -sS -X "$1" "$WD$2"
	fi
}

# wd_start DIR: chromedriver on a free port, a session with its profile under DIR.
wd_start() {
	local port caps
	port=$(free_port)
	"$CHROMEDRIVER" --port="$port" --allowed-ips=127.0.0.1 >"$1/chromedriver.log" 2>&1 &
	track_pid $!
	wait_for_port "$port" 15 || { fail "chromedriver does not listen"; return 1; }
	WD=http://127.0.0.1:$port
	mkdir -p "$1/profile"
	caps=$(jq -cn --arg bin "$CHROMIUM" --arg prof "$1/profile" '{capabilities: {alwaysMatch: {
		browserName: "chrome", acceptInsecureCerts: true, "goog:loggingPrefs": {browser: "ALL"},
		"goog:chromeOptions": {binary: $bin, args: ["--headless=new", "--no-sandbox", "--disable-gpu",
			"--disable-dev-shm-usage", "--no-first-run", "--disable-background-networking",
			"--disable-component-update", "--disable-sync", "--user-data-dir=\($prof)",
			"--window-size=1366,900"]}}}}')
	SID=$(wd POST /session "$caps" | tee "$1/session.json" | jq -r '.value.sessionId // empty')
	[[ -n $SID ]] || { fail "no WebDriver session: $(head -c 400 "$1/session.json")"; return 1; }
	ok "chromium session started"
	trap 'wd_end; t_cleanup' EXIT
	S=/session/$SID
}
wd_end() { [[ -n ${SID:-} ]] && wd DELETE "/session/$SID" >/dev/null; SID=; }

# go URL: the browser opens it.
go() { wd POST "$S/url" "$(jq -cn --arg u "$1" '{url: $u}')" >/dev/null; }
css() { jq -cn --arg v "$1" '{using: "css selector", value: $v}'; }
# elem CSS: the first matching element's id (empty when none).
elem() { wd POST "$S/element" "$(css "$1")" | jq -r --arg k "$ELEM" '.value[$k] // empty'; }
count() { wd POST "$S/elements" "$(css "$1")" | jq '.value | length'; }
text() { local e; e=$(elem "$1"); [[ -n $e ]] && wd GET "$S/element/$e/text" | jq -r .value; }
click() { local e; e=$(elem "$1"); [[ -n $e ]] && wd POST "$S/element/$e/click" '{}' >/dev/null; }
type_in() { local e; e=$(elem "$1"); [[ -n $e ]] &&
	wd POST "$S/element/$e/value" "$(jq -cn --arg t "$2" '{text: $t}')" >/dev/null; }
js() { wd POST "$S/execute/sync" "$(jq -cn --arg s "$1" '{script: $s, args: []}')" | jq -r .value; }
count_is() { [[ $(count "$1") == "$2" ]]; }
text_matches() { [[ $(text "$1") =~ $2 ]]; }
# wait_count CSS N: until exactly N elements match (10 s, wait_until of tests/lib.sh).
wait_count() { wait_until 10 count_is "$1" "$2"; }
# wait_text CSS REGEX: until the first match's text matches (10 s).
wait_text() { wait_until 10 text_matches "$1" "$2"; }
# shot NAME: a screenshot as $SHOTS/NAME.png (0 when it is a PNG).
shot() {
	mkdir -p "$SHOTS"
	wd GET "$S/screenshot" | jq -r .value | base64 -d >"$SHOTS/$1.png" 2>/dev/null
	[[ $(head -c 8 "$SHOTS/$1.png" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]]
}
# console_errors FILE IGNORE: the browser console's SEVERE messages not matching the regex
# IGNORE (the log saved to FILE).
console_errors() {
	wd POST "$S/se/log" '{"type":"browser"}' >"$1"
	jq -r --arg ig "$2" '.value[] | select(.level == "SEVERE") | .message | select(test($ig) | not)' "$1"
}
