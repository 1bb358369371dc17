// `baton serve`'s POST /v1/messages through the official Anthropic client
// (@anthropic-ai/sdk, pinned in tests/e2e/package.json): messages.create, streamed with
// messages.stream and create({stream: true}), stop sequences, usage, both ways of sending
// the key, and the client's error classes. The same conversation through the openai client's
// chat completions gives the same greedy text and prompt size: one engine, two APIs.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import Anthropic, { AuthenticationError, BadRequestError, NotFoundError } from '@anthropic-ai/sdk';
import OpenAI from 'openai';

import { API_KEY, makeModels, modelFlags, post, startServer, stopServer } from './helpers.mjs';

let models;
let server;
let client;
let openai;

before(async () => {
  models = makeModels();
  server = await startServer([...modelFlags(models), '--api-key', API_KEY]);
  client = new Anthropic({ baseURL: server.url, apiKey: API_KEY, maxRetries: 0, timeout: 60_000 });
  openai = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: API_KEY, maxRetries: 0,
                        timeout: 60_000 });
});

after(async () => {
  if (server) await stopServer(server);
});

const greedy = (model, content, extra = {}) => ({
  model,
  max_tokens: 12,
  temperature: 0,
  system: 'You are terse.',
  messages: [{ role: 'user', content }],
  ...extra,
});

// The prompt's size in Anthropic's terms: the tokens read from the cache count apart.
const promptTokens = (usage) => usage.input_tokens + (usage.cache_read_input_tokens ?? 0);

function assertMessage(message, model) {
  const where = JSON.stringify(message).slice(0, 800);
  assert.equal(message.type, 'message', where);
  assert.equal(message.role, 'assistant', where);
  assert.match(message.id, /^msg_/, where);
  assert.equal(message.model, model, where);
  assert.equal(message.content.length, 1, where);
  assert.equal(message.content[0].type, 'text', where);
  assert.equal(typeof message.content[0].text, 'string', where);
  assert.ok(['end_turn', 'max_tokens', 'stop_sequence'].includes(message.stop_reason), where);
  if (message.stop_reason !== 'stop_sequence') assert.equal(message.stop_sequence, null, where);
  for (const key of ['input_tokens', 'output_tokens']) {
    assert.ok(Number.isInteger(message.usage[key]) && message.usage[key] >= 0, where);
  }
  assert.ok(promptTokens(message.usage) > 0, where);
  assert.ok(message.usage.output_tokens > 0, where);
  return message.content[0].text;
}

describe('messages.create', () => {
  test('a message: shape, usage, greedy and deterministic', async () => {
    const first = await client.messages.create(greedy('chat-a', 'Say hello.'));
    const text = assertMessage(first, 'chat-a');
    assert.ok(first.usage.output_tokens <= 12);
    if (first.stop_reason === 'max_tokens') assert.equal(first.usage.output_tokens, 12);
    const second = await client.messages.create(greedy('chat-a', 'Say hello.'));
    assert.equal(second.content[0].text, text);
    assert.equal(promptTokens(second.usage), promptTokens(first.usage));
    assert.notEqual(second.id, first.id, 'each message has its own id');
  });

  test('the same text and prompt as chat completions of the same conversation', async () => {
    const message = await client.messages.create(greedy('chat-b', 'Count to three.'));
    const chat = await openai.chat.completions.create({
      model: 'chat-b', max_tokens: 12, temperature: 0,
      messages: [{ role: 'system', content: 'You are terse.' },
                 { role: 'user', content: 'Count to three.' }] });
    assert.equal(message.content[0].text, chat.choices[0].message.content);
    assert.equal(promptTokens(message.usage), chat.usage.prompt_tokens);
    assert.equal(message.usage.output_tokens, chat.usage.completion_tokens);
  });

  test('content blocks and system blocks equal plain strings', async () => {
    const plain = await client.messages.create(greedy('chat-a', 'Hello there'));
    const blocks = await client.messages.create({
      ...greedy('chat-a', ''),
      system: [{ type: 'text', text: 'You are terse.' }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello ' },
                                           { type: 'text', text: 'there' }] }] });
    assert.equal(blocks.content[0].text, plain.content[0].text);
    assert.equal(promptTokens(blocks.usage), promptTokens(plain.usage));
  });

  test('a multi-turn conversation is accepted; metadata is ignored', async () => {
    const message = await client.messages.create({
      ...greedy('chat-b', ''),
      metadata: { user_id: 'e2e' },
      messages: [{ role: 'user', content: 'Hi.' }, { role: 'assistant', content: 'Hello.' },
                 { role: 'user', content: 'And then?' }] });
    assertMessage(message, 'chat-b');
  });

  test('stop_sequences end the text before the sequence and name it', async () => {
    const whole = (await client.messages.create(greedy('chat-a', 'Tell me a story.'))).content[0].text;
    // An ASCII character of the text (greedy tiny models often say only newlines).
    const stop = [...whole].find((c) => c.charCodeAt(0) < 128 && (c.trim() !== '' || c === '\n'));
    if (stop === undefined) return;  // an empty greedy text has nothing to stop at
    const message = await client.messages.create(
      greedy('chat-a', 'Tell me a story.', { stop_sequences: [stop] }));
    assertMessage(message, 'chat-a');
    assert.equal(message.stop_reason, 'stop_sequence', JSON.stringify(message));
    assert.equal(message.stop_sequence, stop);
    assert.equal(message.content[0].text, whole.slice(0, whole.indexOf(stop)));
  });

  test('sampling with temperature, top_p and top_k answers', async () => {
    const message = await client.messages.create(
      greedy('chat-b', 'Hi', { temperature: 1, top_p: 0.9, top_k: 20, max_tokens: 6 }));
    assertMessage(message, 'chat-b');
    assert.ok(message.usage.output_tokens <= 6);
  });
});

describe('streaming', () => {
  test('messages.stream: the text events add up to the final message and the whole text',
       async () => {
    const request = greedy('chat-a', 'Tell me about rivers.', { max_tokens: 16 });
    const whole = await client.messages.create(request);
    const stream = client.messages.stream(request);
    let text = '';
    stream.on('text', (delta) => { text += delta; });
    const final = await stream.finalMessage();
    assertMessage(final, 'chat-a');
    assert.equal(text, whole.content[0].text);
    assert.equal(final.content[0].text, whole.content[0].text);
    assert.equal(final.stop_reason, whole.stop_reason);
    assert.equal(final.usage.output_tokens, whole.usage.output_tokens);
    assert.equal(promptTokens(final.usage), promptTokens(whole.usage));
  });

  test('create({stream: true}): the events in Anthropic\'s order', async () => {
    const stream = await client.messages.create({ ...greedy('chat-b', 'Hi'), stream: true });
    const events = [];
    for await (const event of stream) events.push(event);
    const types = events.map((e) => e.type);
    const deltas = types.filter((t) => t === 'content_block_delta').length;
    assert.deepEqual(types, ['message_start', 'content_block_start',
                             ...Array(deltas).fill('content_block_delta'),
                             'content_block_stop', 'message_delta', 'message_stop'],
                     'ping is consumed by the client');
    const start = events[0].message;
    assert.match(start.id, /^msg_/);
    assert.deepEqual(start.content, []);
    assert.equal(start.stop_reason, null);
    assert.deepEqual(events[1].content_block, { type: 'text', text: '' });
    for (const e of events.filter((x) => x.type === 'content_block_delta')) {
      assert.equal(e.index, 0);
      assert.equal(e.delta.type, 'text_delta');
    }
    const delta = events.at(-2);
    assert.ok(['end_turn', 'max_tokens'].includes(delta.delta.stop_reason), JSON.stringify(delta));
    assert.ok(delta.usage.output_tokens > 0);
  });

  test('the raw SSE names every event', async () => {
    const res = await post(`${server.url}/v1/messages`,
                           { ...greedy('chat-a', 'Hi'), stream: true, max_tokens: 3 },
                           { key: null, headers: { 'x-api-key': API_KEY,
                                                   'anthropic-version': '2023-06-01' } });
    assert.equal(res.status, 200, res.text);
    assert.match(res.headers.get('content-type'), /text\/event-stream/);
    const blocks = res.text.split('\n\n').filter((b) => b !== '');
    for (const block of blocks) {
      const [eventLine, dataLine] = block.split('\n');
      assert.match(eventLine, /^event: [a-z_]+$/, block);
      assert.equal(JSON.parse(dataLine.replace(/^data: /, '')).type,
                   eventLine.slice('event: '.length), block);
    }
    assert.equal(blocks.at(-1), 'event: message_stop\ndata: {"type":"message_stop"}');
    assert.ok(!res.text.includes('[DONE]'));
  });
});

describe('errors and authentication', () => {
  test('an unknown model is the client\'s NotFoundError (not_found_error)', async () => {
    await assert.rejects(client.messages.create(greedy('no-such-model', 'Hi')),
                         (error) => error instanceof NotFoundError && error.status === 404 &&
                                    error.type === 'not_found_error');
  });

  test('an image block is a BadRequestError (invalid_request_error) naming the block',
       async () => {
    await assert.rejects(
      client.messages.create({ ...greedy('chat-a', ''), messages: [{ role: 'user', content: [
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } }] }] }),
      (error) => error instanceof BadRequestError && error.type === 'invalid_request_error' &&
                 /messages\[0\]\.content\[0\]\.type/.test(error.message));
  });

  test('server tools are refused; max_tokens is required', async () => {
    await assert.rejects(
      client.messages.create({ ...greedy('chat-a', 'Hi'),
                               tools: [{ type: 'web_search_20250305', name: 'web_search' }] }),
      (error) => error instanceof BadRequestError && /tools\[0\]\.type/.test(error.message));
    const res = await post(`${server.url}/v1/messages`,
                           { model: 'chat-a', messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(res.status, 400);
    assert.deepEqual(Object.keys(res.json).sort(), ['error', 'type']);
    assert.equal(res.json.type, 'error');
    assert.equal(res.json.error.type, 'invalid_request_error');
    assert.match(res.json.error.message, /max_tokens/);
  });

  test('a wrong key is the client\'s AuthenticationError; a Bearer token works too', async () => {
    const wrong = new Anthropic({ baseURL: server.url, apiKey: 'wrong', maxRetries: 0 });
    await assert.rejects(wrong.messages.create(greedy('chat-a', 'Hi')),
                         (error) => error instanceof AuthenticationError && error.status === 401 &&
                                    error.type === 'authentication_error');
    const bearer = new Anthropic({ baseURL: server.url, authToken: API_KEY, maxRetries: 0 });
    assertMessage(await bearer.messages.create(greedy('chat-a', 'Hi')), 'chat-a');
  });
});
