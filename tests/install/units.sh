#!/usr/bin/env bash
# The systemd units as `make install` stages them: `systemd-analyze verify` is clean on both
# (this runs without systemd as PID 1: --root on the staged tree, beside a copy of this
# machine's own units, and man(1) reading the staged man pages for Documentation=);
# `systemd-analyze security --offline` keeps each one's exposure at or under what it is today;
# the settings the design rests on are there; `make install` on a live system keeps an
# operator's configuration file.
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib.bash"

command -v systemd-analyze >/dev/null || { fail "systemd-analyze missing (make deps: systemd)"; finish; exit 1; }
R=$T_TMP/root
check "make install DESTDIR=$R" install_staged "$R"
V=$ROOT_UNITDIR/attest-verifier.service A=$ROOT_UNITDIR/attestd.service
check "both units installed" test -f "$V" -a -f "$A"
# The units' default dependencies (sysinit.target, ...) come from the machine's own units, and
# the kill(1) of ExecReload= from its procps (the package depends on it): verify checks that
# every command exists.
mkdir -p "$R/lib/systemd" && cp -a /lib/systemd/system "$R/lib/systemd/"
mkdir -p "$R/bin" && cp /bin/kill "$R/bin/kill"
manpath=$(find "$R" -type d -name man -path '*/share/man' -print -quit)

for u in "$V" "$A"; do
	name=$(basename "$u")
	out=$(cd "$R" && MANPATH=$manpath systemd-analyze verify --root="$R" "${u#"$R"}" 2>&1)
	rc=$?
	if [[ $rc -eq 0 && -z $out ]]; then
		ok "systemd-analyze verify $name: clean (Documentation= pages found too)"
	else
		fail "systemd-analyze verify $name: exit $rc: $out"
	fi
	mapfile -t cmd < <(unit_exec "$R" "$u")
	check "$name: ExecStart runs a binary of the staged tree (${cmd[0]#"$R"})" test -x "${cmd[0]}"
	check_eq "$name: readiness through sd_notify" notify "$(unit_value "$u" Type)"
	check_eq "$name: a dynamic user" yes "$(unit_value "$u" DynamicUser)"
	for kv in NoNewPrivileges=yes ProtectSystem=strict PrivateTmp=yes ProtectHome=yes \
		'RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX' SystemCallFilter=@system-service \
		SystemCallArchitectures=native; do
		check "$name: $kv" grep -qxF "$kv" "$u"
	done
done

# What systemd itself scores (0 = locked down, 10 = exposed); a change that loosens a unit
# fails here until the bound is raised on purpose.
exposure() {
	(cd "$R" && systemd-analyze security --offline=yes --root="$R" "${1#"$R"}" 2>/dev/null) |
		sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p'
}
for pair in "$V:1.2" "$A:1.8"; do
	u=${pair%:*} bound=${pair##*:}
	e=$(exposure "$u")
	check "$(basename "$u"): exposure $e <= $bound" awk -v e="$e" -v b="$bound" 'BEGIN { exit !(e != "" && e <= b) }'
done

# `systemctl reload` sends SIGHUP (tokens, EK CAs, TLS certificate); run_units.sh runs it.
check_eq "verifier: ExecReload= sends SIGHUP to the main process" '/bin/kill -HUP $MAINPID' \
	"$(unit_value "$V" ExecReload)"
check_eq "verifier: no capability" "" "$(unit_value "$V" CapabilityBoundingSet)"
check_eq "verifier: no device" yes "$(unit_value "$V" PrivateDevices)"
check_eq "verifier: its state directory" attest-verifier "$(unit_value "$V" StateDirectory)"
check_eq "attestd: one capability, to read the IMA list" CAP_DAC_READ_SEARCH "$(unit_value "$A" CapabilityBoundingSet)"
check_eq "attestd: no device but the TPM" "closed|/dev/tpmrm0 rw" "$(unit_value "$A" DevicePolicy)|$(unit_value "$A" DeviceAllow)"
check_eq "attestd: the TPM through the tss group" tss "$(unit_value "$A" SupplementaryGroups)"
check_eq "attestd: its state directory" attestd "$(unit_value "$A" StateDirectory)"

# --- make install on a live system keeps an existing configuration file ----------------------
# DESTDIR empty, PREFIX and SYSCONFDIR in a temporary directory. `-o buildinfo.h`: the binaries
# of this build are installed as they are (a new SYSCONFDIR would rebuild them; the point here
# is the configuration files).
L=$T_TMP/live
live_install() {
	make -C "$TOP" --no-print-directory -o "${BUILD:-build}/gen/buildinfo.h" install DESTDIR= \
		PREFIX="$L/usr" SYSCONFDIR="$L/etc" >"$L.log" 2>&1
}
mkdir -p "$L"
check "make install into an empty SYSCONFDIR" live_install
check "the example configuration files are installed" \
	cmp -s "$L/etc/attest/verifier.conf" "$B/etc/verifier.conf"
echo "listen = 127.0.0.1:9443 # mine" >>"$L/etc/attest/verifier.conf"
cp "$L/etc/attest/verifier.conf" "$T_TMP/mine.conf"
check "make install again" live_install
check "an operator's verifier.conf is kept" cmp -s "$L/etc/attest/verifier.conf" "$T_TMP/mine.conf"
check "and make install says so" grep -q "KEEP.*$L/etc/attest/verifier.conf" "$L.log"

finish
