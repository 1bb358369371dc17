// OpenAI's logit_bias through the official openai npm client against a real `baton serve`:
// -100 on the token greedy decoding picks first makes it pick another (and the log-probs
// reported are those of the biased distribution), +100 on a token makes every generated
// token that token, and a bad map is a 400 naming logit_bias.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import OpenAI from 'openai';

import { API_KEY, makeModel, post, startServer, stopServer, tempDir } from './helpers.mjs';

let server;
let client;

before(async () => {
  const model = makeModel(path.join(tempDir(), 'chat'), { seed: 1 });
  server = await startServer(['--model', `chat=${model}`, '--api-key', API_KEY]);
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: API_KEY, maxRetries: 0,
                        timeout: 60_000 });
});

after(async () => {
  if (server) await stopServer(server);
});

// The one token id of `text` in the served model's vocabulary (vLLM's /tokenize).
async function tokenOf(text) {
  const res = await post(`${server.url}/tokenize`, { model: 'chat', prompt: text });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.json.tokens.length, 1, `${JSON.stringify(text)} is one token: ${res.text}`);
  return res.json.tokens[0];
}

const chat = (extra) => ({
  model: 'chat',
  messages: [{ role: 'user', content: 'Say hello.' }],
  max_tokens: 4,
  temperature: 0,
  logprobs: true,
  top_logprobs: 5,
  ...extra,
});

describe('logit_bias', () => {
  test('-100 on the greedy first token makes greedy decoding pick another', async () => {
    const plain = await client.chat.completions.create(chat());
    const [first] = plain.choices[0].logprobs.content;
    const text = Buffer.from(first.bytes).toString('utf8');
    assert.ok(text.length > 0, `the first token has text: ${JSON.stringify(first)}`);
    const banned = await tokenOf(text);

    const biased = await client.chat.completions.create(chat({ logit_bias: { [banned]: -100 } }));
    const content = biased.choices[0].logprobs.content;
    assert.notDeepEqual(content[0].bytes, first.bytes, JSON.stringify(content[0]));
    for (const token of content) {
      assert.notDeepEqual(token.bytes, first.bytes, 'the banned token never comes');
      assert.ok(!token.top_logprobs.some((t) => t.token === first.token),
                `the banned token is not among the likely ones: ${JSON.stringify(token)}`);
    }
    // Greedy now picks the runner-up, whose log-prob is that of the biased distribution:
    // the banned token's mass is gone, so log p' = log p - log(1 - p_banned).
    const runnerUp = first.top_logprobs[1];
    assert.deepEqual(content[0].bytes, runnerUp.bytes);
    const expected = runnerUp.logprob - Math.log1p(-Math.exp(first.logprob));
    assert.ok(Math.abs(content[0].logprob - expected) < 1e-4,
              `logprob ${content[0].logprob}, expected ${expected}`);
  });

  test('+100 on a token makes every generated token that token, greedy or sampled',
       async () => {
    const forced = await tokenOf('a');
    for (const temperature of [0, 1]) {
      const completion = await client.completions.create({
        model: 'chat', prompt: 'Hello there', max_tokens: 8, temperature, seed: 3,
        logprobs: 1, logit_bias: { [forced]: 100 },
      });
      const [choice] = completion.choices;
      assert.equal(choice.text, 'a'.repeat(8), JSON.stringify(choice));
      assert.equal(completion.usage.completion_tokens, 8);
      assert.deepEqual(choice.logprobs.tokens, Array(8).fill('a'));
      for (const logprob of choice.logprobs.token_logprobs) assert.ok(logprob > -1e-3, logprob);
    }
  });

  test('a bad map is a 400 naming logit_bias and the bad key or value', async () => {
    for (const [bias, message] of [[{ 1024: 1 }, /"1024".*outside the vocabulary/],
                                   [{ x: 1 }, /"x"/],
                                   [{ 5: 150 }, /\[-100, 100\].*150/],
                                   [{ 5: 'ban' }, /must be a number/]]) {
      await assert.rejects(client.chat.completions.create(chat({ logit_bias: bias })),
                           (error) => error instanceof OpenAI.BadRequestError &&
                                      error.param === 'logit_bias' &&
                                      message.test(error.message),
                           JSON.stringify(bias));
    }
    const tooMany = Object.fromEntries(Array.from({ length: 301 }, (_, i) => [i, -1]));
    await assert.rejects(client.chat.completions.create(chat({ logit_bias: tooMany })),
                         (error) => error instanceof OpenAI.BadRequestError &&
                                    error.param === 'logit_bias' && /at most 300/.test(error.message));
  });
});
