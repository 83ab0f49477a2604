// Shared helpers for browser tests that run their own wikid: start it on a
// free port with a fresh data directory, run its CLI against that directory,
// and launch Debian's Chromium with the same arguments as wiki.test.mjs.

import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const wikidBin = path.resolve(process.env.WIKID_BIN ?? path.join(here, '../../bin/wikid'));
export const chromiumBin = process.env.CHROMIUM ?? '/usr/bin/chromium';

// The arguments wiki.test.mjs launches Chromium with.
export const chromiumArgs = [
  '--no-sandbox', // needed as root
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const tmpDirs = [];

export function tempDir(prefix) {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  tmpDirs.push(dir);
  return dir;
}

export function removeTempDirs() {
  for (const dir of tmpDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

// cli runs `wikid ARGS --data DATA` with input on stdin.
export function cli(data, args, input = '') {
  const r = spawnSync(wikidBin, [...args, '--data', data], { input, encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, signal: r.signal, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

// startWikid runs `wikid serve` on a free port with data directory data (a
// fresh one when omitted) and resolves once GET / answers. config, when
// given, is written as the server's configuration file (--config).
export async function startWikid(data = tempDir('wikid-e2e-data-'), { config } = {}) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const args = ['serve', '--addr', `127.0.0.1:${port}`, '--data', data];
  if (config) {
    const file = path.join(tempDir('wikid-e2e-config-'), 'wikid.json');
    writeFileSync(file, JSON.stringify(config));
    args.push('--config', file);
  }
  const proc = spawn(wikidBin, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const s = { proc, url, data, log: [], exited: null };
  proc.stdout.on('data', (b) => s.log.push(b.toString()));
  proc.stderr.on('data', (b) => s.log.push(b.toString()));
  s.done = new Promise((resolve) => {
    proc.on('exit', (code, signal) => resolve((s.exited = { code, signal })));
  });
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (s.exited) break;
    try {
      await fetch(url + '/', { redirect: 'manual', signal: AbortSignal.timeout(2000) });
      return s;
    } catch {
      await sleep(100);
    }
  }
  proc.kill('SIGKILL');
  throw new Error(`wikid did not answer GET / at ${url} (exit: ${JSON.stringify(s.exited)})\n${s.log.join('')}`);
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

// stopWikid ends a suite: SIGTERM (SIGKILL after 10 s) to the server,
// its output's end on stderr when the suite failed, temporary directories
// removed.
export async function stopWikid(server, failed) {
  if (server && server.exited === null) {
    server.proc.kill('SIGTERM');
    await Promise.race([server.done, sleep(10_000)]);
    if (server.exited === null) server.proc.kill('SIGKILL');
  }
  if (failed) console.error(`--- wikid output ---\n${server?.log.join('').slice(-20_000) ?? ''}`);
  removeTempDirs();
}

export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export async function eventually(ms, fn) {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await sleep(200);
    }
  }
}
