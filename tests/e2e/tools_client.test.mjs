// Tool calling and structured outputs through the official openai client (issue 49), with
// the default chat model of models/ (trained on prose; it never calls a tool by itself, so
// the calls come from tool_choice required or a named function, which the grammar holds to
// the tools' schemas): a tool round trip whole and streamed, json_schema answers judged by
// Python's jsonschema (an independent validator), and the 400s that name the field.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import OpenAI from 'openai';

import { API_KEY, schemaViolation, startServer, stopServer } from './helpers.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

const weather = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string', maxLength: 20 }, unit: { enum: ['c', 'f'] } },
      required: ['city', 'unit'],
    },
  },
};
const add = {
  type: 'function',
  function: {
    name: 'add',
    parameters: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } },
                  required: ['a', 'b'] },
  },
};


let server;
let client;

before(async () => {
  server = await startServer(['--model', `chat=${path.join(root, 'models', 'chat-small')}`,
                              '--api-key', API_KEY]);
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: API_KEY, maxRetries: 0,
                        timeout: 60_000 });
});

after(async () => {
  if (server) await stopServer(server);
});

const question = [{ role: 'user', content: 'What is the weather in Oslo?' }];

describe('tool calls', () => {
  test('a round trip: a call, its result, then an answer', async () => {
    const first = await client.chat.completions.create({
      model: 'chat', messages: question, tools: [weather, add], tool_choice: 'required',
      parallel_tool_calls: false, temperature: 1, seed: 7, max_tokens: 200,
    });
    const [choice] = first.choices;
    const where = JSON.stringify(first);
    assert.equal(choice.finish_reason, 'tool_calls', where);
    assert.equal(choice.message.tool_calls.length, 1, where);
    const [call] = choice.message.tool_calls;
    assert.equal(call.type, 'function');
    assert.match(call.id, /^call_/);
    const tool = { get_weather: weather, add }[call.function.name];
    assert.ok(tool, `a call of an offered tool: ${where}`);
    assert.equal(schemaViolation([{ schema: tool.function.parameters, text: call.function.arguments }]),
                 null);

    const answer = await client.chat.completions.create({
      model: 'chat', tools: [weather, add], tool_choice: 'none', temperature: 0, max_tokens: 12,
      messages: [...question, choice.message,
                 { role: 'tool', tool_call_id: call.id, content: '{"temperature": -3}' }],
    });
    assert.ok(['stop', 'length'].includes(answer.choices[0].finish_reason));
    assert.equal(typeof answer.choices[0].message.content, 'string');
    assert.equal(answer.choices[0].message.tool_calls, undefined);
    assert.ok(answer.usage.prompt_tokens > first.usage.prompt_tokens,
              'the call and its result are in the prompt');
  });

  test('streamed: the deltas add up to the same calls as the whole answer', async () => {
    const request = {
      model: 'chat', messages: question, tools: [weather, add], tool_choice: 'required',
      temperature: 1, seed: 11, max_tokens: 120,
    };
    const whole = await client.chat.completions.create(request);
    const stream = await client.chat.completions.create({ ...request, stream: true });
    const calls = [];
    let finish = null;
    let content = '';
    for await (const chunk of stream) {
      const [choice] = chunk.choices;
      if (!choice) continue;
      content += choice.delta.content ?? '';
      for (const piece of choice.delta.tool_calls ?? []) {
        if (piece.id !== undefined) {
          assert.equal(calls.length, piece.index, 'a new call takes the next index');
          calls.push({ id: piece.id, name: piece.function.name, arguments: '' });
        }
        calls[piece.index].arguments += piece.function.arguments ?? '';
      }
      if (choice.finish_reason) finish = choice.finish_reason;
    }
    const expected = whole.choices[0].message.tool_calls ?? [];
    assert.equal(finish, whole.choices[0].finish_reason);
    assert.equal(content, whole.choices[0].message.content ?? '');
    assert.deepEqual(calls.map(({ name, arguments: a }) => ({ name, a })),
                     expected.map((c) => ({ name: c.function.name, a: c.function.arguments })));
    if (finish === 'tool_calls') assert.ok(calls.length >= 1);
  });

  test('a named function is the one called', async () => {
    const completion = await client.chat.completions.create({
      model: 'chat', messages: question, tools: [weather, add],
      tool_choice: { type: 'function', function: { name: 'add' } }, temperature: 1, seed: 3,
      max_tokens: 200,
    });
    const calls = completion.choices[0].message.tool_calls;
    assert.ok(calls.length >= 1, JSON.stringify(completion));
    for (const call of calls) assert.equal(call.function.name, 'add');
    assert.equal(schemaViolation(calls.map((c) => ({ schema: add.function.parameters,
                                             text: c.function.arguments }))), null);
  });
});

describe('structured outputs', () => {
  const schema = {
    type: 'object',
    properties: {
      title: { type: 'string', maxLength: 30 },
      year: { type: 'integer', minimum: 1500, maximum: 2100 },
      tags: { type: 'array', items: { enum: ['old', 'new'] }, maxItems: 3 },
    },
    required: ['title', 'year', 'tags'],
    additionalProperties: false,
  };

  test('json_schema answers at temperature 1 are all valid and stop', async () => {
    const answers = await Promise.all([1, 2, 3, 4, 5, 6, 7, 8].map((seed) =>
      client.chat.completions.create({
        model: 'chat', messages: [{ role: 'user', content: 'Describe a book.' }],
        response_format: { type: 'json_schema', json_schema: { name: 'book', schema, strict: true } },
        temperature: 1, seed, max_tokens: 300,
      })));
    for (const a of answers) assert.equal(a.choices[0].finish_reason, 'stop', JSON.stringify(a));
    assert.equal(schemaViolation(answers.map((a) => ({ schema, text: a.choices[0].message.content }))),
                 null);
  });

  test('json_object answers are JSON objects', async () => {
    // Any object: its keys and strings have no bound, and this model, trained on prose, writes
    // them on to max_tokens; a logit_bias towards '"' and '}' lets it end.
    const ids = async (text) => {
      const res = await fetch(`${server.url}/tokenize`, {
        method: 'POST', headers: { 'Content-Type': 'application/json',
                                   Authorization: `Bearer ${API_KEY}` },
        body: JSON.stringify({ model: 'chat', prompt: text }) });
      return (await res.json()).tokens;
    };
    const bias = {};
    for (const id of [...await ids('"'), ...await ids('}')]) bias[id] = 8;
    const answers = await Promise.all([1, 2, 3, 4, 5, 6].map((seed) =>
      client.chat.completions.create({
        model: 'chat', messages: [{ role: 'user', content: 'JSON please.' }],
        response_format: { type: 'json_object' }, temperature: 1, seed, max_tokens: 300,
        logit_bias: bias,
      })));
    for (const a of answers) assert.equal(a.choices[0].finish_reason, 'stop', JSON.stringify(a));
    assert.equal(schemaViolation(answers.map((a) => ({ schema: { type: 'object' },
                                               text: a.choices[0].message.content }))), null);
  });
});

describe('mistakes are 400s naming the field', () => {
  const refused = async (body, param) => {
    await assert.rejects(client.chat.completions.create({ model: 'chat', max_tokens: 4, ...body }),
                         (e) => {
                           assert.equal(e.status, 400, String(e));
                           assert.equal(e.param, param, String(e));
                           return true;
                         });
  };
  test('a schema baton cannot compile names its keyword', async () => {
    await refused({ messages: question, tools: [{ type: 'function', function: { name: 'f',
      parameters: { type: 'object', properties: { n: { type: 'integer', multipleOf: 3 } } } } }],
                    tool_choice: 'required' }, 'tools[0].function.parameters');
    await refused({ messages: question, response_format: { type: 'json_schema',
      json_schema: { name: 'x', schema: { not: { type: 'string' } } } } },
                  'response_format.json_schema.schema');
  });
  test('a tool without a name, an unknown function, an unanswered id', async () => {
    await refused({ messages: question, tools: [{ type: 'function', function: {} }] },
                  'tools[0].function.name');
    await refused({ messages: question, tools: [weather],
                    tool_choice: { type: 'function', function: { name: 'nope' } } },
                  'tool_choice.function.name');
    await refused({ messages: [...question,
                               { role: 'tool', tool_call_id: 'call_x', content: 'r' }] },
                  'messages[1].tool_call_id');
  });
});
