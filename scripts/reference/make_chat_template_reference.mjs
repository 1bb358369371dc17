// Renders every tests/data/chat_templates/*.jinja (published models' chat templates) for
// a set of conversations with Hugging Face's @huggingface/jinja, and writes what it gave
// to tests/data/chat_templates/reference.json: [{template, case, variables, output} or
// {..., error}]. baton's Jinja engine is tested against it (tests/model/jinja_test.cpp).
//   node scripts/reference/make_chat_template_reference.mjs   (after npm install here)
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Template } from '@huggingface/jinja';

const folder = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'tests',
                         'data', 'chat_templates');

// Each template's special tokens, as its tokenizer_config.json has them.
const TOKENS = {
  'qwen3': { eos_token: '<|im_end|>' },
  'llama3.2': { bos_token: '<|begin_of_text|>', eos_token: '<|eot_id|>' },
  'gemma2': { bos_token: '<bos>', eos_token: '<eos>' },
  'granite3.3': { bos_token: '<|end_of_text|>', eos_token: '<|end_of_text|>' },
  'phi3.5': { bos_token: '<s>', eos_token: '<|endoftext|>' },
  'mistral-nemo': { bos_token: '<s>', eos_token: '</s>' },
  'deepseek-v3.1': { bos_token: '<｜begin▁of▁sentence｜>', eos_token: '<｜end▁of▁sentence｜>' },
  'hermes3-tool-use': { bos_token: '<|begin_of_text|>', eos_token: '<|im_end|>' },
};

const TOOLS = [{
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Get the weather in a city',
    parameters: {
      type: 'object',
      properties: {
        city: { type: 'string', description: 'The city' },
        unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
      },
      required: ['city'],
    },
  },
}];

const CASES = {
  'one user turn': { messages: [{ role: 'user', content: 'Hello!' }], add_generation_prompt: true },
  'a system message and turns': {
    messages: [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'Hi' },
               { role: 'assistant', content: 'Hello.' }, { role: 'user', content: 'What is 2+2?' }],
    add_generation_prompt: true,
  },
  'ends with the assistant, no generation prompt': {
    messages: [{ role: 'user', content: 'Hi' }, { role: 'assistant', content: 'Hello there.' }],
    add_generation_prompt: false,
  },
  'tools': {
    messages: [{ role: 'user', content: 'Weather in Oslo?' }], tools: TOOLS,
    add_generation_prompt: true,
  },
  'a tool call and its result': {
    messages: [
      { role: 'user', content: 'Weather in Oslo?' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', type: 'function',
        function: { name: 'get_weather', arguments: { city: 'Oslo' } } }] },
      { role: 'tool', tool_call_id: 'call_1', name: 'get_weather', content: '{"temp": 3}' },
    ],
    tools: TOOLS,
    add_generation_prompt: true,
  },
  'hard text': {
    messages: [{ role: 'user', content: '  spaces \n\n emoji 😀 "quotes" \'single\' {{ not a tag }} ' }],
    add_generation_prompt: true,
  },
};

// The clock strftime_now reads, fixed at 2026-12-04 12:00 UTC (the same day in every time
// zone within 11 hours; tests/model/template/jinja_test.cpp fixes the same day), so the
// reference does not depend on the day it is made.
const RealDate = Date;
const FIXED_NOW = RealDate.UTC(2026, 11, 4, 12);
globalThis.Date = class extends RealDate {
  constructor(...args) { super(...(args.length > 0 ? args : [FIXED_NOW])); }
  static now() { return FIXED_NOW; }
};

const reference = [];
for (const file of fs.readdirSync(folder).filter((f) => f.endsWith('.jinja')).sort()) {
  const name = file.replace(/\.jinja$/, '');
  const template = new Template(fs.readFileSync(path.join(folder, file), 'utf8'));
  for (const [caseName, data] of Object.entries(CASES)) {
    // A fixed date for the templates that print today's (Llama 3.x's date_string; the
    // clock is fixed above for strftime_now).
    const variables = { ...data, ...TOKENS[name], date_string: '26 Jul 2024' };
    const entry = { template: name, case: caseName, variables };
    try {
      entry.output = template.render(variables);
    } catch (error) {
      entry.error = String(error.message ?? error);
    }
    reference.push(entry);
  }
}
fs.writeFileSync(path.join(folder, 'reference.json'), JSON.stringify(reference, null, 1) + '\n');
console.log(`${reference.length} renders, ${reference.filter((e) => e.error).length} errors`);
