/**
 * The servers of the end-to-end run, each a throwaway instance on a free loopback port with its own
 * config and data folder under the run's temporary root: PostgreSQL (n8n's database and the `erp`
 * database), Redis (n8n's queue), Dovecot (the mailboxes), an SMTP receiver delivering into them,
 * and n8n itself (main + workers, queue mode). The Debian packages come from scripts/e2e/install.sh,
 * n8n from scripts/n8n/install.sh.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buffer } from 'node:stream/consumers';

import { ImapFlow } from 'imapflow';
import { SMTPServer } from 'smtp-server';

import { installPackageInto, n8nCli, n8nEnv, type LineInfo } from '../lib/n8n';
import { freePort } from '../lib/ports';
import {
	commandError,
	runCommand,
	startService,
	tail,
	waitUntil,
	type Done,
	type Service,
} from '../lib/processes';

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
export async function installTools(): Promise<{ tools: Tools; installed: boolean }> {
	const r = await runCommand('bash', [path.join(__dirname, 'install.sh')], { timeoutMs: 900_000 });
	const line = r.stdout.split('\n').find((l) => l.startsWith('E2E_TOOLS '));
	if (r.code !== 0 || !line) throw commandError('scripts/e2e/install.sh', r);
	return {
		tools: JSON.parse(line.slice('E2E_TOOLS '.length)) as Tools,
		installed: /apt-get install/.test(r.stderr),
	};
}

// ---------------------------------------------------------------------------------------------
// who runs the servers that refuse root

type RunAs = { uid: number; gid: number };

/** As root, PostgreSQL and the mailbox run as other users; otherwise everything runs as the current user. */
const IS_ROOT = process.getuid?.() === 0;

/** The uid and gid of a system user (`id -u`, `id -g`). @throws Error when there is none */
function systemUser(name: string, why: string): RunAs {
	const [u, g] = ['-u', '-g'].map((f) => spawnSync('id', [f, name], { encoding: 'utf8' }));
	if (u.status !== 0 || g.status !== 0)
		throw new Error(`running as root, but there is no \`${name}\` user ${why}`);
	return { uid: Number(u.stdout.trim()), gid: Number(g.stdout.trim()) };
}

/** A folder the given user owns (only chowned when one is given). */
function ownedDir(dir: string, owner: RunAs | undefined): string {
	mkdirSync(dir, { recursive: true });
	if (owner) chownSync(dir, owner.uid, owner.gid);
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

/**
 * A throwaway PostgreSQL cluster: initdb into `root/pg` (as the `postgres` user when root:
 * PostgreSQL refuses to run as root), then `postgres` on a free port, listening on 127.0.0.1 only,
 * with durability off (fsync, synchronous_commit: a throwaway cluster). Local connections are
 * trusted; TCP ones need a password.
 */
export async function startPostgres(tools: Tools, root: string, logDir: string) {
	const owner = IS_ROOT
		? systemUser('postgres', 'to run PostgreSQL as (apt-get install postgresql creates it)')
		: undefined;
	const base = ownedDir(path.join(root, 'pg'), owner);
	const data = path.join(base, 'data');
	const socketDir = ownedDir(path.join(base, 'sock'), owner);
	const init = await runCommand(
		path.join(tools.pgBin, 'initdb'),
		[
			...['-D', data, '-U', 'postgres', '-E', 'UTF8', '--no-locale', '--no-sync'],
			...['--auth-local=trust', '--auth-host=scram-sha-256'],
		],
		{ cwd: base, ...owner, timeoutMs: 120_000 },
	);
	if (init.code !== 0) throw commandError('initdb', init);
	const port = await freePort();
	const settings = [
		...['listen_addresses=127.0.0.1', 'max_connections=300', 'shared_buffers=256MB'],
		...['fsync=off', 'synchronous_commit=off', 'full_page_writes=off', 'log_min_messages=warning'],
	];
	const service = startService(
		'postgres',
		path.join(tools.pgBin, 'postgres'),
		['-D', data, '-p', String(port), '-k', socketDir, ...settings.flatMap((c) => ['-c', c])],
		{ cwd: base, ...owner, logFile: path.join(logDir, 'postgres.log'), stopSignal: 'SIGINT' },
	);
	const psql = ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-h', socketDir, '-p', String(port)];
	/** Runs SQL (several statements allowed) as the superuser over the Unix socket; psql's unaligned output. */
	const sql = async (database: string, text: string): Promise<string> => {
		const args = [...psql, '-U', 'postgres', '-At', '-d', database, '-f', '-'];
		const env = { ...process.env, PGCONNECT_TIMEOUT: '5' };
		const r = await runCommand('psql', args, { input: text, timeoutMs: 60_000, env });
		if (r.code !== 0)
			throw new Error(
				`psql ${database} failed: ${r.stderr.trim() || r.stdout.trim()}\n  SQL: ${text.slice(0, 300)}`,
			);
		return r.stdout;
	};
	await waitUntil(
		'PostgreSQL to accept connections',
		60_000,
		async () => (await sql('postgres', 'select 1')).trim() === '1',
		250,
	);
	return {
		port,
		service,
		sql,
		/** Runs a query and parses its single JSON value (`select json_agg(…)`); null → []. */
		async json<T>(database: string, query: string): Promise<T> {
			const out = (await sql(database, query)).trim();
			return (out === '' ? [] : JSON.parse(out)) as T;
		},
	};
}

// ---------------------------------------------------------------------------------------------
// Redis

/** `redis-server` on a free loopback port, nothing persisted. */
export async function startRedis(tools: Tools, root: string, logDir: string) {
	const dir = path.join(root, 'redis');
	mkdirSync(dir, { recursive: true });
	const port = await freePort();
	const settings = [
		...['--port', String(port), '--bind', '127.0.0.1', '--protected-mode', 'yes', '--save', ''],
		...['--appendonly', 'no', '--dir', dir, '--daemonize', 'no'],
	];
	const service = startService('redis', tools.redisServer, settings, {
		cwd: dir,
		logFile: path.join(logDir, 'redis.log'),
	});
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
		/** Execution ids of the queue jobs Bull holds as active (taken by a worker): `bull:jobs:active` (n8n 2.41), each job's `data`. */
		async activeExecutions(): Promise<string[]> {
			const ids: string[] = [];
			for (const job of await command('LRANGE', 'bull:jobs:active', '0', '-1')) {
				const [data] = await command('HGET', `bull:jobs:${job}`, 'data');
				const id = data ? (JSON.parse(data) as { executionId?: unknown }).executionId : undefined;
				if (id !== undefined) ids.push(String(id));
			}
			return ids;
		},
	};
}

// ---------------------------------------------------------------------------------------------
// Dovecot

/**
 * A throwaway Dovecot with its own config file, base_dir and state_dir under `root/dovecot`, IMAP
 * only on 127.0.0.1 (plain text login: loopback only, no TLS), `users` from a passwd-file (one
 * password for all, the first user the invoices mailbox), mail_location a maildir in the same
 * folder. As root, the mail user is `nobody` (Dovecot refuses uid 0 for mail) and Dovecot's own
 * users are dovecot / dovenull; otherwise everything runs as the current user.
 */
export async function startDovecot(tools: Tools, root: string, logDir: string, users: string[]) {
	const dir = path.join(root, 'dovecot');
	mkdirSync(dir, { recursive: true });
	chmodSync(dir, 0o755);
	const me = os.userInfo();
	const mailOwner = IS_ROOT ? systemUser('nobody', 'to own the mailbox') : me;
	const mailDir = ownedDir(path.join(dir, 'mail'), IS_ROOT ? mailOwner : undefined);
	const password = `pw-${randomBytes(6).toString('hex')}`;
	const port = await freePort();
	writeFileSync(path.join(dir, 'users'), users.map((u) => `${u}:{PLAIN}${password}\n`).join(''));
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
default_internal_user = ${IS_ROOT ? 'dovecot' : me.username}
default_login_user = ${IS_ROOT ? 'dovenull' : me.username}
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
	/** Logs in once as `user` (default the first); the caller logs out. */
	const connect = async (user = users[0]): Promise<ImapFlow> => {
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
	return { port, user: users[0], password, service, connect };
}
export type Dovecot = Awaited<ReturnType<typeof startDovecot>>;

// ---------------------------------------------------------------------------------------------
// SMTP

/**
 * The SMTP server n8n's Send Email node sends to, delivering into Dovecot as an MTA would:
 * nodemailer's smtp-server on a free loopback port, AUTH PLAIN/LOGIN with its own user and password
 * (plain text: loopback only, no STARTTLS), a recipient accepted when its local part is a Dovecot
 * user (`reviewer@example.com` → user `reviewer`), 550 otherwise; each message is APPENDed to that
 * user's INBOX over IMAP.
 */
export async function startSmtp(dovecot: Dovecot, users: string[]) {
	const port = await freePort();
	const user = 'n8n';
	const password = `pw-${randomBytes(6).toString('hex')}`;
	const mailboxOf = (address: string): string | undefined =>
		users.find((u) => u === address.split('@')[0].toLowerCase());
	const server = new SMTPServer({
		secure: false,
		disabledCommands: ['STARTTLS'],
		allowInsecureAuth: true,
		logger: false,
		onAuth: (auth, _session, done) =>
			auth.username === user && auth.password === password
				? done(null, { user })
				: done(new Error('Invalid username or password')),
		onRcptTo: (address, _session, done) =>
			done(mailboxOf(address.address) ? null : new Error(`no mailbox for ${address.address}`)),
		onData: (stream, session, done) => {
			void (async () => {
				const raw = await buffer(stream);
				for (const rcpt of session.envelope.rcptTo) {
					const mailbox = mailboxOf(rcpt.address)!;
					const client = await dovecot.connect(mailbox);
					await client.append('INBOX', raw).finally(() => client.logout());
				}
			})().then(() => done(), done);
		},
	});
	await new Promise<void>((resolve, reject) => {
		server.once('error', reject);
		server.listen(port, '127.0.0.1', resolve);
	});
	const stop = (): Promise<void> => new Promise((resolve) => server.close(() => resolve()));
	return { port, user, password, stop };
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
	/** main's URL: WEBHOOK_URL of every process (a worker builds a Send and Wait link with it). */
	mainUrl: string;
	/** The run's folder: each process's user folder `n8n-<name>` and its log `logs/<name>.log`. */
	root: string;
	/** The package, installed into each user folder. */
	tarball: string;
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

/** A user folder with the package installed and one n8n process's queue-mode environment (`extra` on top). */
export async function prepareN8nProcess(
	name: string,
	shared: N8nShared,
	extra: Record<string, string>,
): Promise<N8nProcess> {
	const userFolder = path.join(shared.root, `n8n-${name}`);
	mkdirSync(userFolder, { recursive: true });
	await installPackageInto(userFolder, shared.tarball);
	const { postgres: db } = shared;
	const env = n8nEnv({
		line: shared.line,
		userFolder,
		filesDir: shared.filesDir,
		brokerPort: await freePort(),
		encryptionKey: shared.encryptionKey,
		extra: {
			EXECUTIONS_MODE: 'queue',
			QUEUE_BULL_REDIS_HOST: '127.0.0.1',
			QUEUE_BULL_REDIS_PORT: String(shared.redisPort),
			DB_TYPE: 'postgresdb',
			DB_POSTGRESDB_HOST: '127.0.0.1',
			DB_POSTGRESDB_PORT: String(db.port),
			DB_POSTGRESDB_DATABASE: db.database,
			DB_POSTGRESDB_USER: db.user,
			DB_POSTGRESDB_PASSWORD: db.password,
			WEBHOOK_URL: `${shared.mainUrl}/`,
			...extra,
		},
	});
	return { name, userFolder, env, cli: n8nCli(shared.line, userFolder, env) };
}

/**
 * `n8n start` (main) or `n8n worker --concurrency=N` as `p`, logging to `logs/<p.name>.log`, each line
 * also to `onLine`; resolves once n8n says it is ready and its /healthz/readiness answers 200 (main on
 * its own port, a worker on its health server's).
 */
export async function startN8n(
	p: N8nProcess,
	shared: N8nShared,
	args: string[],
	echo: boolean,
	onLine: (line: string) => void,
): Promise<void> {
	const worker = args[0] === 'worker';
	p.service = startService(p.name, shared.line.nodeBin, [shared.line.n8nBin, ...args], {
		cwd: p.userFolder,
		env: p.env,
		logFile: path.join(shared.root, 'logs', `${p.name}.log`),
		echo,
	});
	p.service.onLine(onLine);
	const ready = worker ? /n8n worker is now ready/ : /Editor is now accessible via/;
	await p.service.waitForLine(ready, 180_000);
	const port = worker ? p.env.QUEUE_HEALTH_CHECK_PORT : p.env.N8N_PORT;
	const readiness = `http://127.0.0.1:${port}/healthz/readiness`;
	await waitUntil(`${p.name} /healthz/readiness`, 60_000, async () => (await fetch(readiness)).ok);
}

/** Loopback check: every listening TCP socket of the given process trees, as `address:port`. */
export function listeningSockets(pids: number[]): Array<{ pid: number; local: string }> {
	const ss = spawnSync('ss', ['-ltnpH'], { encoding: 'utf8' });
	if (ss.status !== 0) return [];
	// descendants of the given pids (task runners, PostgreSQL backends, Dovecot's children)
	const tree = new Set<number>(pids);
	const ps = spawnSync('ps', ['-e', '-o', 'pid=,ppid='], { encoding: 'utf8' });
	const parents = ps.stdout
		.trim()
		.split('\n')
		.map((l) => l.trim().split(/\s+/).map(Number));
	for (let size = 0; size !== tree.size;) {
		size = tree.size;
		for (const [pid, ppid] of parents) if (tree.has(ppid)) tree.add(pid);
	}
	return ss.stdout
		.trim()
		.split('\n')
		.flatMap((line) =>
			[...line.matchAll(/pid=(\d+)/g)]
				.filter((m) => tree.has(Number(m[1])))
				.map((m) => ({ pid: Number(m[1]), local: line.trim().split(/\s+/)[3] })),
		);
}
