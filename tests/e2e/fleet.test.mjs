// A fleet through Prometheus: two `baton serve` processes, each with its own ledger and
// hangs injected on one engine, scraped every second by a real Prometheus server (Debian's
// `prometheus`, started here on loopback). `baton analyze --prometheus` over their
// counters must give what `baton analyze` gives over the two ledgers merged: the same
// hangs in each state and host, the same busy seconds (within the 1 ms by which the
// ledger's writer and the counters may merge bursts differently), the same regression.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { batonBinary, freePort, makeModel, post, sleep, startProcess, tempDir } from './helpers.mjs';

const PROMETHEUS = '/usr/bin/prometheus';
let dir;
let servers = [];
let prometheus;

before(() => {
  dir = tempDir('baton-fleet-');
});

after(async () => {
  for (const server of servers) await server.stop('SIGTERM');
  if (prometheus && prometheus.exitCode === null) prometheus.kill('SIGKILL');
});

async function startPrometheus(targets, port) {
  const config = path.join(dir, 'prometheus.yml');
  fs.writeFileSync(config, [
    'global:', '  scrape_interval: 1s', 'scrape_configs:', '  - job_name: baton',
    '    static_configs:', `      - targets: [${targets.map((t) => `'${t}'`).join(', ')}]`, '',
  ].join('\n'));
  const child = spawn(PROMETHEUS, [`--config.file=${config}`,
                                   `--storage.tsdb.path=${path.join(dir, 'tsdb')}`,
                                   `--web.listen-address=127.0.0.1:${port}`],
                      { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr.on('data', (chunk) => { log += chunk; });
  for (let i = 0; i < 300; i++) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/-/ready`);
      if (res.ok) return child;
    } catch { /* not listening yet */ }
    await sleep(100);
  }
  child.kill('SIGKILL');
  throw new Error(`prometheus was not ready within 30 s:\n${log}`);
}

// Every target's last scrape is newer than `since` (ms since the epoch) and succeeded.
async function scrapedAfter(port, since) {
  const res = await fetch(`http://127.0.0.1:${port}/api/v1/targets`);
  const targets = (await res.json()).data.activeTargets;
  return targets.length === 2 &&
         targets.every((t) => t.health === 'up' && Date.parse(t.lastScrape) > since);
}

function analyze(args) {
  const result = spawnSync(batonBinary(), ['analyze', '--json', '--by', 'dual', '--by', 'host',
                                           ...args], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(result.status, 0, `baton analyze ${args.join(' ')}:\n${result.stderr}`);
  return JSON.parse(result.stdout);
}

test('the fleet analysis through Prometheus equals the analysis of the ledgers merged',
     { timeout: 180_000 }, async () => {
  assert.ok(fs.existsSync(PROMETHEUS), `${PROMETHEUS} is missing: scripts/setup installs it`);
  const modelA = makeModel(path.join(dir, 'a'), { seed: 1 });
  const modelB = makeModel(path.join(dir, 'b'), { seed: 2 });
  const ports = [await freePort(), await freePort()].sort();
  for (const port of ports) {
    servers.push(await startProcess(batonBinary(), [
      'serve', '--model', `A=${modelA}`, '--model', `B=${modelB}`, '--port', String(port),
      '--ledger', path.join(dir, `l-${port}.db`), '--watchdog-deadline', '0.3',
      '--inject-hang-prob', '0.02', '--inject-fault-engine', 'A']));
  }
  const promPort = await freePort();
  prometheus = await startPrometheus(ports.map((p) => `127.0.0.1:${p}`), promPort);

  // Load on both engines of both servers at once, in rounds.
  for (let round = 0; round < 4; round++) {
    await Promise.all(servers.flatMap((s) => ['A', 'B'].map((model) => post(
        `${s.url}/v1/completions`, { model, prompt: 'Hello there', max_tokens: 48 }))));
  }
  // The counters settle 1.33 s behind (deadline 0.3 s); then two fresh scrapes.
  await sleep(2000);
  const settled = Date.now();
  for (let i = 0; i < 100 && !(await scrapedAfter(promPort, settled)); i++) await sleep(200);
  const fleet = analyze(['--prometheus', `http://127.0.0.1:${promPort}`, '--range', '10m']);

  for (const server of servers) assert.deepEqual(await server.stop('SIGTERM'), { code: 0, signal: null });
  servers = [];
  const merged = analyze(ports.flatMap((p) => ['--ledger', path.join(dir, `l-${p}.db`)]));

  const hangs = (r) => r.cells.map((c) => c.hangs);
  assert.ok(merged.cells.reduce((n, c) => n + c.hangs, 0) > 0, 'no hang was injected');
  assert.deepEqual(hangs(fleet), hangs(merged));
  assert.equal(fleet.cells.length, merged.cells.length);
  fleet.cells.forEach((cell, i) => {
    assert.ok(Math.abs(cell.hours - merged.cells[i].hours) * 3600 < 0.005,
              `cell ${i}: ${cell.hours * 3600} s through Prometheus, ` +
              `${merged.cells[i].hours * 3600} s in the ledgers`);
  });
  assert.equal(fleet.hangs_while_idle, merged.hangs_while_idle);
  fleet.tests.forEach((t, i) => assert.equal(t.df, merged.tests[i].df));
  assert.equal(fleet.uniform_test.n, merged.uniform_test.n);
  assert.equal(fleet.uniform_test.in_dual, merged.uniform_test.in_dual);
});
