#!/usr/bin/env bash
# Install the Debian packages listed in deps.txt (one per line, '#' comments).
# Idempotent: when every package is already installed, apt is not touched at all.
set -euo pipefail
list=${1:-deps.txt}
mapfile -t pkgs < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' "$list" | grep -v '^$')
missing=()
for p in "${pkgs[@]}"; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[[ $st == "install ok installed" ]] || missing+=("$p")
done
if [[ ${#missing[@]} -eq 0 ]]; then
	echo "deps: all ${#pkgs[@]} packages present"
	exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
	echo "deps: missing ${missing[*]}; run 'sudo make deps'" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
