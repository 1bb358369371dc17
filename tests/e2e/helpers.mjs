// Shared by the end-to-end tests: tiny models made by `baton make-model`, a `baton serve`
// started on a free port, and small checks of the OpenAI wire shapes.
//
// BATON_BINARY names the baton executable (ctest sets it; by hand:
// BATON_BINARY=build/release/baton node --test --test-concurrency=1 tests/e2e/).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';

export const API_KEY = 'e2e-secret-key';
export const LISTENING = /^baton serve: listening on (http:\/\/127\.0\.0\.1:(\d+))$/;

export function batonBinary() {
  const binary = process.env.BATON_BINARY;
  if (!binary) {
    throw new Error('BATON_BINARY is not set: it must name the baton executable ' +
                    '(ctest sets it; by hand: BATON_BINARY=build/release/baton node --test ...)');
  }
  if (!fs.existsSync(binary)) throw new Error(`BATON_BINARY=${binary} does not exist`);
  return path.resolve(binary);
}

// A fresh temporary directory, removed when the process exits.
export function tempDir(prefix = 'baton-e2e-') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

// Writes a tiny qwen2 chat model (tokenizer and chat template included; the same
// directory also serves as an embedding model) and returns its directory.
export function makeModel(dir, { seed = 0, arch = 'qwen2', extra = [] } = {}) {
  const result = spawnSync(batonBinary(),
                           ['make-model', '--arch', arch, '--out', dir, '--seed', String(seed),
                            ...extra],
                           { encoding: 'utf8', timeout: 120_000 });
  if (result.status !== 0) {
    throw new Error(`baton make-model --out ${dir} exited ${result.status} ` +
                    `(${result.signal ?? 'no signal'}):\n${result.stdout}\n${result.stderr}`);
  }
  return dir;
}

// Two chat models and one embedding model, made once per test file.
export function makeModels() {
  const root = tempDir();
  return {
    root,
    chatA: makeModel(path.join(root, 'chat-a'), { seed: 1 }),
    chatB: makeModel(path.join(root, 'chat-b'), { seed: 2 }),
    embed: makeModel(path.join(root, 'embed'), { seed: 3 }),
  };
}

// The usual flags: chat-a and chat-b (chat) and embed (embedding).
export function modelFlags(models) {
  return ['--model', `chat-a=${models.chatA}`, '--model', `chat-b=${models.chatB}`,
          '--embedding', `embed=${models.embed}`];
}

// A TCP port that was free a moment ago (for the commands that need a fixed --port).
export async function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

// Spawns `command args` and resolves once its stdout printed the listening line.
// Returns { url, port, child, stderr(), stdoutLines, nextListening(), stop() }.
// `stop()` sends SIGTERM and resolves with { code, signal }.
export async function startProcess(command, args, { timeoutMs = 60_000, env = {}, cwd } = {}) {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd,
                                       env: { ...process.env, ...env } });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
    if (process.env.BATON_E2E_VERBOSE) process.stderr.write(chunk);
  });
  const exited = new Promise((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
  const stdoutLines = [];
  const waiters = [];  // resolve functions waiting for the next listening line
  let listeningSeen = 0;
  const listeningLines = [];
  const lines = readline.createInterface({ input: child.stdout });
  lines.on('line', (line) => {
    stdoutLines.push(line);
    const m = LISTENING.exec(line);
    if (m) {
      listeningLines.push({ url: m[1], port: Number(m[2]) });
      while (waiters.length > 0 && listeningSeen < listeningLines.length) {
        waiters.shift()(listeningLines[listeningSeen++]);
      }
    }
  });
  const describe = () => `${command} ${args.join(' ')}\nstdout:\n${stdoutLines.join('\n')}\n` +
                         `stderr:\n${stderr}`;

  // Resolves with the next listening line (the first, then after each restart).
  const nextListening = (ms = timeoutMs) => new Promise((resolve, reject) => {
    if (listeningSeen < listeningLines.length) {
      resolve(listeningLines[listeningSeen++]);
      return;
    }
    const timer = setTimeout(() => {
      reject(new Error(`no "baton serve: listening on" line within ${ms} ms\n${describe()}`));
    }, ms);
    const done = (value) => { clearTimeout(timer); resolve(value); };
    waiters.push(done);
    exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`exited (code ${code}, signal ${signal}) before the listening line\n` +
                       describe()));
    });
  });

  let first;
  try {
    first = await nextListening();
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  const stop = async (signal = 'SIGTERM', ms = 30_000) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), ms);
    const end = await exited;
    clearTimeout(timer);
    return end;
  };
  // Never leave a server behind, even when a test throws before stop().
  process.on('exit', () => { if (child.exitCode === null) child.kill('SIGKILL'); });
  return { ...first, child, exited, stdoutLines, stderr: () => stderr, describe, nextListening,
           stop };
}

// `baton serve --port 0 --no-ledger` with `args` (the models and any other flags).
export async function startServer(args, options = {}) {
  return startProcess(batonBinary(), ['serve', ...args, '--port', '0', '--no-ledger'], options);
}

// Stops a server with SIGTERM and asserts that it exited 0.
export async function stopServer(server) {
  const end = await server.stop('SIGTERM');
  assert.deepEqual(end, { code: 0, signal: null },
                   `baton serve should exit 0 on SIGTERM\n${server.describe()}`);
}

export function authHeaders(key = API_KEY) {
  return key === null ? {} : { Authorization: `Bearer ${key}` };
}

// POSTs `body` (an object, JSON-encoded, or a string sent as is) and returns
// { status, headers, text, json } (json is undefined when the body is not JSON).
export async function post(url, body, { key = API_KEY, headers = {}, signal } = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...authHeaders(key), ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal,
  });
  return readResponse(response);
}

export async function get(url, { key = API_KEY, headers = {} } = {}) {
  return readResponse(await fetch(url, { headers: { ...authHeaders(key), ...headers } }));
}

async function readResponse(response) {
  const text = await response.text();
  let json;
  try { json = JSON.parse(text); } catch { json = undefined; }
  return { status: response.status, headers: response.headers, text, json };
}

// Splits an SSE body into its `data:` payloads (strings, in order).
export function sseData(text) {
  const events = text.split(/\r?\n\r?\n/).filter((e) => e.trim() !== '');
  const data = [];
  for (const event of events) {
    const payload = event.split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).replace(/^ /, ''))
      .join('\n');
    if (payload !== '') data.push(payload);
  }
  return data;
}

// Asserts the OpenAI error shape and returns the error object.
export function assertError(res, status, { type, param, code } = {}) {
  const where = `HTTP ${res.status} ${res.text.slice(0, 500)}`;
  assert.equal(res.status, status, `status: ${where}`);
  assert.ok(res.json && typeof res.json === 'object', `the body must be JSON: ${where}`);
  const { error } = res.json;
  assert.ok(error && typeof error === 'object', `the body must have "error": ${where}`);
  assert.equal(typeof error.message, 'string', `error.message must be a string: ${where}`);
  assert.ok(error.message.length > 0, `error.message must not be empty: ${where}`);
  assert.equal(typeof error.type, 'string', `error.type must be a string: ${where}`);
  assert.ok('param' in error, `error.param must be present (string or null): ${where}`);
  assert.ok(error.param === null || typeof error.param === 'string',
            `error.param must be a string or null: ${where}`);
  assert.ok('code' in error, `error.code must be present (string or null): ${where}`);
  assert.ok(error.code === null || typeof error.code === 'string',
            `error.code must be a string or null: ${where}`);
  if (type !== undefined) assert.equal(error.type, type, `error.type: ${where}`);
  if (param !== undefined) assert.equal(error.param, param, `error.param: ${where}`);
  if (code !== undefined) assert.equal(error.code, code, `error.code: ${where}`);
  const contentType = res.headers.get('content-type') ?? '';
  assert.match(contentType, /application\/json/, `content-type of an error: ${where}`);
  return error;
}

// Asserts a Retry-After header holding a whole number of seconds (>= 0).
export function assertRetryAfter(res) {
  const value = res.headers.get('retry-after');
  assert.ok(value !== null, `a Retry-After header is required: HTTP ${res.status} ${res.text}`);
  assert.match(value, /^\d+$/, `Retry-After must be delay-seconds, not "${value}"`);
  return Number(value);
}

export function assertUsage(usage, where = '') {
  assert.ok(usage && typeof usage === 'object', `usage must be an object ${where}`);
  for (const key of ['prompt_tokens', 'completion_tokens', 'total_tokens']) {
    assert.ok(Number.isInteger(usage[key]) && usage[key] >= 0,
              `usage.${key} must be a non-negative integer ${where}: ${JSON.stringify(usage)}`);
  }
  assert.ok(usage.prompt_tokens > 0, `usage.prompt_tokens must be > 0 ${where}`);
  assert.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens,
               `usage.total_tokens = prompt + completion ${where}: ${JSON.stringify(usage)}`);
}

export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// Judges [{schema, text}] with Python's jsonschema: null when all are valid, else why not.
export function schemaViolation(cases) {
  const script = `
import json, sys, jsonschema
for case in json.load(sys.stdin):
    try:
        jsonschema.Draft202012Validator(case["schema"]).validate(json.loads(case["text"]))
    except Exception as e:
        print(repr(case["text"]), type(e).__name__, str(e)[:300]); break
`;
  for (const python of ['python3', '/usr/bin/python3']) {
    const probe = spawnSync(python, ['-c', 'import jsonschema']);
    if (probe.status !== 0) continue;
    const run = spawnSync(python, ['-c', script], { input: JSON.stringify(cases), encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    return run.stdout.trim() === '' ? null : run.stdout.trim();
  }
  throw new Error('no python3 with jsonschema: run scripts/setup');
}
