// The reference for baton's GGUF model loading (tests/model/gguf_model_test.cpp): what
// llama.cpp (node-llama-cpp's binding) makes of a GGUF file: the ids of each string of a
// JSON list (text only, no special tokens parsed, no BOS added), and the greedy tokens after
// a prompt of ids. Prints {"tokenize": [{"text", "ids"}], "prompt": [...], "greedy": [...]}.
//   bench/peers/setup && node bench/peers/gguf_model_reference.mjs FILE.gguf STRINGS.json
import { readFileSync } from 'node:fs';
import { getLlama, LlamaLogLevel } from 'node-llama-cpp';

const [modelPath, stringsPath] = process.argv.slice(2);
const strings = JSON.parse(readFileSync(stringsPath, 'utf8'));
const llama = await getLlama({gpu: false, build: 'never', logLevel: LlamaLogLevel.error});
const model = await llama.loadModel({modelPath, gpuLayers: 0});
const tokenize = strings.map((text) => ({text, ids: Array.from(model.tokenize(text, false))}));
const prompt = [5, 77, 300, 12, 401, 99, 250, 3];
const context = await model.createContext({contextSize: 64, threads: {ideal: 1, min: 1}});
const generator = context.getSequence().evaluate(prompt, {temperature: 0, yieldEogToken: true});
const greedy = [];
for (let i = 0; i < 16; i++) greedy.push((await generator.next()).value);
await generator.return();
process.stdout.write(JSON.stringify({tokenize, prompt, greedy}) + '\n');
