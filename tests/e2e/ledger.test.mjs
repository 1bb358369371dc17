// The ledger of a served run: an injected hang in one engine (A) while another (B) answers
// is recorded with both engines' intervals, and `baton analyze` on that ledger shows them.
// A SIGHUP stops the server as SIGTERM does, and the run it closes holds its intervals.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';

import { batonBinary, makeModels, post, startProcess, tempDir } from './helpers.mjs';

test('a served hang and both engines are in the ledger, and analyze reads them', async () => {
  const models = makeModels();
  const ledger = path.join(tempDir(), 'ledger.db');
  const server = await startProcess(batonBinary(), [
    'serve', '--port', '0', '--ledger', ledger, '--watchdog-deadline', '0.3',
    '--inject-hang-prob', '1', '--inject-fault-engine', 'A',
    '--model', `A=${models.chatA}`, '--model', `B=${models.chatB}`]);
  const chat = (model) => post(`${server.url}/v1/chat/completions`, {
    model, max_tokens: 8, messages: [{ role: 'user', content: 'hello' }] }, { key: null });
  const [a, b] = await Promise.all([chat('A'), chat('B')]);
  assert.equal(a.status, 503, a.text);
  assert.ok(a.headers.get('retry-after'));
  assert.equal(b.status, 200, b.text);
  assert.deepEqual(await server.stop('SIGTERM'), { code: 0, signal: null }, server.describe());

  const analyze = spawnSync(batonBinary(), ['analyze', '--ledger', ledger], { encoding: 'utf8' });
  assert.equal(analyze.status, 0, analyze.stderr);
  const hangs = /^Hangs: (\d+) \((\d+) unattributed/m.exec(analyze.stdout);
  assert.ok(hangs, analyze.stdout);
  assert.ok(Number(hangs[1]) >= 1, analyze.stdout);
  assert.equal(hangs[2], '0', 'every hang is blamed on an engine');
  // Both engines have busy time in the ledger: each has a row under "By blamed engine".
  assert.match(analyze.stdout, /^  A +\d/m);
  assert.match(analyze.stdout, /^  B +[\d.]+/m);
  assert.doesNotMatch(analyze.stdout, /busy +0 h/);
});

test('SIGHUP (the terminal closed) stops the server as SIGTERM does: the run is closed', async () => {
  const models = makeModels();
  const ledger = path.join(tempDir(), 'ledger.db');
  const server = await startProcess(batonBinary(), [
    'serve', '--port', '0', '--ledger', ledger, '--model', `A=${models.chatA}`]);
  const answer = await post(`${server.url}/v1/chat/completions`, {
    model: 'A', max_tokens: 8, messages: [{ role: 'user', content: 'hello' }] }, { key: null });
  assert.equal(answer.status, 200, answer.text);
  assert.deepEqual(await server.stop('SIGHUP'), { code: 0, signal: null }, server.describe());
  assert.match(server.stderr(), /baton serve: stopped/);

  const analyze = spawnSync(batonBinary(), ['analyze', '--ledger', ledger], { encoding: 'utf8' });
  assert.equal(analyze.status, 0, analyze.stderr);
  assert.doesNotMatch(analyze.stderr, /never closed/, analyze.stderr);
  // The request's busy time was written before the run closed.
  assert.match(analyze.stdout, /^  A +\d/m, analyze.stdout);
});
