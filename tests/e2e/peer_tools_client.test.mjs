// Tool use and structured outputs through the official @anthropic-ai/sdk (Messages) and
// openai (Responses) clients (issue 49), with the default chat model of models/ (trained on
// prose; it never calls a tool by itself, so the calls come from tool_choice any/required or
// a named tool, which the grammar holds to the tools' schemas): a tool round trip, streams
// whose fragments add up to the whole answer's calls, JSON answers judged by Python's
// jsonschema (an independent validator), and the 400s that name each API's field.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import Anthropic, { BadRequestError } from '@anthropic-ai/sdk';
import OpenAI from 'openai';

import { API_KEY, schemaViolation, startServer, stopServer } from './helpers.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

const weatherSchema = {
  type: 'object',
  properties: { city: { type: 'string', maxLength: 20 }, unit: { enum: ['c', 'f'] } },
  required: ['city', 'unit'],
};
const addSchema = {
  type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } },
  required: ['a', 'b'],
};
const schemas = { get_weather: weatherSchema, add: addSchema };


let server;
let anthropic;
let openai;

before(async () => {
  server = await startServer(['--model', `chat=${path.join(root, 'models', 'chat-small')}`,
                              '--api-key', API_KEY]);
  anthropic = new Anthropic({ baseURL: server.url, apiKey: API_KEY, maxRetries: 0,
                              timeout: 60_000 });
  openai = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: API_KEY, maxRetries: 0,
                        timeout: 60_000 });
});

after(async () => {
  if (server) await stopServer(server);
});

const question = 'What is the weather in Oslo?';

describe('Anthropic Messages', () => {
  const tools = [
    { name: 'get_weather', description: 'The weather in a city', input_schema: weatherSchema },
    { name: 'add', input_schema: addSchema },
  ];
  const ask = [{ role: 'user', content: question }];

  test('a round trip: a tool_use block, its tool_result, then an answer', async () => {
    const first = await anthropic.messages.create({
      model: 'chat', max_tokens: 200, temperature: 1, messages: ask, tools,
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
    });
    const where = JSON.stringify(first);
    assert.equal(first.stop_reason, 'tool_use', where);
    const calls = first.content.filter((block) => block.type === 'tool_use');
    assert.equal(calls.length, 1, where);
    const [call] = calls;
    assert.match(call.id, /^toolu_/);
    assert.ok(schemas[call.name], `a call of an offered tool: ${where}`);
    assert.equal(schemaViolation([{ schema: schemas[call.name], text: JSON.stringify(call.input) }]), null);

    const answer = await anthropic.messages.create({
      model: 'chat', max_tokens: 12, temperature: 0, tools, tool_choice: { type: 'none' },
      messages: [...ask, { role: 'assistant', content: first.content },
                 { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id,
                                             content: '{"temperature": -3}' }] }],
    });
    assert.ok(['end_turn', 'max_tokens'].includes(answer.stop_reason), JSON.stringify(answer));
    assert.ok(answer.content.every((block) => block.type === 'text'));
    const prompt = (usage) => usage.input_tokens + (usage.cache_read_input_tokens ?? 0);
    assert.ok(prompt(answer.usage) > prompt(first.usage), 'the call and its result are in the prompt');
  });

  test('streamed: input_json_delta fragments add up to the whole answer\'s inputs', async () => {
    const request = { model: 'chat', max_tokens: 120, temperature: 0, messages: ask, tools,
                      tool_choice: { type: 'tool', name: 'get_weather',
                                     disable_parallel_tool_use: true } };
    const whole = await anthropic.messages.create(request);
    const stream = await anthropic.messages.create({ ...request, stream: true });
    const blocks = [];
    let stop = null;
    for await (const event of stream) {
      if (event.type === 'content_block_start') {
        assert.equal(event.index, blocks.length, 'a new block takes the next index');
        blocks.push({ ...event.content_block, partial: '' });
      } else if (event.type === 'content_block_delta') {
        const block = blocks[event.index];
        if (event.delta.type === 'input_json_delta') block.partial += event.delta.partial_json;
        else block.text += event.delta.text;
      } else if (event.type === 'message_delta') {
        stop = event.delta.stop_reason;
      }
    }
    assert.equal(stop, whole.stop_reason);
    const shape = (b) => (b.type === 'text' ? { text: b.text }
                                            : { name: b.name, input: b.input });
    assert.deepEqual(blocks.map((b) => (b.type === 'text' ? shape(b)
                                                           : { name: b.name,
                                                               input: JSON.parse(b.partial) })),
                     whole.content.map(shape));
    const calls = whole.content.filter((block) => block.type === 'tool_use');
    assert.ok(calls.length >= 1, JSON.stringify(whole));
    for (const call of calls) assert.equal(call.name, 'get_weather');
    // The SDK's own accumulation gives the same inputs.
    const final = await anthropic.messages.stream(request).finalMessage();
    assert.deepEqual(final.content.map(shape), whole.content.map(shape));
  });

  test('output_config.format: a JSON answer valid against its schema', async () => {
    const schema = { type: 'object', properties: { city: { enum: ['Oslo', 'Paris'] } },
                     required: ['city'], additionalProperties: false };
    const message = await anthropic.messages.create({
      model: 'chat', max_tokens: 100, temperature: 1, messages: ask,
      output_config: { format: { type: 'json_schema', schema } },
    });
    assert.equal(message.stop_reason, 'end_turn', JSON.stringify(message));
    assert.equal(schemaViolation([{ schema, text: message.content[0].text }]), null);
  });

  test('mistakes are 400s naming Anthropic\'s field', async () => {
    const refused = async (body, field) => {
      await assert.rejects(
        anthropic.messages.create({ model: 'chat', max_tokens: 4, messages: ask, ...body }),
        (e) => e instanceof BadRequestError && e.message.includes(field) || assert.fail(String(e)));
    };
    await refused({ tools: [{ type: 'web_search_20250305', name: 'web_search' }] }, 'tools[0].type');
    await refused({ tools: [{ input_schema: { type: 'object' } }] }, 'tools[0].name');
    await refused({ tools, tool_choice: { type: 'tool', name: 'nope' } }, 'tool_choice.name');
    await refused({ tools: [{ name: 'f', input_schema: { type: 'object', properties: {
      n: { type: 'integer', multipleOf: 3 } } } }], tool_choice: { type: 'any' } },
                  'tools[0].input_schema');
    await refused({ tools, messages: [...ask, { role: 'assistant', content: 'ok' },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_x', content: 'r' }] }] },
                  'messages[2].content[0].tool_use_id');
  });
});

describe('OpenAI Responses', () => {
  const tools = [
    { type: 'function', name: 'get_weather', description: 'The weather in a city',
      parameters: weatherSchema, strict: false },
    { type: 'function', name: 'add', parameters: addSchema, strict: false },
  ];

  test('a round trip: a function_call item, its output, then an answer', async () => {
    const first = await openai.responses.create({
      model: 'chat', input: question, tools, tool_choice: 'required', parallel_tool_calls: false,
      temperature: 1, max_output_tokens: 200,
    });
    const where = JSON.stringify(first);
    assert.equal(first.status, 'completed', where);
    const calls = first.output.filter((item) => item.type === 'function_call');
    assert.equal(calls.length, 1, where);
    const [call] = calls;
    assert.match(call.call_id, /^call_/);
    assert.match(call.id, /^fc_/);
    assert.ok(schemas[call.name], `a call of an offered tool: ${where}`);
    assert.equal(schemaViolation([{ schema: schemas[call.name], text: call.arguments }]), null);
    assert.equal(first.parallel_tool_calls, false);
    assert.deepEqual(first.tools.map((t) => t.name), ['get_weather', 'add']);

    const answer = await openai.responses.create({
      model: 'chat', tools, tool_choice: 'none', temperature: 0, max_output_tokens: 12,
      input: [{ role: 'user', content: question }, ...first.output,
              { type: 'function_call_output', call_id: call.call_id, output: '{"t": -3}' }],
    });
    assert.ok(answer.output.every((item) => item.type === 'message'), JSON.stringify(answer));
    assert.equal(typeof answer.output_text, 'string');
    assert.ok(answer.usage.input_tokens > first.usage.input_tokens,
              'the call and its output are in the prompt');
  });

  test('streamed: arguments deltas add up to the whole answer\'s calls', async () => {
    const request = { model: 'chat', input: question, tools, temperature: 0,
                      parallel_tool_calls: false, max_output_tokens: 120,
                      tool_choice: { type: 'function', name: 'get_weather' } };
    const whole = await openai.responses.create(request);
    const stream = await openai.responses.create({ ...request, stream: true });
    const items = [];
    let last = null;
    for await (const event of stream) {
      if (event.type === 'response.output_item.added') {
        assert.equal(event.output_index, items.length, 'a new item takes the next index');
        items.push({ ...event.item });
      } else if (event.type === 'response.function_call_arguments.delta') {
        items[event.output_index].arguments += event.delta;
      } else if (event.type === 'response.completed') {
        last = event.response;
      }
    }
    const calls = (output) => output.filter((i) => i.type === 'function_call')
      .map(({ name, arguments: a }) => ({ name, a }));
    assert.ok(calls(whole.output).length >= 1, JSON.stringify(whole));
    assert.deepEqual(calls(items), calls(whole.output));
    assert.deepEqual(calls(last.output), calls(whole.output));
    for (const call of calls(whole.output)) assert.equal(call.name, 'get_weather');
    assert.equal(schemaViolation(calls(whole.output).map((c) => ({ schema: weatherSchema, text: c.a }))),
                 null);
  });

  test('text.format json_schema: answers valid against the schema', async () => {
    const schema = { type: 'object', properties: { city: { enum: ['Oslo', 'Paris'] } },
                     required: ['city'], additionalProperties: false };
    const answer = await openai.responses.create({
      model: 'chat', input: question, temperature: 1, max_output_tokens: 100,
      text: { format: { type: 'json_schema', name: 'place', schema, strict: true } },
    });
    assert.equal(answer.status, 'completed', JSON.stringify(answer));
    assert.equal(schemaViolation([{ schema, text: answer.output_text }]), null);
    assert.equal(answer.text.format.name, 'place');
  });

  test('mistakes are 400s naming the Responses field', async () => {
    const refused = async (body, param) => {
      await assert.rejects(
        openai.responses.create({ model: 'chat', input: question, max_output_tokens: 4, ...body }),
        (e) => {
          assert.equal(e.status, 400, String(e));
          assert.equal(e.param, param, String(e));
          return true;
        });
    };
    await refused({ tools: [{ type: 'web_search_preview' }] }, 'tools[0].type');
    await refused({ tools: [{ type: 'function', parameters: {} }] }, 'tools[0].name');
    await refused({ tools, tool_choice: { type: 'function', name: 'nope' } }, 'tool_choice.name');
    await refused({ tools: [{ type: 'function', name: 'f', parameters: { type: 'object',
      properties: { n: { type: 'integer', multipleOf: 3 } } } }], tool_choice: 'required' },
                  'tools[0].parameters');
    await refused({ text: { format: { type: 'json_schema', name: 'x',
                                      schema: { not: { type: 'string' } } } } },
                  'text.format.schema');
    await refused({ input: [{ role: 'user', content: question },
                            { type: 'function_call_output', call_id: 'call_x', output: 'r' }] },
                  'input[1].call_id');
  });
});
