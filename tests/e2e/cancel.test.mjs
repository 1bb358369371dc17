// A client that goes away cancels its request: the KV blocks it held are free again within
// an engine step, the engine keeps serving, and /metrics counts the request as cancelled.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { get, makeModels, sleep, startServer, stopServer } from './helpers.mjs';

let models;
let server;
let base;

before(async () => {
  models = makeModels();
  // A small KV budget: one long request holds a visible share of the blocks.
  server = await startServer(['--model', `chat-a=${models.chatA}`, '--kv-budget-mb', '4',
                              '--max-batch', '4']);
  base = server.url;
});

after(async () => {
  if (server) await stopServer(server);
});

async function engine(name) {
  const res = await get(`${base}/v1/engines`, { key: null });
  assert.equal(res.status, 200, res.text);
  return res.json.engines.find((e) => e.name === name);
}

async function until(predicate, ms) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await predicate();
    if (value || Date.now() > deadline) return value;
    await sleep(10);
  }
}

describe('a client that disconnects', () => {
  test('frees its KV blocks within a step and is counted as cancelled', async () => {
    const idle = await engine('chat-a');
    const free = idle.kv_blocks.available;
    const controller = new AbortController();
    const response = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: 'chat-a', stream: true, max_tokens: 1500, ignore_eos: true,
                             messages: [{ role: 'user', content: 'a long answer, please' }] }),
      signal: controller.signal,
    });
    assert.equal(response.status, 200);
    const reader = response.body.getReader();
    assert.equal((await reader.read()).done, false);
    const busy = await engine('chat-a');
    assert.equal(busy.running, 1);
    assert.ok(busy.kv_blocks.available < free, `blocks held: ${JSON.stringify(busy.kv_blocks)}`);

    controller.abort();
    await reader.read().catch(() => {});
    // Within an engine step (milliseconds for this model); 2 s allows for a loaded machine.
    const after_ = await until(async () => {
      const e = await engine('chat-a');
      return e.running === 0 && e.kv_blocks.available === free ? e : null;
    }, 2000);
    assert.ok(after_, `blocks back: ${JSON.stringify((await engine('chat-a')).kv_blocks)}`);

    const metrics = (await get(`${base}/metrics`, { key: null })).text;
    assert.match(metrics, /baton_request_success_total\{model_name="chat-a",finished_reason="cancelled"\} 1/);
    assert.match(metrics, /baton_http_requests_total\{model_name="chat-a",route="\/v1\/chat\/completions",status="499"\} 1/);
  });
});
