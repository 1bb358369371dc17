// `baton serve` through the official openai npm client (tests/e2e/package.json pins it):
// chat and completions, streaming or not, embeddings (float and base64), models, logprobs.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import OpenAI from 'openai';

import { API_KEY, assertUsage, makeModels, modelFlags, startServer, stopServer } from './helpers.mjs';

// Token counts of a usage object (cached_tokens depends on what ran before).
const counts = ({ prompt_tokens, completion_tokens, total_tokens }) =>
  ({ prompt_tokens, completion_tokens, total_tokens });

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

const greedy = (model, content, extra = {}) => ({
  model,
  messages: [{ role: 'user', content }],
  max_tokens: 12,
  temperature: 0,
  ...extra,
});

// Reads a client stream into its chunks.
async function chunksOf(stream) {
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

function assertChatCompletion(completion, model) {
  const where = JSON.stringify(completion).slice(0, 800);
  assert.equal(completion.object, 'chat.completion', where);
  assert.equal(typeof completion.id, 'string', where);
  assert.ok(completion.id.length > 0, where);
  assert.ok(Number.isInteger(completion.created) && completion.created > 1_600_000_000,
            `created must be a Unix time in seconds: ${where}`);
  assert.equal(completion.model, model, where);
  assert.equal(completion.choices.length, 1, where);
  const [choice] = completion.choices;
  assert.equal(choice.index, 0, where);
  assert.equal(choice.message.role, 'assistant', where);
  assert.equal(typeof choice.message.content, 'string', where);
  assert.ok(['stop', 'length'].includes(choice.finish_reason), `finish_reason: ${where}`);
  assertUsage(completion.usage, where);
  if (choice.finish_reason === 'length') {
    assert.ok(completion.usage.completion_tokens > 0, where);
  }
  return choice;
}

function assertChunkShape(chunk, id, model) {
  const where = JSON.stringify(chunk).slice(0, 800);
  assert.equal(chunk.object, 'chat.completion.chunk', where);
  assert.equal(chunk.id, id, `every chunk carries the same id: ${where}`);
  assert.equal(chunk.model, model, where);
  assert.ok(Number.isInteger(chunk.created), where);
}

describe('models', () => {
  test('models.list lists every loaded model', async () => {
    const page = await client.models.list();
    const ids = page.data.map((m) => m.id).sort();
    assert.deepEqual(ids, ['chat-a', 'chat-b', 'embed']);
    for (const model of page.data) {
      assert.equal(model.object, 'model', JSON.stringify(model));
      assert.equal(model.owned_by, 'baton', JSON.stringify(model));
      // When its files were written (made by this test file, so within the last hour).
      assert.ok(Number.isInteger(model.created) && model.created > Date.now() / 1000 - 3600,
                JSON.stringify(model));
    }
  });

  test('models.retrieve is either supported or a 404 in the error shape', async () => {
    try {
      const model = await client.models.retrieve('chat-a');
      assert.equal(model.id, 'chat-a');
      assert.equal(model.object, 'model');
    } catch (error) {
      assert.ok(error instanceof OpenAI.APIError, String(error));
      assert.equal(error.status, 404, String(error));
    }
  });
});

describe('chat completions', () => {
  test('non-streaming, greedy: shape, usage, deterministic', async () => {
    const first = await client.chat.completions.create(greedy('chat-a', 'Say hello.'));
    const choice = assertChatCompletion(first, 'chat-a');
    assert.ok(choice.message.content.length > 0 || choice.finish_reason === 'stop');
    if (choice.finish_reason === 'length') assert.equal(first.usage.completion_tokens, 12);
    assert.ok(first.usage.completion_tokens <= 12);
    const second = await client.chat.completions.create(greedy('chat-a', 'Say hello.'));
    assert.equal(second.choices[0].message.content, choice.message.content);
    // The same counts; the second may reuse the first's prompt from the prefix cache.
    assert.deepEqual(counts(second.usage), counts(first.usage));
    assert.ok(second.usage.prompt_tokens_details.cached_tokens >= 0);
    assert.notEqual(second.id, first.id, 'each completion has its own id');
  });

  test('both chat models answer, each under its own name', async () => {
    const [a, b] = await Promise.all([
      client.chat.completions.create(greedy('chat-b', 'Count to three.')),
      client.chat.completions.create(greedy('chat-a', 'Count to three.')),
    ]);
    assertChatCompletion(a, 'chat-b');
    assertChatCompletion(b, 'chat-a');
  });

  test('content as an array of text parts equals the same content as a string', async () => {
    const asString = await client.chat.completions.create(greedy('chat-a', 'Hello there, friend'));
    const asParts = await client.chat.completions.create({
      ...greedy('chat-a', ''),
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello there, friend' }] }],
    });
    assert.equal(asParts.choices[0].message.content, asString.choices[0].message.content);
    assert.equal(asParts.usage.prompt_tokens, asString.usage.prompt_tokens);
  });

  test('system, user and assistant turns are accepted; the prompt grows with them', async () => {
    const short = await client.chat.completions.create(greedy('chat-b', 'And then?'));
    const long = await client.chat.completions.create({
      ...greedy('chat-b', ''),
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'Hi.' },
        { role: 'assistant', content: 'Hello.' },
        { role: 'user', content: 'And then?' },
      ],
    });
    assertChatCompletion(long, 'chat-b');
    assert.ok(long.usage.prompt_tokens > short.usage.prompt_tokens,
              `${long.usage.prompt_tokens} > ${short.usage.prompt_tokens}`);
  });

  test('max_completion_tokens caps the completion like max_tokens', async () => {
    const request = greedy('chat-a', 'Write a long story.');
    delete request.max_tokens;
    const completion = await client.chat.completions.create({ ...request,
                                                              max_completion_tokens: 3 });
    const choice = assertChatCompletion(completion, 'chat-a');
    assert.ok(completion.usage.completion_tokens <= 3, JSON.stringify(completion.usage));
    if (choice.finish_reason === 'length') assert.equal(completion.usage.completion_tokens, 3);
  });

  test('streaming, greedy: the deltas add up to the non-streaming text', async () => {
    const request = greedy('chat-a', 'Tell me about rivers.', { max_tokens: 16 });
    const whole = await client.chat.completions.create(request);
    const wholeChoice = assertChatCompletion(whole, 'chat-a');

    const chunks = await chunksOf(await client.chat.completions.create({
      ...request, stream: true, stream_options: { include_usage: true } }));
    assert.ok(chunks.length >= 2, `chunks: ${JSON.stringify(chunks)}`);
    const { id } = chunks[0];
    assert.equal(typeof id, 'string');
    for (const chunk of chunks) assertChunkShape(chunk, id, 'chat-a');

    const usageChunk = chunks.at(-1);
    assert.deepEqual(usageChunk.choices, [], 'the usage chunk has empty choices');
    assertUsage(usageChunk.usage, JSON.stringify(usageChunk));
    assert.deepEqual(counts(usageChunk.usage), counts(whole.usage));

    const content = chunks.slice(0, -1);
    for (const chunk of content) {
      assert.equal(chunk.choices.length, 1, JSON.stringify(chunk));
      assert.equal(chunk.choices[0].index, 0, JSON.stringify(chunk));
      assert.ok(chunk.usage === undefined || chunk.usage === null,
                `only the last chunk carries usage: ${JSON.stringify(chunk)}`);
    }
    assert.ok(content.some((c) => c.choices[0].delta.role === 'assistant'),
              'one delta (the first) names the role assistant');
    const text = content.map((c) => c.choices[0].delta.content ?? '').join('');
    assert.equal(text, wholeChoice.message.content);
    const finishes = content.map((c) => c.choices[0].finish_reason).filter((f) => f != null);
    assert.deepEqual(finishes, [wholeChoice.finish_reason],
                     'exactly one chunk has a finish_reason, the same as non-streaming');
    assert.ok(content.at(-1).choices[0].finish_reason != null,
              'the finish_reason comes on the last content chunk');
  });

  test('streaming without include_usage sends no usage', async () => {
    const chunks = await chunksOf(await client.chat.completions.create({
      ...greedy('chat-b', 'Hi'), stream: true }));
    assert.ok(chunks.length >= 1);
    for (const chunk of chunks) {
      assert.ok(chunk.usage === undefined || chunk.usage === null, JSON.stringify(chunk));
      assert.equal(chunk.choices.length, 1, JSON.stringify(chunk));
    }
    assert.ok(chunks.at(-1).choices[0].finish_reason != null);
  });

  test('stop (string and list) cuts the text before the stop sequence', async (t) => {
    const request = greedy('chat-a', 'Describe the sea.', { max_tokens: 24 });
    const full = (await client.chat.completions.create(request)).choices[0].message.content;
    // A stop sequence from the middle of the greedy text (its characters, whatever they are).
    const chars = Array.from(full);
    if (chars.length < 4) {
      t.skip(`the greedy text ${JSON.stringify(full)} is too short to cut`);
      return;
    }
    const mid = Math.floor(chars.length / 2);
    const stop = chars.slice(mid, mid + 2).join('');
    const expected = full.slice(0, full.indexOf(stop));

    for (const stopField of [stop, [stop], ['\u{10FFFF}never', stop]]) {
      const cut = await client.chat.completions.create({ ...request, stop: stopField });
      const choice = assertChatCompletion(cut, 'chat-a');
      assert.equal(choice.message.content, expected,
                   `stop ${JSON.stringify(stopField)} in ${JSON.stringify(full)}`);
      assert.equal(choice.finish_reason, 'stop');
    }
    const chunks = await chunksOf(await client.chat.completions.create({
      ...request, stop, stream: true }));
    const text = chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
    assert.equal(text, expected, 'streaming with stop never sends the stop sequence');
    assert.equal(chunks.at(-1).choices[0].finish_reason, 'stop');
  });

  test('seeded sampling (temperature 1) repeats with the same seed', async () => {
    const request = { ...greedy('chat-b', 'Pick a word.'), temperature: 1, top_p: 0.9, seed: 42,
                      max_tokens: 10 };
    const first = await client.chat.completions.create(request);
    const second = await client.chat.completions.create(request);
    assertChatCompletion(first, 'chat-b');
    assert.equal(second.choices[0].message.content, first.choices[0].message.content);
  });

  // The tiny model's sampled text is full of characters whose UTF-8 bytes span two or more
  // tokens (and of bytes that never make a character): the deltas must hold such bytes back
  // until the character is whole, so that they add up to exactly the non-streaming text.
  test('seeded sampling, streaming: the deltas add up to the non-streaming text', async () => {
    const mismatches = [];
    for (let seed = 0; seed < 40; ++seed) {
      const request = { ...greedy('chat-a', 'Hello'), temperature: 1, seed, max_tokens: 24 };
      const whole = (await client.chat.completions.create(request)).choices[0].message.content;
      const chunks = await chunksOf(await client.chat.completions.create({ ...request,
                                                                           stream: true }));
      const deltas = chunks.map((c) => c.choices[0]?.delta?.content ?? '');
      if (deltas.join('') !== whole) {
        mismatches.push(`seed ${seed}: whole ${JSON.stringify(whole)}, deltas ${
          JSON.stringify(deltas)}`);
      }
    }
    assert.deepEqual(mismatches, [], 'seeds whose streamed text differs from the whole text');
  });

  test('presence_penalty, frequency_penalty and user are accepted', async () => {
    const completion = await client.chat.completions.create({
      ...greedy('chat-a', 'Repeat yourself.'), presence_penalty: 0.5, frequency_penalty: 0.5,
      user: 'e2e-user' });
    assertChatCompletion(completion, 'chat-a');
  });

  test('logprobs with top_logprobs: one entry per token, the greedy token on top', async () => {
    const completion = await client.chat.completions.create({
      ...greedy('chat-a', 'Hello'), max_tokens: 6, logprobs: true, top_logprobs: 3 });
    const choice = assertChatCompletion(completion, 'chat-a');
    const where = JSON.stringify(choice.logprobs).slice(0, 1500);
    assert.ok(choice.logprobs && Array.isArray(choice.logprobs.content), where);
    assert.equal(choice.logprobs.content.length, completion.usage.completion_tokens, where);
    for (const entry of choice.logprobs.content) {
      assert.equal(typeof entry.token, 'string', where);
      assert.ok(typeof entry.logprob === 'number' && entry.logprob <= 1e-6, where);
      assert.ok(entry.bytes === null || Array.isArray(entry.bytes), where);
      assert.equal(entry.top_logprobs.length, 3, where);
      for (const top of entry.top_logprobs) {
        assert.equal(typeof top.token, 'string', where);
        assert.ok(top.logprob <= 1e-6, where);
        assert.ok(top.logprob <= entry.logprob + 1e-4,
                  `greedy picks the most likely token: ${JSON.stringify(entry)}`);
      }
      const tops = entry.top_logprobs.map((t) => t.logprob);
      assert.deepEqual(tops, [...tops].sort((x, y) => y - x), `top_logprobs sorted: ${where}`);
      assert.equal(entry.top_logprobs[0].token, entry.token, `greedy token first: ${where}`);
    }
    const joined = choice.logprobs.content.map((e) => e.token).join('');
    if (/^[\x20-\x7e\n]*$/.test(joined)) assert.equal(joined, choice.message.content);
  });

  test('without logprobs the choice has none', async () => {
    const completion = await client.chat.completions.create(greedy('chat-a', 'Hello'));
    assert.ok(completion.choices[0].logprobs == null, JSON.stringify(completion.choices[0]));
  });

  test('concurrent greedy requests give the text each gives alone', async () => {
    const requests = [];
    for (let i = 0; i < 16; ++i) {
      requests.push(greedy(i % 2 ? 'chat-a' : 'chat-b', `Prompt number ${i}: say something.`,
                           { max_tokens: 10 + (i % 5) }));
    }
    const alone = [];
    for (const request of requests) {
      alone.push((await client.chat.completions.create(request)).choices[0].message.content);
    }
    const together = await Promise.all(requests.map(async (request, i) => {
      if (i % 3 === 0) {
        const chunks = await chunksOf(await client.chat.completions.create({ ...request,
                                                                             stream: true }));
        return chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
      }
      return (await client.chat.completions.create(request)).choices[0].message.content;
    }));
    assert.deepEqual(together, alone);
  });

  test('an unknown model is the client\'s NotFoundError (404)', async () => {
    await assert.rejects(client.chat.completions.create(greedy('no-such-model', 'Hi')),
                         (error) => error instanceof OpenAI.NotFoundError && error.status === 404);
  });

  test('a wrong API key is the client\'s AuthenticationError (401)', async () => {
    const wrong = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'wrong', maxRetries: 0 });
    await assert.rejects(wrong.chat.completions.create(greedy('chat-a', 'Hi')),
                         (error) => error instanceof OpenAI.AuthenticationError &&
                                    error.status === 401 && error.code === 'invalid_api_key');
  });
});

describe('completions', () => {
  const request = { model: 'chat-b', prompt: 'Once upon a time', max_tokens: 12, temperature: 0 };

  function assertCompletion(completion, model) {
    const where = JSON.stringify(completion).slice(0, 800);
    assert.equal(completion.object, 'text_completion', where);
    assert.equal(typeof completion.id, 'string', where);
    assert.ok(Number.isInteger(completion.created), where);
    assert.equal(completion.model, model, where);
    assert.equal(completion.choices.length, 1, where);
    const [choice] = completion.choices;
    assert.equal(choice.index, 0, where);
    assert.equal(typeof choice.text, 'string', where);
    assert.ok(['stop', 'length'].includes(choice.finish_reason), where);
    assertUsage(completion.usage, where);
    return choice;
  }

  test('non-streaming: shape, usage; prompt as a string or an array of one string', async () => {
    const completion = await client.completions.create(request);
    const choice = assertCompletion(completion, 'chat-b');
    assert.ok(choice.logprobs == null, JSON.stringify(choice));
    const asArray = await client.completions.create({ ...request, prompt: [request.prompt] });
    assert.equal(assertCompletion(asArray, 'chat-b').text, choice.text);
  });

  test('the chat template wraps chat prompts, not completion prompts', async () => {
    const completion = await client.completions.create({ ...request, prompt: 'Hello' });
    const chat = await client.chat.completions.create(greedy('chat-b', 'Hello'));
    assert.ok(chat.usage.prompt_tokens > completion.usage.prompt_tokens,
              `chat ${chat.usage.prompt_tokens} > completion ${completion.usage.prompt_tokens}`);
  });

  test('streaming: the text pieces add up to the non-streaming text; include_usage', async () => {
    const whole = await client.completions.create(request);
    const wholeChoice = assertCompletion(whole, 'chat-b');
    const chunks = await chunksOf(await client.completions.create({
      ...request, stream: true, stream_options: { include_usage: true } }));
    assert.ok(chunks.length >= 2);
    const { id } = chunks[0];
    for (const chunk of chunks) {
      assert.equal(chunk.object, 'text_completion', JSON.stringify(chunk));
      assert.equal(chunk.id, id, JSON.stringify(chunk));
      assert.equal(chunk.model, 'chat-b', JSON.stringify(chunk));
    }
    const usageChunk = chunks.at(-1);
    assert.deepEqual(usageChunk.choices, []);
    assert.deepEqual(counts(usageChunk.usage), counts(whole.usage));
    const content = chunks.slice(0, -1);
    const text = content.map((c) => c.choices[0].text).join('');
    assert.equal(text, wholeChoice.text);
    const finishes = content.map((c) => c.choices[0].finish_reason).filter((f) => f != null);
    assert.deepEqual(finishes, [wholeChoice.finish_reason]);
  });

  test('seeded sampling, streaming: the text pieces add up to the non-streaming text',
       async () => {
    const mismatches = [];
    for (let seed = 0; seed < 40; ++seed) {
      const sampled = { ...request, temperature: 1, seed, max_tokens: 24 };
      const whole = (await client.completions.create(sampled)).choices[0].text;
      const chunks = await chunksOf(await client.completions.create({ ...sampled,
                                                                      stream: true }));
      const pieces = chunks.map((c) => c.choices[0]?.text ?? '');
      if (pieces.join('') !== whole) {
        mismatches.push(`seed ${seed}: whole ${JSON.stringify(whole)}, pieces ${
          JSON.stringify(pieces)}`);
      }
    }
    assert.deepEqual(mismatches, [], 'seeds whose streamed text differs from the whole text');
  });

  test('logprobs: n gives tokens, token_logprobs, top_logprobs, text_offset', async () => {
    const completion = await client.completions.create({ ...request, max_tokens: 5,
                                                         logprobs: 2 });
    const choice = assertCompletion(completion, 'chat-b');
    const { logprobs } = choice;
    const where = JSON.stringify(logprobs).slice(0, 1500);
    assert.ok(logprobs && typeof logprobs === 'object', where);
    const n = completion.usage.completion_tokens;
    assert.equal(logprobs.tokens.length, n, where);
    assert.equal(logprobs.token_logprobs.length, n, where);
    assert.equal(logprobs.top_logprobs.length, n, where);
    assert.equal(logprobs.text_offset.length, n, where);
    for (let i = 0; i < n; ++i) {
      assert.equal(typeof logprobs.tokens[i], 'string', where);
      assert.ok(logprobs.token_logprobs[i] <= 1e-6, where);
      const tops = Object.values(logprobs.top_logprobs[i]);
      assert.ok(tops.length >= 1 && tops.length <= 2, where);
      assert.ok(Math.max(...tops) <= logprobs.token_logprobs[i] + 1e-4, where);
      if (i > 0) assert.ok(logprobs.text_offset[i] >= logprobs.text_offset[i - 1], where);
    }
  });
});

describe('embeddings', () => {
  const hidden = () => JSON.parse(fs.readFileSync(path.join(models.embed, 'config.json'), 'utf8'))
    .hidden_size;

  function assertEmbeddings(response, count) {
    const where = JSON.stringify(response).slice(0, 500);
    assert.equal(response.object, 'list', where);
    assert.equal(response.model, 'embed', where);
    assert.equal(response.data.length, count, where);
    response.data.forEach((item, i) => {
      assert.equal(item.object, 'embedding', where);
      assert.equal(item.index, i, where);
    });
    assert.ok(Number.isInteger(response.usage.prompt_tokens) && response.usage.prompt_tokens > 0,
              where);
    assert.equal(response.usage.total_tokens, response.usage.prompt_tokens, where);
  }

  function assertClose(actual, expected, where) {
    assert.equal(actual.length, expected.length, `${where}: length`);
    for (let i = 0; i < expected.length; ++i) {
      const tolerance = 1e-6 * Math.max(1, Math.abs(expected[i]));
      assert.ok(Math.abs(actual[i] - expected[i]) <= tolerance,
                `${where}: [${i}] ${actual[i]} vs ${expected[i]}`);
    }
  }

  test('float: one string, a vector of hidden_size finite numbers', async () => {
    const response = await client.embeddings.create({ model: 'embed', input: 'hello world',
                                                      encoding_format: 'float' });
    assertEmbeddings(response, 1);
    const vector = response.data[0].embedding;
    assert.ok(Array.isArray(vector));
    assert.equal(vector.length, hidden());
    assert.ok(vector.every((x) => typeof x === 'number' && Number.isFinite(x)));
    assert.ok(vector.some((x) => x !== 0));
  });

  test('the client default (base64) decodes to the float vectors', async () => {
    const input = ['hello world', 'a second, longer input for the embedding model'];
    const floats = await client.embeddings.create({ model: 'embed', input,
                                                    encoding_format: 'float' });
    const decoded = await client.embeddings.create({ model: 'embed', input });
    assertEmbeddings(floats, 2);
    assertEmbeddings(decoded, 2);
    for (let i = 0; i < 2; ++i) {
      assert.equal(decoded.data[i].embedding.length, hidden());
      assertClose(Array.from(decoded.data[i].embedding), floats.data[i].embedding, `input ${i}`);
    }
    assert.notDeepEqual(floats.data[0].embedding, floats.data[1].embedding);
  });

  test('a list of strings embeds each as it embeds alone', async () => {
    const input = ['first', 'second text', 'third and last text'];
    const batch = await client.embeddings.create({ model: 'embed', input,
                                                   encoding_format: 'float' });
    assertEmbeddings(batch, 3);
    for (let i = 0; i < input.length; ++i) {
      const alone = await client.embeddings.create({ model: 'embed', input: input[i],
                                                     encoding_format: 'float' });
      assertClose(batch.data[i].embedding, alone.data[0].embedding, `input ${i}`);
    }
  });

  test('token ids: a list, and a list of lists', async () => {
    const one = await client.embeddings.create({ model: 'embed', input: [1, 2, 3, 4],
                                                 encoding_format: 'float' });
    assertEmbeddings(one, 1);
    assert.equal(one.usage.prompt_tokens, 4);
    assert.equal(one.data[0].embedding.length, hidden());
    const many = await client.embeddings.create({ model: 'embed', input: [[1, 2, 3, 4], [5, 6]],
                                                  encoding_format: 'float' });
    assertEmbeddings(many, 2);
    assert.equal(many.usage.prompt_tokens, 6);
    assertClose(many.data[0].embedding, one.data[0].embedding, 'the same ids');
  });

  test('a chat model name is not an embedding model', async () => {
    await assert.rejects(client.embeddings.create({ model: 'chat-a', input: 'x' }),
                         (error) => error instanceof OpenAI.APIError &&
                                    [400, 404].includes(error.status));
  });
});
