// The fault paths of `baton serve`, from outside: an engine that hangs (injected) is
// answered with 503 + Retry-After (or an SSE error event) while the other model serves on;
// a fatal device error (injected) ends the server with 70 and `baton supervise` restarts it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import {
  assertError, assertRetryAfter, batonBinary, freePort, get, makeModels, post, sleep, sseData,
  startProcess, startServer, stopServer, tempDir,
} from './helpers.mjs';

let models;

before(() => {
  models = makeModels();
});

const chat = (model, extra = {}) => ({
  model,
  messages: [{ role: 'user', content: 'Hello' }],
  max_tokens: 8,
  temperature: 0,
  ...extra,
});

// A request to the hanging engine must fail the way the contract says: before the stream
// started, 503 + Retry-After in the error shape; after, an SSE error event that ends it.
function assertEngineFailure(res, where) {
  if (res.status === 503) {
    const error = assertError(res, 503);
    assertRetryAfter(res);
    return { kind: '503', code: error.code };
  }
  assert.equal(res.status, 200, `${where}: 503 or a stream with an error event, not ${
    res.status} ${res.text.slice(0, 300)}`);
  const data = sseData(res.text);
  const errors = data.filter((d) => d !== '[DONE]').map((d) => JSON.parse(d))
    .filter((d) => d.error);
  assert.equal(errors.length, 1, `${where}: one SSE error event in ${JSON.stringify(res.text)}`);
  const { error } = errors[0];
  assert.equal(typeof error.message, 'string');
  assert.equal(typeof error.type, 'string');
  assert.ok('code' in error && 'param' in error, JSON.stringify(error));
  assert.ok(JSON.stringify(data.at(-1)).includes('error') || data.at(-1) === '[DONE]',
            `${where}: nothing follows the error event but [DONE]`);
  return { kind: 'sse', code: error.code };
}

describe('an engine that hangs', () => {
  let server;
  before(async () => {
    server = await startServer([
      '--model', `A=${models.chatA}`, '--model', `B=${models.chatB}`,
      '--inject-hang-prob', '1', '--inject-fault-engine', 'A', '--watchdog-deadline', '0.3',
    ]);
  });
  after(async () => {
    if (server) await stopServer(server);
  });

  test('A gets 503 + Retry-After (or an SSE error event), B answers', async (t) => {
    const url = `${server.url}/v1/chat/completions`;
    const seen = [];
    for (let i = 0; i < 4; ++i) {
      const [a, aStream, b] = await Promise.all([
        post(url, chat('A'), { key: null }),
        post(url, chat('A', { stream: true }), { key: null }),
        post(url, chat('B', { messages: [{ role: 'user', content: `while A hangs ${i}` }] }),
             { key: null }),
      ]);
      seen.push(assertEngineFailure(a, `A, request ${i}`));
      seen.push(assertEngineFailure(aStream, `A streaming, request ${i}`));
      assert.equal(b.status, 200, `B answers while A hangs: ${b.text}`);
      assert.equal(b.json.object, 'chat.completion');
      assert.ok(typeof b.json.choices[0].message.content === 'string');
    }
    const codes = [...new Set(seen.map((s) => `${s.kind}:${s.code}`))];
    t.diagnostic(`A's failures: ${codes.join(', ')}`);
    // A 503 says when to come back; one of them should name the engine.
    assert.ok(seen.some((s) => s.kind === '503'), `at least one plain 503: ${codes}`);
  });

  test('B streams whole while A hangs', async () => {
    const url = `${server.url}/v1/chat/completions`;
    const res = await post(url, chat('B', { stream: true }), { key: null });
    assert.equal(res.status, 200);
    const data = sseData(res.text);
    assert.equal(data.at(-1), '[DONE]', res.text);
    assert.ok(!data.some((d) => d.includes('"error"')), res.text);
  });

  test('/health and /v1/engines still answer (the server is up)', async () => {
    const health = await get(`${server.url}/health`, { key: null });
    assert.ok([200, 503].includes(health.status), health.text);
    assert.equal(typeof health.json?.status, 'string', health.text);
    if (health.status === 503) assert.ok('reason' in health.json, health.text);
    const engines = await get(`${server.url}/v1/engines`, { key: null });
    assert.equal(engines.status, 200, engines.text);
  });
});

describe('a fatal device error under baton supervise', () => {
  test('the server exits 70, supervise restarts it, a client succeeds again', async () => {
    const port = await freePort();
    const baton = batonBinary();
    const supervisor = await startProcess(baton, [
      'supervise', '--max-restarts', '1', '--backoff', '200ms', '--',
      baton, 'serve', '--model', `A=${models.chatA}`, '--model', `B=${models.chatB}`,
      '--no-ledger', '--port', String(port), '--kv-budget-mb', '16', '--inject-fatal-after', '4',
    ]);
    try {
      assert.equal(supervisor.port, port);
      const url = `${supervisor.url}/v1/chat/completions`;
      const first = await post(url, chat('A'), { key: null });
      assert.equal(first.status, 200, first.text);

      // The fatal error comes 4 s after the device starts, which is before the models load
      // (with 2 s, a restarted server once had under a second left for the request and
      // failed it); the restart 200 ms after it.
      const second = await supervisor.nextListening(60_000);
      assert.equal(second.port, port, 'the restarted server listens on the same --port');
      const again = await post(url, chat('A'), { key: null });
      assert.equal(again.status, 200, again.text);
      assert.equal(again.json.choices[0].message.content, first.json.choices[0].message.content,
                   'the same greedy answer after the restart');

      // The second fatal error uses up --max-restarts 1: supervise exits 70.
      const end = await Promise.race([supervisor.exited, sleep(30_000).then(() => 'timeout')]);
      assert.deepEqual(end, { code: 70, signal: null },
                       `supervise gives up with 70\n${supervisor.describe()}`);
      assert.match(supervisor.stderr(), /restart 1 of 1/);
    } finally {
      await supervisor.stop('SIGTERM');
    }
  });

  test('a server alone exits 70 on the fatal error', async () => {
    const server = await startServer(['--model', `A=${models.chatA}`,
                                      '--inject-fatal-after', '1']);
    const end = await Promise.race([server.exited, sleep(30_000).then(() => 'timeout')]);
    if (end === 'timeout') await server.stop('SIGKILL');
    assert.deepEqual(end, { code: 70, signal: null }, server.describe());
  });
});

describe('bad configuration', () => {
  // A config file of `text`, in a folder removed at exit.
  function configFile(text) {
    const file = path.join(tempDir('baton-config-'), 'baton.toml');
    fs.writeFileSync(file, text);
    return file;
  }
  function run(args) {
    return spawnSync(batonBinary(), ['serve', ...args], { encoding: 'utf8',
                                                               timeout: 60_000 });
  }

  test('exit 2 with a message on stderr', async () => {
    const cases = [
      ['--model', 'A=/no/such/dir', '--port', '0', '--no-ledger'],
      ['--model', `no-equals-sign`, '--port', '0', '--no-ledger'],
      ['--model', `A=${models.chatA}`, '--model', `A=${models.chatB}`, '--port', '0',
       '--no-ledger'],
      ['--port', '0', '--no-ledger'],
      ['--model', `A=${models.chatA}`, '--port', '0', '--no-ledger', '--queue-limit', '-1'],
    ];
    for (const args of cases) {
      const result = run(args);
      assert.equal(result.status, 2, `baton serve ${args.join(' ')}: exit ${result.status}\n${
        result.stdout}\n${result.stderr}`);
      assert.ok(result.stderr.trim().length > 0, `a message on stderr: ${args.join(' ')}`);
      assert.doesNotMatch(result.stdout, /listening on/);
    }
  });

  test('the message names what the user wrote: the flag, its value', async () => {
    const named = [
      [['--model', 'A=/no/such/dir'], /--model A=\/no\/such\/dir: \/no\/such\/dir is not a directory/],
      [['--model', `A=${models.chatA}`, '--host', '999.1.1.1'],
       /--host: 999\.1\.1\.1 is not an IPv4 or IPv6 address/],
      [['--model', `A=${models.chatA}`, '--kv-budget-mb', 'lots'],
       /--kv-budget-mb: lots is not 1\.\.1048576 \(MB\) or auto/],
      [['--model', 'A'], /--model A: expected NAME=DIR/],
      [['--model', `A=${models.chatA}`, '--model', `A=${models.chatB}`], /--model A=\S+: a model named "A" is already configured/],
      // A file's sampling default goes through a request's ranges.
      [['--config', configFile('[models.A]\npath = "' + models.chatA +
                               '"\n[models.A.sampling]\ntemperature = 5\n')],
       /models\.A\.sampling\.temperature = 5: must be in \[0, 2\]/],
      // auto sizes from a GPU's free memory: the cpu backend needs a number.
      [['--model', `A=${models.chatA}`, '--kv-budget-mb', 'auto'],
       new RegExp('--kv-budget-mb auto: sizes the KV cache from a GPU\'s free memory; ' +
                  'backend = "cpu" needs a number of MB')],
    ];
    for (const [args, message] of named) {
      const result = run([...args, '--port', '0', '--no-ledger']);
      assert.equal(result.status, 2, `${args.join(' ')}: exit ${result.status}\n${result.stderr}`);
      assert.match(result.stderr, message);
      assert.doesNotMatch(result.stderr, /models\.A\.path/);
      // Refused before any model loaded: no model's start-up line.
      assert.doesNotMatch(result.stderr, /^model A/m);
    }
  });

  test('a port in use is named, and told before any model loads', async () => {
    const holder = await startServer(['--model', `A=${models.chatA}`]);
    try {
      const result = run(['--model', `B=${models.chatB}`, '--port', String(holder.port),
                          '--no-ledger']);
      assert.equal(result.status, 1, result.stderr);
      assert.match(result.stderr,
                   new RegExp(`cannot listen on 127\\.0\\.0\\.1:${holder.port} \\(--host, --port\\): ` +
                              'Address already in use'));
      assert.doesNotMatch(result.stderr, /^model B/m);
    } finally {
      await stopServer(holder);
    }
  });
});
