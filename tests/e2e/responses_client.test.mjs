// `baton serve`'s POST /v1/responses (OpenAI's Responses API, stateless) through the openai
// client's `responses.create` (plain and stream: true) and `responses.stream`, and vLLM's
// POST /tokenize and /detokenize with fetch: the token round trip, a conversation's tokens
// equal to its chat completion's prompt, embedding models, and the refusals.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import OpenAI from 'openai';

import { API_KEY, assertError, get, makeModels, modelFlags, post, startServer,
         stopServer } from './helpers.mjs';

let models;
let server;
let client;

before(async () => {
  models = makeModels();
  server = await startServer([...modelFlags(models), '--api-key', API_KEY]);
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: API_KEY, maxRetries: 0,
                        timeout: 60_000 });
});

after(async () => {
  if (server) await stopServer(server);
});

const greedy = (model, input, extra = {}) => ({
  model, input, max_output_tokens: 12, temperature: 0, ...extra,
});

function assertResponse(response, model) {
  const where = JSON.stringify(response).slice(0, 800);
  assert.equal(response.object, 'response', where);
  assert.match(response.id, /^resp_/, where);
  assert.ok(Number.isInteger(response.created_at) && response.created_at > 1_600_000_000, where);
  assert.equal(response.model, model, where);
  assert.ok(['completed', 'incomplete'].includes(response.status), where);
  if (response.status === 'incomplete') {
    assert.deepEqual(response.incomplete_details, { reason: 'max_output_tokens' }, where);
  } else {
    assert.equal(response.incomplete_details, null, where);
  }
  assert.equal(response.error, null, where);
  assert.equal(response.store, false, 'nothing is stored');
  assert.equal(response.output.length, 1, where);
  const [item] = response.output;
  assert.equal(item.type, 'message', where);
  assert.match(item.id, /^msg_/, where);
  assert.equal(item.role, 'assistant', where);
  assert.equal(item.content.length, 1, where);
  assert.equal(item.content[0].type, 'output_text', where);
  assert.deepEqual(item.content[0].annotations, [], where);
  const { usage } = response;
  assert.ok(usage.input_tokens > 0 && usage.output_tokens > 0, where);
  assert.equal(usage.total_tokens, usage.input_tokens + usage.output_tokens, where);
  assert.ok(Number.isInteger(usage.input_tokens_details.cached_tokens), where);
  assert.equal(usage.output_tokens_details.reasoning_tokens, 0, where);
  return item.content[0].text;
}

describe('responses.create', () => {
  test('a response: shape, output_text, usage; greedy text equals chat completions\'',
       async () => {
    const response = await client.responses.create(
      greedy('chat-a', 'Say hello.', { instructions: 'You are terse.' }));
    const text = assertResponse(response, 'chat-a');
    assert.equal(response.output_text, text, 'the client computes output_text from the output');
    assert.equal(response.instructions, 'You are terse.');
    assert.equal(response.max_output_tokens, 12);
    assert.ok(response.usage.output_tokens <= 12);
    const chat = await client.chat.completions.create({
      model: 'chat-a', max_tokens: 12, temperature: 0,
      messages: [{ role: 'system', content: 'You are terse.' },
                 { role: 'user', content: 'Say hello.' }] });
    assert.equal(text, chat.choices[0].message.content);
    assert.equal(response.usage.input_tokens, chat.usage.prompt_tokens);
    assert.equal(response.status === 'incomplete', chat.choices[0].finish_reason === 'length');
  });

  test('input as message items with input_text parts equals the string input', async () => {
    const plain = await client.responses.create(greedy('chat-b', 'Hello there'));
    const items = await client.responses.create(greedy('chat-b', [
      { type: 'message', role: 'user',
        content: [{ type: 'input_text', text: 'Hello ' }, { type: 'input_text', text: 'there' }] },
    ]));
    assert.equal(items.output_text, plain.output_text);
    assert.equal(items.usage.input_tokens, plain.usage.input_tokens);
  });

  test('a conversation with an earlier output passed back, metadata echoed', async () => {
    const first = await client.responses.create(greedy('chat-b', 'Hi.'));
    const second = await client.responses.create(greedy('chat-b', [
      { role: 'user', content: 'Hi.' },
      first.output[0],
      { role: 'developer', content: 'Be brief.' },
      { role: 'user', content: 'And then?' },
    ], { metadata: { run: 'e2e' }, store: false }));
    assertResponse(second, 'chat-b');
    assert.deepEqual(second.metadata, { run: 'e2e' });
    assert.ok(second.usage.input_tokens > first.usage.input_tokens);
  });

  test('stateless: previous_response_id and hosted tools are 400 naming the field', async () => {
    for (const [extra, param] of [[{ previous_response_id: 'resp_1' }, 'previous_response_id'],
                                  [{ tools: [{ type: 'web_search_preview' }] }, 'tools[0].type']]) {
      await assert.rejects(client.responses.create(greedy('chat-a', 'Hi', extra)),
                           (error) => error instanceof OpenAI.BadRequestError &&
                                      error.param === param &&
                                      error.code === 'unsupported_parameter');
    }
    await assert.rejects(client.responses.create(greedy('no-such-model', 'Hi')),
                         (error) => error instanceof OpenAI.NotFoundError);
  });
});

describe('responses streaming', () => {
  test('stream: true: every event in order, sequence numbers 0, 1, ..., deltas add up',
       async () => {
    const request = greedy('chat-a', 'Tell me about rivers.', { max_output_tokens: 16 });
    const whole = await client.responses.create(request);
    const events = [];
    for await (const event of await client.responses.create({ ...request, stream: true })) {
      events.push(event);
    }
    const types = events.map((e) => e.type);
    const deltas = types.filter((t) => t === 'response.output_text.delta').length;
    const last = whole.status === 'completed' ? 'response.completed' : 'response.incomplete';
    assert.deepEqual(types, [
      'response.created', 'response.in_progress', 'response.output_item.added',
      'response.content_part.added', ...Array(deltas).fill('response.output_text.delta'),
      'response.output_text.done', 'response.content_part.done', 'response.output_item.done',
      last]);
    events.forEach((e, i) => assert.equal(e.sequence_number, i, JSON.stringify(e)));
    assert.equal(events[0].response.status, 'in_progress');
    const text = events.filter((e) => e.type === 'response.output_text.delta')
      .map((e) => e.delta).join('');
    assert.equal(text, whole.output_text);
    assert.equal(events.at(-4).text, whole.output_text);
    const final = events.at(-1).response;
    assertResponse(final, 'chat-a');
    assert.equal(final.status, whole.status);
    assert.equal(final.output[0].content[0].text, whole.output_text);
    assert.equal(final.usage.output_tokens, whole.usage.output_tokens);
    const itemId = events[2].item.id;
    for (const e of events.slice(3, -1)) assert.equal(e.item_id ?? e.item.id, itemId);
  });

  test('responses.stream: the text events add up to the final response', async () => {
    const request = greedy('chat-b', 'Hi', { max_output_tokens: 8 });
    const stream = client.responses.stream(request);
    let text = '';
    stream.on('response.output_text.delta', (event) => { text += event.delta; });
    const final = await stream.finalResponse();
    const whole = await client.responses.create(request);
    assert.equal(text, whole.output_text);
    // The client leaves output_text out of a streamed final response; the output has it.
    assert.equal(final.output[0].content[0].text, whole.output_text);
  });
});

describe('tokenize and detokenize', () => {
  test('a prompt round-trips through /tokenize and /detokenize', async () => {
    const prompt = 'Hello world, how are you?';
    const res = await post(`${server.url}/tokenize`, { model: 'chat-a', prompt });
    assert.equal(res.status, 200, res.text);
    const { tokens, count, max_model_len } = res.json;
    assert.ok(Array.isArray(tokens) && tokens.length > 0 && tokens.every(Number.isInteger));
    assert.equal(count, tokens.length);
    const listed = (await get(`${server.url}/v1/models`)).json.data.find((m) => m.id === 'chat-a');
    assert.equal(max_model_len, listed.max_model_len);
    const back = await post(`${server.url}/detokenize`, { model: 'chat-a', tokens });
    assert.equal(back.status, 200, back.text);
    assert.deepEqual(back.json, { prompt });
  });

  test('messages are tokenized in the chat template, as chat completions count them',
       async () => {
    const messages = [{ role: 'system', content: 'You are terse.' },
                      { role: 'user', content: 'Hi there' }];
    const res = await post(`${server.url}/tokenize`,
                           { model: 'chat-b', messages, add_generation_prompt: true });
    assert.equal(res.status, 200, res.text);
    const chat = await client.chat.completions.create({ model: 'chat-b', messages,
                                                        max_tokens: 1 });
    assert.equal(res.json.count, chat.usage.prompt_tokens);
  });

  test('an embedding model tokenizes a prompt as /v1/embeddings counts it', async () => {
    const res = await post(`${server.url}/tokenize`, { model: 'embed', prompt: 'Hello world' });
    assert.equal(res.status, 200, res.text);
    const embedding = await client.embeddings.create({ model: 'embed', input: 'Hello world',
                                                       encoding_format: 'float' });
    assert.equal(res.json.count, embedding.usage.prompt_tokens);
    assert.ok(res.json.max_model_len > 0);
    const back = await post(`${server.url}/detokenize`, { model: 'embed', tokens: res.json.tokens });
    assert.deepEqual(back.json, { prompt: 'Hello world' });
  });

  test('refusals: ids outside the vocabulary, no prompt, messages for an embedding model, ' +
       'no key', async () => {
    assertError(await post(`${server.url}/detokenize`, { model: 'chat-a', tokens: [1, 10_000_000] }),
                400, { param: 'tokens' });
    assertError(await post(`${server.url}/detokenize`, { model: 'chat-a', tokens: [-1] }),
                400, { param: 'tokens' });
    assertError(await post(`${server.url}/tokenize`, { model: 'chat-a' }), 400,
                { param: 'prompt' });
    assertError(await post(`${server.url}/tokenize`,
                           { model: 'embed', messages: [{ role: 'user', content: 'x' }] }), 404);
    assertError(await post(`${server.url}/tokenize`, { model: 'nope', prompt: 'x' }), 404,
                { code: 'model_not_found' });
    assertError(await post(`${server.url}/tokenize`, { model: 'chat-a', prompt: 'x' },
                           { key: 'wrong' }), 401);
  });
});
