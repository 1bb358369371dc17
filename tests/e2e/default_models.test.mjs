// `make run`'s job: scripts/serve-default serves the trained models of models/ and its
// printed curl commands work; the chat models answer in readable words (the King James
// Bible's style), not the byte soup of random weights.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, test, before, after } from 'node:test';
import { fileURLToPath } from 'node:url';

import { batonBinary, freePort, tempDir } from './helpers.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

// The share of whitespace-separated words made of letters (with trailing punctuation).
function wordShare(text) {
  const words = text.split(/\s+/).filter((w) => w.length > 0);
  const real = words.filter((w) => /^[A-Za-z]+(['’][a-z]+)?[,.;:!?)]*$/.test(w));
  return { words: words.length, share: words.length === 0 ? 0 : real.length / words.length };
}

describe('make run (scripts/serve-default)', () => {
  let child;
  let url;
  let printed = '';

  before(async () => {
    const port = await freePort();
    child = spawn(path.join(root, 'scripts', 'serve-default'), [path.dirname(batonBinary())], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, BATON_PORT: String(port), XDG_STATE_HOME: tempDir(),
             BATON_LEDGER: '' },
    });
    child.stdout.setEncoding('utf8');
    url = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no URL printed:\n${printed}`)), 60_000);
      child.stdout.on('data', (chunk) => {
        printed += chunk;
        const m = /at (http:\/\/127\.0\.0\.1:\d+)/.exec(printed);
        if (m && printed.includes('Ctrl-C')) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      });
      child.on('exit', (code) => reject(new Error(`serve-default exited ${code}:\n${printed}`)));
    });
  });

  after(async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
  });

  test('prints curl commands for the three default models', () => {
    for (const model of ['chat-small', 'chat-medium', 'embed-small']) {
      assert.match(printed, new RegExp(`"model": "${model}"`), printed);
    }
  });

  for (const model of ['chat-small', 'chat-medium']) {
    test(`${model} answers a chat request in readable words`, async () => {
      const response = await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hello!' }],
                               max_tokens: 48, seed: 7 }),
      });
      assert.equal(response.status, 200);
      const body = await response.json();
      const text = body.choices[0].message.content;
      const { words, share } = wordShare(text);
      assert.ok(words >= 8, `at least 8 words: ${JSON.stringify(text)}`);
      assert.ok(share >= 0.9, `words of letters (${share}): ${JSON.stringify(text)}`);
      assert.match(text, /\b(the|and|of|unto|LORD|shall)\b/, text);
    });
  }

  test('embed-small embeds', async () => {
    const response = await fetch(`${url}/v1/embeddings`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: 'embed-small', input: ['In the beginning', 'Jesus wept.'] }),
    });
    assert.equal(response.status, 200);
    const body = await response.json();
    assert.equal(body.data.length, 2);
    const norm = Math.hypot(...body.data[0].embedding);
    assert.ok(Math.abs(norm - 1) < 1e-3, `normalised: ${norm}`);
  });
});
