// Reads {"template": <text>, "cases": [<variables>...]} on stdin; writes
// [{"output": <text>} or {"error": <message>}] to stdout, rendered by Hugging Face's
// @huggingface/jinja (the Jinja of transformers.js's apply_chat_template).
import { Template } from '@huggingface/jinja';

let input = '';
for await (const chunk of process.stdin) input += chunk;
const { template, cases } = JSON.parse(input);
const parsed = new Template(template);
const out = cases.map((variables) => {
  try {
    return { output: parsed.render(variables) };
  } catch (error) {
    return { error: String(error.message ?? error) };
  }
});
process.stdout.write(JSON.stringify(out));
