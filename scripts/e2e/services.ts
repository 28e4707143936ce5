/**
 * The servers of the end-to-end run, each a throwaway instance on a free loopback port with its own
 * config and data folder under the run's temporary root: PostgreSQL (n8n's database and the `erp`
 * database), Redis (n8n's queue), Dovecot (the mailbox), and n8n itself (main + workers, queue
 * mode). The Debian packages come from scripts/e2e/install.sh, n8n from scripts/n8n/install.sh.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { ImapFlow } from 'imapflow';

import { installPackageInto, n8nCli, n8nEnv, type LineInfo } from '../lib/n8n';
import { freePort } from '../lib/ports';
import {
	commandError,
	ROOT,
	runCommand,
	startService,
	tail,
	waitUntil,
	type Done,
	type Service,
} from '../lib/processes';

export { ROOT };

/** Paths of the Debian tools, as scripts/e2e/install.sh prints them (`E2E_TOOLS {json}`). */
export interface Tools {
	dovecot: string;
	redisServer: string;
	/** e.g. /usr/lib/postgresql/15/bin (initdb, postgres) */
	pgBin: string;
}

/**
 * `bash scripts/e2e/install.sh`: installs Dovecot, PostgreSQL and Redis from Debian when missing.
 *
 * @returns the tools' paths, and whether anything was installed (a cold run)
 */
export async function installTools(): Promise<{ tools: Tools; ms: number; installed: boolean }> {
	const r = await runCommand('bash', [path.join(__dirname, 'install.sh')], {
		cwd: ROOT,
		timeoutMs: 15 * 60_000,
	});
	const line = r.stdout.split('\n').find((l) => l.startsWith('E2E_TOOLS '));
	if (r.code !== 0 || !line) throw commandError('scripts/e2e/install.sh', r);
	return {
		tools: JSON.parse(line.slice('E2E_TOOLS '.length)) as Tools,
		ms: r.ms,
		installed: /apt-get install/.test(r.stderr),
	};
}

// ---------------------------------------------------------------------------------------------
// who runs the servers that refuse root

interface RunAs {
	uid: number;
	gid: number;
}

function lookupUser(name: string): RunAs | undefined {
	const u = spawnSync('id', ['-u', name], { encoding: 'utf8' });
	const g = spawnSync('id', ['-g', name], { encoding: 'utf8' });
	if (u.status !== 0 || g.status !== 0) return undefined;
	return { uid: Number(u.stdout.trim()), gid: Number(g.stdout.trim()) };
}

const isRoot = (): boolean => process.getuid?.() === 0;

/** A folder the given user owns (a no-op when not root: everything runs as the current user). */
function ownedDir(dir: string, owner: RunAs | undefined): string {
	mkdirSync(dir, { recursive: true });
	if (owner && isRoot()) chownSync(dir, owner.uid, owner.gid);
	return dir;
}

/** The run's temporary root: traversable by the service users (PostgreSQL, Dovecot's mail user). */
export function makeRunRoot(prefix: string): string {
	const dir = path.join(os.tmpdir(), `${prefix}${process.pid}-${Date.now().toString(36)}`);
	mkdirSync(dir, { recursive: true });
	chmodSync(dir, 0o755);
	return dir;
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL

/** A throwaway PostgreSQL cluster on 127.0.0.1. */
export interface Postgres {
	port: number;
	service: Service;
	/** Runs SQL (several statements allowed) as the superuser over the Unix socket; returns psql's unaligned output. */
	sql(database: string, sql: string): Promise<string>;
	/** Runs a query and parses its single JSON value (`select json_agg(…)`); null → []. */
	json<T>(database: string, query: string): Promise<T>;
}

/**
 * initdb into `root/pg` (as the `postgres` user when root: PostgreSQL refuses to run as root),
 * then `postgres` on a free port, listening on 127.0.0.1 only, with durability off (fsync,
 * synchronous_commit: a throwaway cluster). Local connections are trusted; TCP ones need a password.
 */
export async function startPostgres(tools: Tools, root: string, logDir: string): Promise<Postgres> {
	const owner = isRoot() ? lookupUser('postgres') : undefined;
	if (isRoot() && !owner)
		throw new Error(
			'running as root, but there is no `postgres` user to run PostgreSQL as (apt-get install postgresql creates it)',
		);
	const base = ownedDir(path.join(root, 'pg'), owner);
	const data = path.join(base, 'data');
	const socketDir = ownedDir(path.join(base, 'sock'), owner);
	const init = await runCommand(
		path.join(tools.pgBin, 'initdb'),
		[
			'-D',
			data,
			'-U',
			'postgres',
			'--auth-local=trust',
			'--auth-host=scram-sha-256',
			'-E',
			'UTF8',
			'--no-locale',
			'--no-sync',
		],
		{ cwd: base, ...owner, timeoutMs: 120_000 },
	);
	if (init.code !== 0) throw new Error(`initdb failed:\n${tail(init.stdout + init.stderr)}`);
	const port = await freePort();
	const service = startService(
		'postgres',
		path.join(tools.pgBin, 'postgres'),
		[
			'-D',
			data,
			'-p',
			String(port),
			'-k',
			socketDir,
			'-c',
			'listen_addresses=127.0.0.1',
			'-c',
			'fsync=off',
			'-c',
			'synchronous_commit=off',
			'-c',
			'full_page_writes=off',
			'-c',
			'max_connections=300',
			'-c',
			'shared_buffers=256MB',
			'-c',
			'log_min_messages=warning',
		],
		{ cwd: base, ...owner, logFile: path.join(logDir, 'postgres.log'), stopSignal: 'SIGINT' },
	);
	const psqlBase = [
		'-X',
		'-q',
		'-v',
		'ON_ERROR_STOP=1',
		'-h',
		socketDir,
		'-p',
		String(port),
		'-U',
		'postgres',
		'-At',
	];
	const sql = async (database: string, text: string): Promise<string> => {
		const r = await runCommand('psql', [...psqlBase, '-d', database, '-f', '-'], {
			input: text,
			timeoutMs: 60_000,
			env: { ...process.env, PGCONNECT_TIMEOUT: '5' },
		});
		if (r.code !== 0)
			throw new Error(
				`psql ${database} failed: ${r.stderr.trim() || r.stdout.trim()}\n  SQL: ${text.slice(0, 300)}`,
			);
		return r.stdout;
	};
	await waitUntil(
		'PostgreSQL to accept connections',
		60_000,
		async () => ((await sql('postgres', 'select 1')).trim() === '1' ? true : undefined),
		250,
	);
	return {
		port,
		service,
		sql,
		async json<T>(database: string, query: string) {
			const out = (await sql(database, query)).trim();
			return (out === '' ? [] : JSON.parse(out)) as T;
		},
	};
}

// ---------------------------------------------------------------------------------------------
// Redis

export interface Redis {
	port: number;
	service: Service;
	/**
	 * The execution ids of n8n's queue jobs that Bull holds as *active* (taken by a worker, under its
	 * lock): the list `bull:jobs:active` (n8n 2.41: Bull prefix `bull`, queue `jobs`), each job's `data`
	 * hash field read for its `executionId`. Read with Debian's `redis-cli`.
	 */
	activeExecutions(): Promise<string[]>;
}

/** `redis-server` on a free loopback port, nothing persisted. */
export async function startRedis(tools: Tools, root: string, logDir: string): Promise<Redis> {
	const dir = path.join(root, 'redis');
	mkdirSync(dir, { recursive: true });
	const port = await freePort();
	const service = startService(
		'redis',
		tools.redisServer,
		[
			'--port',
			String(port),
			'--bind',
			'127.0.0.1',
			'--protected-mode',
			'yes',
			'--save',
			'',
			'--appendonly',
			'no',
			'--dir',
			dir,
			'--daemonize',
			'no',
		],
		{ cwd: dir, logFile: path.join(logDir, 'redis.log') },
	);
	await service.waitForLine(/Ready to accept connections/, 30_000);
	const cli = path.join(path.dirname(tools.redisServer), 'redis-cli');
	const command = async (...args: string[]): Promise<string[]> => {
		const r = await runCommand(cli, ['-h', '127.0.0.1', '-p', String(port), '--raw', ...args], {
			timeoutMs: 10_000,
		});
		if (r.code !== 0)
			throw new Error(`redis-cli ${args.join(' ')}: ${tail(r.stderr || r.stdout, 400)}`);
		return r.stdout.split('\n').filter((l) => l.trim() !== '');
	};
	return {
		port,
		service,
		async activeExecutions() {
			const ids: string[] = [];
			for (const job of await command('LRANGE', 'bull:jobs:active', '0', '-1')) {
				const [data] = await command('HGET', `bull:jobs:${job}`, 'data');
				const executionId = data
					? (JSON.parse(data) as { executionId?: unknown }).executionId
					: undefined;
				if (executionId !== undefined) ids.push(String(executionId));
			}
			return ids;
		},
	};
}

// ---------------------------------------------------------------------------------------------
// Dovecot

/** A throwaway Dovecot with one passwd-file user and a maildir. */
export interface Dovecot {
	port: number;
	user: string;
	password: string;
	service: Service;
	/** Logs in once; the caller logs out. */
	connect(): Promise<ImapFlow>;
}

/**
 * Dovecot with its own config file, base_dir and state_dir under `root/dovecot`, IMAP only on
 * 127.0.0.1 (plain text login: loopback only, no TLS), one user from a passwd-file, mail_location a
 * maildir in the same folder. As root, the mail user is `nobody` (Dovecot refuses uid 0 for mail)
 * and Dovecot's own users are dovecot / dovenull; otherwise everything runs as the current user.
 */
export async function startDovecot(
	tools: Tools,
	root: string,
	logDir: string,
	user = 'invoices',
): Promise<Dovecot> {
	const dir = path.join(root, 'dovecot');
	mkdirSync(dir, { recursive: true });
	chmodSync(dir, 0o755);
	const me = os.userInfo();
	const mailOwner = isRoot() ? lookupUser('nobody') : { uid: me.uid, gid: me.gid };
	if (!mailOwner)
		throw new Error('running as root, but there is no `nobody` user to own the mailbox');
	const internalUser = isRoot() ? 'dovecot' : me.username;
	const loginUser = isRoot() ? 'dovenull' : me.username;
	const mailDir = ownedDir(path.join(dir, 'mail'), isRoot() ? mailOwner : undefined);
	const password = `pw-${Math.random().toString(36).slice(2, 12)}`;
	const port = await freePort();
	writeFileSync(path.join(dir, 'users'), `${user}:{PLAIN}${password}\n`);
	const conf = path.join(dir, 'dovecot.conf');
	writeFileSync(
		conf,
		`# throwaway Dovecot of scripts/e2e/run.ts
base_dir = ${dir}/run
state_dir = ${dir}/state
instance_name = e2e-${process.pid}
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
log_path = /dev/stderr
info_log_path = /dev/stderr
default_internal_user = ${internalUser}
default_login_user = ${loginUser}
first_valid_uid = ${Math.min(mailOwner.uid, 1)}
mail_location = maildir:${mailDir}/%u
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u ${dir}/users
}
userdb {
  driver = static
  args = uid=${mailOwner.uid} gid=${mailOwner.gid} home=${mailDir}/%u
}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = ${port}
  }
  inet_listener imaps {
    port = 0
  }
}
`,
	);
	const service = startService('dovecot', tools.dovecot, ['-F', '-c', conf], {
		cwd: dir,
		logFile: path.join(logDir, 'dovecot.log'),
	});
	const connect = async (): Promise<ImapFlow> => {
		const auth = { user, pass: password };
		const client = new ImapFlow({ host: '127.0.0.1', port, secure: false, auth, logger: false });
		await client.connect();
		return client;
	};
	await waitUntil('Dovecot to accept an IMAP login', 30_000, async () => {
		if (service.exited()) throw new Error(`dovecot exited:\n${tail(service.output())}`);
		await (await connect()).logout();
		return true;
	});
	return { port, user, password, service, connect };
}

// ---------------------------------------------------------------------------------------------
// n8n

/** What every n8n process of the deployment shares. */
export interface N8nShared {
	line: LineInfo;
	encryptionKey: string;
	postgres: { port: number; database: string; user: string; password: string };
	redisPort: number;
	/** The only folder Read/Write Files from Disk may use (N8N_RESTRICT_FILE_ACCESS_TO). */
	filesDir: string;
}

/**
 * The environment of one n8n process in queue mode: PostgreSQL as its database, Redis as its
 * queue, the shared encryption key, its own user folder and task-broker port, loopback only.
 */
function queueEnv(
	shared: N8nShared,
	userFolder: string,
	brokerPort: number,
	extra: Record<string, string> = {},
): NodeJS.ProcessEnv {
	return n8nEnv({
		line: shared.line,
		userFolder,
		filesDir: shared.filesDir,
		brokerPort,
		encryptionKey: shared.encryptionKey,
		extra: {
			// queue mode
			EXECUTIONS_MODE: 'queue',
			QUEUE_BULL_REDIS_HOST: '127.0.0.1',
			QUEUE_BULL_REDIS_PORT: String(shared.redisPort),
			// n8n's database
			DB_TYPE: 'postgresdb',
			DB_POSTGRESDB_HOST: '127.0.0.1',
			DB_POSTGRESDB_PORT: String(shared.postgres.port),
			DB_POSTGRESDB_DATABASE: shared.postgres.database,
			DB_POSTGRESDB_USER: shared.postgres.user,
			DB_POSTGRESDB_PASSWORD: shared.postgres.password,
			...extra,
		},
	});
}

/** One n8n process of the deployment (main or worker) and how to run n8n CLI commands as it. */
export interface N8nProcess {
	name: string;
	userFolder: string;
	env: NodeJS.ProcessEnv;
	service?: Service;
	/** Runs `n8n <args>` with this process's environment (not the server: a CLI command). */
	cli(args: string[], timeoutMs?: number): Promise<Done>;
}

/** A user folder with the package installed and the environment of one n8n process. */
export async function prepareN8nProcess(
	name: string,
	shared: N8nShared,
	root: string,
	tarball: string,
	extraEnv: (brokerPort: number) => Promise<Record<string, string>>,
): Promise<N8nProcess> {
	const userFolder = path.join(root, `n8n-${name}`);
	mkdirSync(userFolder, { recursive: true });
	await installPackageInto(userFolder, tarball);
	const brokerPort = await freePort();
	const env = queueEnv(shared, userFolder, brokerPort, await extraEnv(brokerPort));
	return {
		name,
		userFolder,
		env,
		cli: n8nCli(shared.line, userFolder, env),
	};
}

/** `n8n start` (main) or `n8n worker --concurrency=N`, logging to `logDir/<name>.log`. */
export function startN8n(
	p: N8nProcess,
	shared: N8nShared,
	args: string[],
	logDir: string,
	echo = false,
): Service {
	p.service = startService(p.name, shared.line.nodeBin, [shared.line.n8nBin, ...args], {
		cwd: p.userFolder,
		env: p.env,
		logFile: path.join(logDir, `${p.name}.log`),
		echo,
	});
	return p.service;
}

/** Loopback check: every listening TCP socket of the given process trees, as `address:port`. */
export function listeningSockets(pids: number[]): Array<{ pid: number; local: string }> {
	const ss = spawnSync('ss', ['-ltnpH'], { encoding: 'utf8' });
	if (ss.status !== 0) return [];
	const tree = new Set<number>(pids);
	// descendants of the given pids (task runners, PostgreSQL backends, Dovecot's children)
	const ps = spawnSync('ps', ['-e', '-o', 'pid=,ppid='], { encoding: 'utf8' });
	const parents = ps.stdout
		.trim()
		.split('\n')
		.map((l) => l.trim().split(/\s+/).map(Number));
	for (let changed = true; changed;) {
		changed = false;
		for (const [pid, ppid] of parents)
			if (tree.has(ppid) && !tree.has(pid)) {
				tree.add(pid);
				changed = true;
			}
	}
	const out: Array<{ pid: number; local: string }> = [];
	for (const line of ss.stdout.trim().split('\n')) {
		const cols = line.trim().split(/\s+/);
		const local = cols[3];
		for (const m of line.matchAll(/pid=(\d+)/g))
			if (tree.has(Number(m[1]))) out.push({ pid: Number(m[1]), local });
	}
	return out;
}
