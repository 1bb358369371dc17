// `baton serve` over plain HTTP (fetch, a raw socket, curl for a couple): every error of the
// contract in the OpenAI error shape, the SSE framing, /health, /metrics, /v1/engines, and
// clients that go away mid-stream.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';

import {
  API_KEY, assertError, assertRetryAfter, assertUsage, authHeaders, get, makeModels, modelFlags,
  post, sleep, sseData, startServer, stopServer,
} from './helpers.mjs';

const MAX_BODY = 65536;

let models;
let server;
let chatUrl;
let completionsUrl;
let embeddingsUrl;

before(async () => {
  models = makeModels();
  server = await startServer([...modelFlags(models), '--api-key', API_KEY,
                              '--max-body-bytes', String(MAX_BODY)]);
  chatUrl = `${server.url}/v1/chat/completions`;
  completionsUrl = `${server.url}/v1/completions`;
  embeddingsUrl = `${server.url}/v1/embeddings`;
});

after(async () => {
  if (server) await stopServer(server);
});

const chat = (extra = {}) => ({
  model: 'chat-a',
  messages: [{ role: 'user', content: 'Hello' }],
  max_tokens: 8,
  temperature: 0,
  ...extra,
});

async function assertHealthy() {
  const health = await get(`${server.url}/health`);
  assert.equal(health.status, 200, health.text);
  assert.equal(health.json?.status, 'ok', health.text);
  const res = await post(chatUrl, chat());
  assert.equal(res.status, 200, res.text);
  assert.equal(res.json.object, 'chat.completion', res.text);
}

describe('errors', () => {
  test('400 malformed JSON', async () => {
    for (const body of ['{"model": "chat-a", "messages": [', 'not json at all', '']) {
      assertError(await post(chatUrl, body), 400, { type: 'invalid_request_error' });
    }
    assertError(await post(completionsUrl, '{"model":'), 400, { type: 'invalid_request_error' });
    assertError(await post(embeddingsUrl, '{"model":'), 400, { type: 'invalid_request_error' });
  });

  test('400 a body that is JSON but not an object', async () => {
    for (const body of ['[1, 2]', '"text"', '42', 'null']) {
      assertError(await post(chatUrl, body), 400, { type: 'invalid_request_error' });
    }
  });

  test('400 unsupported or unknown fields, named by param', async () => {
    const cases = [
      [{ n: 2 }, 'n'],
      [{ functions: [{ name: 'f', parameters: {} }] }, 'functions'],
      [{ frobnicate: true }, 'frobnicate'],
    ];
    for (const [extra, param] of cases) {
      assertError(await post(chatUrl, chat(extra)), 400,
                  { type: 'invalid_request_error', param });
    }
    assertError(await post(completionsUrl, { model: 'chat-a', prompt: 'x', n: 3 }), 400,
                { type: 'invalid_request_error', param: 'n' });
    // n: 1 is the one n there is.
    const one = await post(chatUrl, chat({ n: 1 }));
    assert.equal(one.status, 200, one.text);
  });

  test('400 bad values, named by param', async () => {
    const cases = [
      [{ temperature: -1 }, 'temperature'],
      [{ temperature: 'hot' }, 'temperature'],
      [{ top_p: 1.5 }, 'top_p'],
      [{ max_tokens: -1 }, 'max_tokens'],
      [{ max_tokens: 'many' }, 'max_tokens'],
      [{ messages: 'Hello' }, 'messages'],
      [{ messages: [{ role: 'user', content: 42 }] }, 'messages[0].content'],
      [{ stream: 'yes' }, 'stream'],
      [{ stop: 7 }, 'stop'],
      [{ model: 7 }, 'model'],
    ];
    for (const [extra, param] of cases) {
      const res = await post(chatUrl, chat(extra));
      assertError(res, 400, { type: 'invalid_request_error', param });
    }
    const noMessages = chat();
    delete noMessages.messages;
    assertError(await post(chatUrl, noMessages), 400,
                { type: 'invalid_request_error', param: 'messages' });
    const noModel = chat();
    delete noModel.model;
    assertError(await post(chatUrl, noModel), 400,
                { type: 'invalid_request_error', param: 'model' });
    assertError(await post(completionsUrl, { model: 'chat-a', prompt: ['one', 'two'] }), 400,
                { type: 'invalid_request_error', param: 'prompt' });
    assertError(await post(completionsUrl, { model: 'chat-a', prompt: 'x', temperature: -1 }), 400,
                { type: 'invalid_request_error', param: 'temperature' });
    assertError(await post(embeddingsUrl, { model: 'embed', input: 'x', encoding_format: 'hex' }),
                400, { type: 'invalid_request_error', param: 'encoding_format' });
    assertError(await post(embeddingsUrl, { model: 'embed' }), 400,
                { type: 'invalid_request_error', param: 'input' });
  });

  test('401 without the bearer key or with a wrong one', async () => {
    const cases = [
      { key: null },
      { key: 'wrong-key' },
      { key: null, headers: { Authorization: `Basic ${API_KEY}` } },
      { key: null, headers: { Authorization: 'Bearer' } },
    ];
    for (const options of cases) {
      const res = await post(chatUrl, chat(), options);
      assertError(res, 401, { type: 'invalid_request_error', code: 'invalid_api_key' });
    }
    assertError(await post(embeddingsUrl, { model: 'embed', input: 'x' }, { key: 'nope' }), 401,
                { code: 'invalid_api_key' });
    assertError(await get(`${server.url}/v1/models`, { key: null }), 401,
                { code: 'invalid_api_key' });
    // The right key after wrong ones.
    assert.equal((await post(chatUrl, chat())).status, 200);
  });

  test('the bearer scheme is case-insensitive', async () => {
    for (const scheme of ['bearer', 'BEARER', 'bEaReR']) {
      const res = await post(chatUrl, chat(), { key: null,
                                                headers: { Authorization: `${scheme} ${API_KEY}` } });
      assert.equal(res.status, 200, `${scheme}: ${res.text}`);
    }
  });

  test('400 a body that is not UTF-8 says so', async () => {
    const body = Buffer.concat([Buffer.from('{"model": "chat-a", "prompt": "'),
                                Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    const res = await fetch(completionsUrl, { method: 'POST', body,
                                              headers: { 'Content-Type': 'application/json',
                                                         ...authHeaders() } });
    const text = await res.text();
    const error = assertError({ status: res.status, headers: res.headers, text,
                                json: JSON.parse(text) }, 400, { code: 'invalid_json' });
    assert.match(error.message, /is not valid JSON: it is not valid UTF-8 at byte \d+$/,
                 error.message);
  });

  test('400 token ids outside the vocabulary name the field and the range', async () => {
    const error = assertError(await post(completionsUrl, { model: 'chat-a', prompt: [1, 10_000_000] }),
                              400, { param: 'prompt' });
    const range = /token id 10000000 \(prompt\[1\]\).*ids are 0 to (\d+)$/.exec(error.message);
    assert.ok(range, error.message);
    const detok = assertError(await post(`${server.url}/detokenize`, { model: 'chat-a', tokens: [-1] }),
                              400, { param: 'tokens' });
    // The tokenizer's range (within the model's): not the range of the id's integer type.
    const decodable = /token id -1 \(tokens\[0\]\).*ids are 0 to (\d+)$/.exec(detok.message);
    assert.ok(decodable && Number(decodable[1]) <= Number(range[1]), detok.message);
    assertError(await post(embeddingsUrl, { model: 'embed', input: [[5, -3]] }), 400,
                { param: 'input' });
  });

  test('404 an unknown model, with the loaded models in the message', async () => {
    const error = assertError(await post(chatUrl, chat({ model: 'gpt-4o' })), 404,
                              { code: 'model_not_found' });
    assert.match(error.message, /chat-a/, error.message);
    assert.match(error.message, /chat-b/, error.message);
    assertError(await post(completionsUrl, { model: 'gpt-4o', prompt: 'x' }), 404,
                { code: 'model_not_found' });
    const embedError = assertError(await post(embeddingsUrl, { model: 'gpt-4o', input: 'x' }),
                                   404, { code: 'model_not_found' });
    assert.match(embedError.message, /embed/, embedError.message);
  });

  test('404 an unknown route, in the error shape', async () => {
    assertError(await get(`${server.url}/v1/nothing-here`), 404);
    assertError(await post(`${server.url}/v2/chat/completions`, chat()), 404);
    assertError(await get(`${server.url}/nothing-here.html`), 404);  // (GET / is the dashboard)
  });

  test('413 a body over --max-body-bytes, and the server serves on', async () => {
    const big = chat({ messages: [{ role: 'user', content: 'x'.repeat(MAX_BODY + 1000) }] });
    let res;
    try {
      res = await post(chatUrl, big);
    } catch (error) {
      assert.fail(`the client should get a 413, not a broken connection: ${error.cause ?? error}`);
    }
    assertError(res, 413);
    // With curl too (it sends Expect: 100-continue for a big body).
    const file = path.join(models.root, 'big.json');
    fs.writeFileSync(file, JSON.stringify(big));
    const { stdout } = await promisify(execFile)('curl', [
      '-sS', '-o', '/dev/null', '-w', '%{http_code}', '-H', 'Content-Type: application/json',
      '-H', `Authorization: Bearer ${API_KEY}`, '--data-binary', `@${file}`, chatUrl,
    ]).catch((error) => error);
    assert.equal(stdout, '413');
    await assertHealthy();
  });

  test('400 context_length_exceeded for a prompt longer than the model takes', async () => {
    // Short words are a token or two each; 9000 of them are beyond the tiny model's context
    // and still under --max-body-bytes.
    const long = Array.from({ length: 9000 }, (_, i) => String.fromCharCode(97 + (i % 26)))
      .join(' ');
    const res = await post(chatUrl, chat({ messages: [{ role: 'user', content: long }] }));
    assertError(res, 400, { type: 'invalid_request_error', code: 'context_length_exceeded' });
    const completion = await post(completionsUrl, { model: 'chat-a', prompt: long, max_tokens: 4 });
    const error = assertError(completion, 400, { code: 'context_length_exceeded', param: 'prompt' });
    assert.match(error.message, /in the prompt, 4 in the completion/, error.message);
    const embedding = await post(embeddingsUrl, { model: 'embed', input: long });
    assertError(embedding, 400, { code: 'context_length_exceeded' });
  });
});

describe('streaming framing', () => {
  test('SSE: text/event-stream, data: {json} events, data: [DONE] at the end', async () => {
    const response = await fetch(chatUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...authHeaders() },
      body: JSON.stringify(chat({ stream: true, stream_options: { include_usage: true } })),
    });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    const text = await response.text();
    assert.ok(text.endsWith('data: [DONE]\n\n'), `ends with [DONE]: ${JSON.stringify(text)}`);
    assert.match(text, /^data: /, 'the first bytes are an event');
    const data = sseData(text);
    assert.equal(data.at(-1), '[DONE]');
    assert.equal(data.filter((d) => d === '[DONE]').length, 1);
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
    for (const chunk of chunks) assert.equal(chunk.object, 'chat.completion.chunk');
    assertUsage(chunks.at(-1).usage);
  });

  test('completions SSE ends with [DONE] too', async () => {
    const res = await post(completionsUrl, { model: 'chat-b', prompt: 'Hi', max_tokens: 5,
                                             stream: true });
    assert.equal(res.status, 200, res.text);
    const data = sseData(res.text);
    assert.equal(data.at(-1), '[DONE]');
    for (const d of data.slice(0, -1)) assert.equal(JSON.parse(d).object, 'text_completion');
  });

  test('curl -N sees the same stream', async () => {
    const { stdout } = await promisify(execFile)('curl', [
      '-sS', '-N', '-H', 'Content-Type: application/json', '-H', `Authorization: Bearer ${API_KEY}`,
      '-d', JSON.stringify(chat({ stream: true })), chatUrl,
    ]);
    const data = sseData(stdout);
    assert.equal(data.at(-1), '[DONE]', stdout);
    const text = data.slice(0, -1).map((d) => JSON.parse(d).choices[0]?.delta?.content ?? '')
      .join('');
    const whole = await post(chatUrl, chat());
    assert.equal(text, whole.json.choices[0].message.content);
  });
});

describe('health, metrics, engines, models', () => {
  test('GET /health is 200 {"status": "ok"}', async () => {
    const res = await get(`${server.url}/health`);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json?.status, 'ok', res.text);
    assert.match(res.headers.get('content-type') ?? '', /application\/json/);
  });

  // Sums every sample of each metric name (over its labels).
  function parseMetrics(text) {
    const types = new Map();
    const totals = new Map();
    for (const line of text.split('\n')) {
      if (line === '') continue;
      const type = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
      if (type) { types.set(type[1], type[2]); continue; }
      if (line.startsWith('#')) continue;
      const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)( \d+)?$/.exec(line);
      assert.ok(sample, `not a Prometheus sample line: ${JSON.stringify(line)}`);
      const value = Number(sample[3] === '+Inf' ? Infinity : sample[3]);
      assert.ok(!Number.isNaN(value) || sample[3] === 'NaN', line);
      totals.set(sample[1], (totals.get(sample[1]) ?? 0) + value);
    }
    return { types, totals };
  }

  test('GET /metrics is Prometheus text and its request counter moves', async () => {
    const before = await get(`${server.url}/metrics`);
    assert.equal(before.status, 200, before.text);
    assert.match(before.headers.get('content-type') ?? '', /^text\/plain/);
    const first = parseMetrics(before.text);
    assert.ok(first.types.size >= 2, `at least two # TYPE lines:\n${before.text}`);
    const counters = [...first.types].filter(([name, type]) => type === 'counter' &&
                                                               /request/.test(name));
    assert.ok(counters.length >= 1, `a counter of requests:\n${before.text}`);

    for (let i = 0; i < 3; ++i) assert.equal((await post(chatUrl, chat())).status, 200);
    const later = parseMetrics((await get(`${server.url}/metrics`)).text);
    const moved = counters.filter(([name]) => {
      // A counter's samples are NAME or NAME_total, whichever the exposition uses.
      const sum = (m) => (m.totals.get(name) ?? 0) + (m.totals.get(`${name}_total`) ?? 0);
      return sum(later) >= sum(first) + 3;
    });
    assert.ok(moved.length >= 1,
              `a request counter (${counters.map(([n]) => n)}) went up by >= 3 after 3 requests`);
  });

  test('/metrics stays bounded whatever paths and model names clients send', async () => {
    const requestSeries = async () => {
      const text = (await get(`${server.url}/metrics`)).text;
      return { text, series: text.split('\n').filter((l) => l.startsWith('baton_http_requests_total'))
        .length };
    };
    const rssKb = () => Number(/VmRSS:\s+(\d+) kB/.exec(
      fs.readFileSync(`/proc/${server.child.pid}/status`, 'utf8'))[1]);
    // Unknown paths, unknown model ids and their actions, with and without the key.
    const send = (i) => {
      switch (i % 4) {
        case 0: return get(`${server.url}/junk${i}`, { key: null });
        case 1: return get(`${server.url}/v1/models/x${i}`);
        case 2: return post(`${server.url}/v1/models/x${i}/unload`, '');
        default: return post(chatUrl, chat({ model: `made-up-${i}` }));
      }
    };
    const burst = async (from, count) => {
      const workers = Array.from({ length: 8 }, async (_, w) => {
        for (let i = from + w; i < from + count; i += 8) await send(i);
      });
      await Promise.all(workers);
    };
    await burst(0, 2000);  // every label combination these requests make, and a warm heap
    await requestSeries();  // (a scrape is counted too, after its answer)
    const before = await requestSeries();
    const rssBefore = rssKb();
    await burst(2000, 10_000);
    const after = await requestSeries();
    const rssAfter = rssKb();
    assert.equal(after.series, before.series, after.text);
    assert.doesNotMatch(after.text, /junk|x\d+|made-up/);
    assert.ok(rssAfter - rssBefore < 4096,
              `RSS grew by ${rssAfter - rssBefore} kB over 10,000 requests`);
  });

  test('GET /v1/engines is JSON', async () => {
    const res = await get(`${server.url}/v1/engines`);
    assert.equal(res.status, 200, res.text);
    assert.ok(res.json !== undefined && typeof res.json === 'object', res.text);
    assert.match(res.text, /chat-a/);
    assert.match(res.text, /chat-b/);
  });

  test('GET /v1/models with the key', async () => {
    const res = await get(`${server.url}/v1/models`);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.object, 'list');
    assert.deepEqual(res.json.data.map((m) => m.id).sort(), ['chat-a', 'chat-b', 'embed']);
  });

  test('keep-alive: several requests on one connection (curl reuses it)', async () => {
    const body = JSON.stringify(chat());
    // curl -d applies to all URLs; three URLs, one handle: the later two reuse the connection.
    const { stdout } = await promisify(execFile)('curl', [
      '-sS', '-w', '%{http_code} %{num_connects}\n', '-o', '/dev/null', '-o', '/dev/null',
      '-o', '/dev/null', '-H', 'Content-Type: application/json',
      '-H', `Authorization: Bearer ${API_KEY}`, '-d', body, chatUrl, chatUrl, chatUrl,
    ]);
    const lines = stdout.trim().split('\n');
    assert.deepEqual(lines.map((l) => l.split(' ')[0]), ['200', '200', '200'], stdout);
    assert.deepEqual(lines.map((l) => l.split(' ')[1]), ['1', '0', '0'],
                     `one connection for three requests: ${stdout}`);
  });
});

describe('clients that go away', () => {
  async function abortAfterFirstChunk(body) {
    const controller = new AbortController();
    const response = await fetch(chatUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...authHeaders() },
      body: JSON.stringify(body),
      signal: controller.signal,
    });
    assert.equal(response.status, 200);
    const reader = response.body.getReader();
    const { value, done } = await reader.read();
    assert.ok(!done && value.length > 0, 'a first chunk arrives');
    controller.abort();
    await reader.read().catch(() => {});
  }

  test('an aborted stream: health stays 200 and the next request works', async () => {
    await abortAfterFirstChunk(chat({ max_tokens: 400, stream: true }));
    await sleep(200);
    await assertHealthy();
  });

  test('many aborted streams at once, on both models', async () => {
    await Promise.all(Array.from({ length: 12 }, (_, i) => abortAfterFirstChunk(
      chat({ model: i % 2 ? 'chat-a' : 'chat-b', max_tokens: 400, stream: true,
             messages: [{ role: 'user', content: `abort ${i}` }] }))));
    await sleep(300);
    await assertHealthy();
    // The engines are free again: a long greedy request still runs to its length.
    const res = await post(chatUrl, chat({ max_tokens: 64 }));
    assert.equal(res.status, 200);
  });

  test('an aborted non-streaming request', async () => {
    const controller = new AbortController();
    // This tiny model decodes 400 tokens in under 20 ms at times (3 runs of 12 were answered
    // before the abort below): 1500, its EOS ignored, take 4 times longer.
    const pending = post(chatUrl, chat({ max_tokens: 1500, ignore_eos: true }),
                         { signal: controller.signal });
    await sleep(20);
    controller.abort();
    await assert.rejects(pending);
    await sleep(200);
    await assertHealthy();
  });

  function rawSocket(payload) {
    return new Promise((resolve, reject) => {
      const socket = net.connect(server.port, '127.0.0.1', () => {
        socket.write(payload, () => { socket.destroy(); resolve(); });
      });
      socket.on('error', reject);
    });
  }

  test('half-sent requests and silent connections do not wedge the server', async () => {
    const body = JSON.stringify(chat());
    await rawSocket(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: ${
      body.length}\r\nContent-Type: application/json\r\n\r\n${body.slice(0, 10)}`);
    await rawSocket('POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n');
    await rawSocket('GARBAGE\r\n\r\n');
    const idle = [];
    for (let i = 0; i < 20; ++i) {
      idle.push(await new Promise((resolve, reject) => {
        const socket = net.connect(server.port, '127.0.0.1', () => resolve(socket));
        socket.on('error', reject);
      }));
    }
    await assertHealthy();
    for (const socket of idle) socket.destroy();
    await assertHealthy();
  });
});

describe('429 when the queue is full', () => {
  let small;
  before(async () => {
    small = await startServer([...modelFlags(models), '--queue-limit', '1']);
  });
  after(async () => {
    if (small) await stopServer(small);
  });

  test('a burst over --queue-limit gets 429 with Retry-After; the rest are answered', async () => {
    const burst = Array.from({ length: 128 }, (_, i) => post(`${small.url}/v1/chat/completions`, {
      model: 'chat-a', messages: [{ role: 'user', content: `burst ${i}` }], max_tokens: 32,
      temperature: 0,
    }, { key: null }));
    const results = await Promise.all(burst);
    const statuses = results.map((r) => r.status);
    const rejected = results.filter((r) => r.status === 429);
    assert.ok(rejected.length >= 1, `some of 128 requests get 429: ${statuses}`);
    assert.ok(results.some((r) => r.status === 200), `some are answered: ${statuses}`);
    assert.deepEqual(statuses.filter((s) => s !== 200 && s !== 429), [],
                     'only 200 or 429');
    for (const res of rejected) {
      assertError(res, 429);
      assertRetryAfter(res);
    }
    // Once the burst is through, requests are answered again.
    const res = await post(`${small.url}/v1/chat/completions`, {
      model: 'chat-a', messages: [{ role: 'user', content: 'after' }], max_tokens: 4,
    }, { key: null });
    assert.equal(res.status, 200, res.text);
  });
});
