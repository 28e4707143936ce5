/**
 * Issue 20: a 200 MiB Document → Upload through a real n8n 2.x (`n8n execute`), in n8n's binary data
 * modes `filesystem` (the default) and `database` (the queue-mode default): peak RSS of the n8n
 * process (`/usr/bin/time -v`, "Maximum resident set size"), with the upload and without it (the
 * same workflow up to the node that reads the file), so the node's share is the difference.
 *
 *   npx tsx bench/binary-modes.ts [--mib 200] [--reps 2]
 *
 * Set-up, with the project's own tooling (scripts/lib/n8n.ts, scripts/lib/n8n-server.ts): n8n 2.41
 * (installed once, cached), a throwaway user folder with this package built, packed and installed;
 * this script then writes the file into that folder's files directory, starts the emulator (child
 * process), imports the credentials and two workflows (Manual Trigger → Read/Write Files from Disk →
 * Extraction Service Document → Upload, and the same without the upload), and runs each in each
 * mode. SQLite holds n8n's database, and the database mode's binary data with it. Everything is
 * removed at the end.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { launchEmulator } from '../emulator/launch';
import { numberFlag, readArgs } from '../scripts/lib/args';
import { API_CREDENTIAL, buildAndPack, installLine } from '../scripts/lib/n8n';
import { importFixtures, prepareN8n } from '../scripts/lib/n8n-server';
import { removeAtExit, runMain } from '../scripts/lib/processes';
import { writeLargePdf } from './pdf';

const MODES = ['filesystem', 'database'] as const;

/** Peak RSS (bytes, from GNU time) and wall time (s) of one command. */
function timed(
	cmd: string,
	args: string[],
	env: NodeJS.ProcessEnv,
): { rss: number; seconds: number; ok: boolean; output: string } {
	const t0 = Date.now();
	const r = spawnSync('/usr/bin/time', ['-v', cmd, ...args], {
		env,
		encoding: 'utf8',
		maxBuffer: 64 * 1024 * 1024,
	});
	const kb = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr)?.[1] ?? 0);
	return {
		rss: kb * 1024,
		seconds: (Date.now() - t0) / 1000,
		ok: r.status === 0 && /"status": "success"/.test(r.stdout),
		output: `${r.stdout.slice(-2000)}\n${r.stderr.slice(-2000)}`,
	};
}

async function main(): Promise<number> {
	const { values } = readArgs(__filename, { mib: { type: 'string' }, reps: { type: 'string' } });
	const mib = numberFlag('mib', values.mib, 200, 1);
	const reps = numberFlag('reps', values.reps, 2, 1, true);

	const { info } = await installLine('2');
	const userFolder = mkdtempSync(path.join(os.tmpdir(), 'bench-binary-modes-'));
	removeAtExit(userFolder);
	const { tarball } = await buildAndPack(userFolder);
	const { ctx, filesDir } = await prepareN8n(info, userFolder, tarball);
	const emulator = await launchEmulator({ processingMs: 1000, quiet: true });
	try {
		const file = path.join(filesDir, 'large.pdf');
		await writeLargePdf(file, mib * 1024 * 1024);
		const n8n = (args: string[], extra: NodeJS.ProcessEnv = {}) =>
			timed(info.n8nBin, args, { ...ctx.env, ...extra });
		// Manual Trigger → Read/Write Files from Disk → Document → Upload, and the same without the upload.
		const node = (n: number, name: string, type: string, typeVersion: number, extra: object) => ({
			id: `b${n}`,
			name,
			type,
			typeVersion,
			position: [200 * (n - 1), 0],
			...extra,
		});
		const nodes = [
			node(1, 'Start', 'n8n-nodes-base.manualTrigger', 1, { parameters: {} }),
			node(2, 'Read', 'n8n-nodes-base.readWriteFile', 1, {
				parameters: { operation: 'read', fileSelector: file, options: {} },
			}),
			node(3, 'Upload', 'n8n-nodes-extraction-service.extractionService', 2, {
				parameters: { resource: 'document', operation: 'upload', binaryPropertyName: 'data' },
				credentials: { extractionServiceApi: { id: API_CREDENTIAL.id, name: API_CREDENTIAL.name } },
			}),
		];
		const to = (next: string) => ({ main: [[{ node: next, type: 'main', index: 0 }]] });
		const workflow = (id: string, name: string, count: number) => ({
			id,
			name,
			settings: { executionOrder: 'v1' },
			nodes: nodes.slice(0, count),
			connections: count === 3 ? { Start: to('Read'), Read: to('Upload') } : { Start: to('Read') },
		});
		const workflows = [
			workflow('benchUploadLarg', 'Read and upload', 3),
			workflow('benchReadLarge1', 'Read only', 2),
		];
		await importFixtures(ctx, emulator, workflows);

		console.log(
			`== A ${mib} MiB PDF through n8n 2.x \`n8n execute\` (peak RSS of the n8n process, /usr/bin/time -v)`,
		);
		const MiB = 1024 * 1024;
		const rows: string[] = [];
		for (const mode of MODES) {
			for (const wf of workflows) {
				const runs = Array.from({ length: reps }, () =>
					n8n(['execute', `--id=${wf.id}`, '--rawOutput'], { N8N_DEFAULT_BINARY_DATA_MODE: mode }),
				);
				const failed = runs.filter((r) => !r.ok);
				const line = `  ${mode}, ${wf.name}: peak RSS ${runs.map((r) => `${(r.rss / MiB).toFixed(0)} MiB`).join(', ')}; ${runs.map((r) => `${r.seconds.toFixed(1)} s`).join(', ')}${failed.length ? `; FAILED: ${failed[0].output.slice(-500)}` : ''}`;
				rows.push(line);
				console.log(line);
			}
		}
		console.log(`RESULT ${JSON.stringify({ mib, reps, rows })}`);
		return 0;
	} finally {
		await emulator.stop();
	}
}

runMain(main, { label: 'binary-modes' });
