// `baton serve` and `baton generate` on model directories as published models ship them:
// a Llama model with a SentencePiece-style tokenizer.json (Llama 2, Mistral v0.1-v0.3,
// TinyLlama), checked against the ids and text of Hugging Face's tokenizers.js in
// tests/data/tokenizers (scripts/make_sentencepiece_reference.py).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import {
  API_KEY, batonBinary, makeModel, post, sseData, startServer, stopServer, tempDir,
} from './helpers.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const tokenizers = path.join(here, '..', 'data', 'tokenizers');

// A Mistral v0.3-style template: BOS, [INST] turns, the EOS after each answer.
const MISTRAL_TEMPLATE =
  "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}" +
  "{{ '[INST] ' + message['content'] + '[/INST]' }}{% else %}" +
  "{{ message['content'] + eos_token }}{% endif %}{% endfor %}";

function editJson(file, edit) {
  fs.writeFileSync(file, JSON.stringify(edit(JSON.parse(fs.readFileSync(file, 'utf8'))), null, 1));
}

// A random-weight Llama whose tokenizer files are `style`'s: <unk> 0, <s> 1, </s> 2.
function sentencePieceModel(dir, style) {
  makeModel(dir, { arch: 'llama', seed: 7 });
  fs.copyFileSync(path.join(tokenizers, style, 'tokenizer.json'), path.join(dir, 'tokenizer.json'));
  fs.writeFileSync(path.join(dir, 'tokenizer_config.json'), JSON.stringify({
    bos_token: '<s>', eos_token: '</s>', unk_token: '<unk>', chat_template: MISTRAL_TEMPLATE,
  }));
  for (const name of ['config.json', 'generation_config.json']) {
    editJson(path.join(dir, name), (c) => ({ ...c, bos_token_id: 1, eos_token_id: 2 }));
  }
  return dir;
}

const reference = (style) =>
  JSON.parse(fs.readFileSync(path.join(tokenizers, style, 'reference.json'), 'utf8'));

describe('a SentencePiece-style tokenizer.json', () => {
  let root;
  let server;
  before(async () => {
    root = tempDir();
    server = await startServer([
      '--model', `llama2=${sentencePieceModel(path.join(root, 'llama2'), 'llama2_style')}`,
      '--model', `mistral=${sentencePieceModel(path.join(root, 'mistral'), 'mistral_style')}`,
      '--api-key', API_KEY]);
  });
  after(async () => {
    if (server) await stopServer(server);
  });

  for (const style of ['llama2', 'mistral']) {
    test(`${style}: /tokenize and /detokenize give tokenizers.js's ids and text`, async () => {
      for (const entry of reference(`${style}_style`).filter((e) => e.text !== '')) {
        const tokenized = await post(`${server.url}/tokenize`, { model: style, prompt: entry.text });
        assert.equal(tokenized.status, 200);
        assert.deepEqual(tokenized.json.tokens, entry.ids_with_special, entry.text);
        const text = await post(`${server.url}/detokenize`, { model: style, tokens: entry.ids });
        assert.equal(text.json.prompt, entry.decoded);
      }
    });
  }

  test('a completion counts the BOS and streams what it returns whole', async () => {
    const body = { model: 'llama2', prompt: 'Hello, world!', max_tokens: 12, temperature: 0 };
    const whole = await post(`${server.url}/v1/completions`, body);
    assert.equal(whole.status, 200);
    const json = whole.json;
    const expected = reference('llama2_style').find((e) => e.text === 'Hello, world!');
    assert.equal(json.usage.prompt_tokens, expected.ids_with_special.length);
    const streamed = await post(`${server.url}/v1/completions`, { ...body, stream: true });
    const text = sseData(streamed.text).filter((d) => d !== '[DONE]')
      .map((d) => JSON.parse(d).choices[0]?.text ?? '').join('');
    assert.equal(text, json.choices[0].text);
  });

  test('a chat renders the [INST] template and answers', async () => {
    const res = await post(`${server.url}/v1/chat/completions`, {
      model: 'mistral', messages: [{ role: 'user', content: 'Hi there' }], max_tokens: 4 });
    assert.equal(res.status, 200);
    const json = res.json;
    // "<s>" + "[INST] Hi there[/INST]": the BOS and the text, no second BOS.
    const tokenized = await post(`${server.url}/tokenize`, {
      model: 'mistral', messages: [{ role: 'user', content: 'Hi there' }] });
    const { tokens } = tokenized.json;
    assert.equal(tokens[0], 1);
    assert.notEqual(tokens[1], 1);
    assert.equal(json.usage.prompt_tokens, tokens.length);
  });
});

test('baton generate and baton embed run on a SentencePiece-style model', () => {
  const dir = sentencePieceModel(path.join(tempDir(), 'm'), 'llama2_style');
  const generated = spawnSync(batonBinary(), ['generate', '--model', dir, '--prompt', 'Hello',
                                              '--max-tokens', '4'], { encoding: 'utf8' });
  assert.equal(generated.status, 0, generated.stderr);
  const embedded = spawnSync(batonBinary(), ['embed', '--model', dir, '--text', 'Hello, world!',
                                             '--json'], { encoding: 'utf8' });
  assert.equal(embedded.status, 0, embedded.stderr);
  // The text with Llama's BOS, as sentence-transformers encodes it.
  const expected = reference('llama2_style').find((e) => e.text === 'Hello, world!');
  assert.equal(JSON.parse(embedded.stdout).usage.prompt_tokens, expected.ids_with_special.length);
});

describe("a model's own Jinja chat template (Gemma 2's, which no built-in family renders)", () => {
  let server;
  before(async () => {
    const dir = makeModel(path.join(tempDir(), 'gemma'), { seed: 3 });
    fs.copyFileSync(path.join(here, '..', 'data', 'chat_templates', 'gemma2.jinja'),
                    path.join(dir, 'chat_template.jinja'));
    editJson(path.join(dir, 'tokenizer_config.json'),
             (c) => ({ ...c, bos_token: '<bos>', chat_template: undefined }));
    server = await startServer(['--model', `gemma=${dir}`, '--api-key', API_KEY]);
  });
  after(async () => {
    if (server) await stopServer(server);
  });

  test('a chat is the template rendered, token for token', async () => {
    const messages = [{ role: 'user', content: 'Hi there ' }, { role: 'assistant', content: 'Hello.' },
                      { role: 'user', content: 'Bye' }];
    const res = await post(`${server.url}/v1/chat/completions`, { model: 'gemma', messages,
                                                                  max_tokens: 3 });
    assert.equal(res.status, 200, res.text);
    const { tokens } = (await post(`${server.url}/tokenize`, { model: 'gemma', messages })).json;
    assert.equal(res.json.usage.prompt_tokens, tokens.length);
    const text = (await post(`${server.url}/detokenize`, { model: 'gemma', tokens })).json.prompt;
    assert.equal(text, '<bos><start_of_turn>user\nHi there<end_of_turn>\n' +
                       '<start_of_turn>model\nHello.<end_of_turn>\n' +
                       '<start_of_turn>user\nBye<end_of_turn>\n<start_of_turn>model\n');
  });

  test('a prefill (Anthropic, vLLM\'s continue_final_message) continues the reply', async () => {
    const messages = [{ role: 'user', content: 'Hi' }, { role: 'assistant', content: 'Sure, ' }];
    // The template trims the reply; the prompt is cut right after it, as transformers cuts it.
    const expected = '<bos><start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\nSure,';
    const { count } = (await post(`${server.url}/tokenize`, { model: 'gemma', prompt: expected })).json;
    const anthropic = await post(`${server.url}/v1/messages`, { model: 'gemma', max_tokens: 3, messages });
    assert.equal(anthropic.status, 200, anthropic.text);
    const usage = anthropic.json.usage;  // Anthropic's input_tokens leave out the cached ones
    assert.equal(usage.input_tokens + usage.cache_read_input_tokens, count);
    const openai = await post(`${server.url}/v1/chat/completions`, {
      model: 'gemma', max_tokens: 3, messages, add_generation_prompt: false,
      continue_final_message: true });
    assert.equal(openai.status, 200, openai.text);
    assert.equal(openai.json.usage.prompt_tokens, count);
  });

  test("what the template raises is a 400 with its message", async () => {
    const res = await post(`${server.url}/v1/chat/completions`, {
      model: 'gemma', messages: [{ role: 'system', content: 'x' }, { role: 'user', content: 'y' }] });
    assert.equal(res.status, 400, res.text);
    assert.match(res.json.error.message, /System role not supported/);
  });
});
