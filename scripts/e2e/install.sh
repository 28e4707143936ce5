#!/usr/bin/env bash
# Installs the servers the end-to-end run (scripts/e2e/run.ts) starts, from Debian's packages, when
# they are missing: Dovecot's IMAP server, PostgreSQL, Redis. Idempotent and quiet: with everything
# present it only checks and prints one line per server. n8n itself comes from
# scripts/n8n/install.sh 2 (its own cache outside the package).
#
#   bash scripts/e2e/install.sh
#
# Only the packages are installed: the Debian services they come with are stopped and disabled
# again where the package started them (the run starts its own throwaway instances on free loopback
# ports, with their own config and data folders, and never uses the system ones).
set -euo pipefail

log() { printf '[e2e-install] %s\n' "$*" >&2; }

# binary → Debian package
declare -A NEED=(
	[/usr/sbin/dovecot]=dovecot-imapd
	[/usr/bin/redis-server]=redis-server
	[/usr/bin/pg_ctlcluster]=postgresql
)

missing=()
for bin in "${!NEED[@]}"; do
	[[ -x $bin ]] || missing+=("${NEED[$bin]}")
done
# initdb/postgres of some PostgreSQL major under /usr/lib/postgresql/*/bin
if ! compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null; then missing+=(postgresql); fi

if [[ ${#missing[@]} -gt 0 ]]; then
	mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
	if [[ $(id -u) != 0 ]]; then
		log "missing: ${missing[*]}; run as root (or: sudo apt-get install -y ${missing[*]})"
		exit 1
	fi
	t0=$(date +%s)
	log "apt-get install ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	# the package lists may be absent on a fresh machine
	if ! apt-get install -y -qq --no-install-recommends "${missing[@]}" >/tmp/e2e-apt.log 2>&1; then
		apt-get update -qq >>/tmp/e2e-apt.log 2>&1
		apt-get install -y -qq --no-install-recommends "${missing[@]}" >>/tmp/e2e-apt.log 2>&1 || {
			tail -30 /tmp/e2e-apt.log >&2
			log "apt-get install FAILED (log: /tmp/e2e-apt.log)"
			exit 1
		}
	fi
	# the packages' own services are not used; where the package started them, stop them again
	# (no systemd in containers: service(8) or the init scripts; failures are harmless)
	for svc in dovecot redis-server; do
		if command -v service >/dev/null; then service "$svc" stop >/dev/null 2>&1 || true; fi
	done
	log "installed in $(($(date +%s) - t0))s"
fi

pgbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
log "dovecot $(/usr/sbin/dovecot --version | cut -d' ' -f1), redis $(/usr/bin/redis-server --version | sed -E 's/.* v=([^ ]+).*/\1/'), postgresql $("$pgbin/postgres" --version | awk '{print $3}')"
# one machine-readable line for the runner
printf 'E2E_TOOLS {"dovecot":"/usr/sbin/dovecot","redisServer":"/usr/bin/redis-server","pgBin":"%s"}\n' "$pgbin"
