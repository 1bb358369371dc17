// The peer of bench/llm_cpu_bench.cpp: llama.cpp's CPU build (node-llama-cpp's prebuilt
// linux-x64 binary, never compiled here) on a GGUF of the same weights (baton_gguf), measured
// the way baton's bench measures itself:
//   - prefill: the prompt evaluated from an empty sequence until the first token is sampled
//     from its logits (one batch of up to 512 tokens, llama.cpp's usual micro-batch);
//   - decode: then --generate greedy steps, each one token in and one sampled out
//     (end-of-generation tokens do not stop it, like baton's ignore_eos).
// The prompt is baton's: token i = (i * 7919 + 13) % vocab. One warm-up round (16 tokens)
// pages in the weights first. One JSON line per round on stdout: "generated" is the number of
// decode steps (as llm_cpu_bench's DECODE_TOKENS), "first_tokens" starts with the prefill's
// token.
// Usage: node llama_cpp_bench.mjs MODEL.gguf --prompt-tokens N --generate 64 --threads 2
//        [--rounds R] [--batch-size 512] [--prompt ID,ID,...] [--show-tokens K]
// --prompt replaces the benchmark prompt by these ids (to check tokens against baton_greedy);
// --show-tokens K prints the first K generated ids (default 16).
import {parseArgs} from "node:util";
import {basename} from "node:path";
import {getLlama, LlamaLogLevel} from "node-llama-cpp";

function options() {
  const {values, positionals} = parseArgs({
    allowPositionals: true,
    options: {
      "prompt-tokens": {type: "string", default: "512"},
      "generate": {type: "string", default: "64"},
      "threads": {type: "string", default: "2"},
      "rounds": {type: "string", default: "1"},
      "batch-size": {type: "string", default: "512"},
      "prompt": {type: "string"},
      "show-tokens": {type: "string", default: "16"},
    },
  });
  if (positionals.length !== 1) {
    console.error("usage: node llama_cpp_bench.mjs MODEL.gguf --prompt-tokens N --generate 64 " +
                  "--threads 2 [--rounds R] [--batch-size 512]");
    process.exit(2);
  }
  const count = (name) => {
    const n = Number(values[name]);
    if (!Number.isInteger(n) || n < 1) throw new Error(`--${name}: a positive integer, please`);
    return n;
  };
  return {
    model: positionals[0], promptTokens: count("prompt-tokens"), generate: count("generate"),
    threads: count("threads"), rounds: count("rounds"), batchSize: count("batch-size"),
    prompt: values.prompt?.split(",").map(Number), showTokens: count("show-tokens"),
  };
}

// baton's deterministic prompt (bench/llm_cpu_bench.cpp, prompt_of).
function promptOf(count, vocab) {
  return Array.from({length: count}, (_, i) => (i * 7919 + 13) % vocab);
}

// The rows of the model's embedding: what baton takes as the vocabulary (config.json's
// vocab_size), which baton_gguf also writes as the token list's length.
function vocabSize(model) {
  const metadata = model.fileInfo.metadata;
  return metadata[metadata.general.architecture]?.vocab_size ??
         metadata.tokenizer.ggml.tokens.length;
}

// general.file_type as baton_gguf's --type names it.
function fileTypeName(fileType) {
  return {0: "f32", 1: "f16", 7: "q8_0", 32: "bf16"}[fileType] ?? `file_type ${fileType}`;
}

// Evaluates `prompt` on an empty sequence, then `steps` greedy decode steps.
async function round(sequence, prompt, steps) {
  await sequence.clearHistory();
  const generator = sequence.evaluate(prompt, {temperature: 0, yieldEogToken: true});
  const tokens = [];
  const start = performance.now();
  tokens.push((await generator.next()).value);
  const prefilled = performance.now();
  for (let i = 0; i < steps; i++) tokens.push((await generator.next()).value);
  const end = performance.now();
  await generator.return();
  return {prefillMs: prefilled - start, decodeMs: end - prefilled, tokens};
}

async function main() {
  const o = options();
  const llama = await getLlama({gpu: false, build: "never", maxThreads: o.threads,
                                logLevel: LlamaLogLevel.error});
  const model = await llama.loadModel({modelPath: o.model, gpuLayers: 0});
  const context = await model.createContext({
    contextSize: (o.prompt?.length ?? o.promptTokens) + o.generate + 1,
    batchSize: o.batchSize,
    threads: {ideal: o.threads, min: o.threads},
  });
  const sequence = context.getSequence();
  const vocab = vocabSize(model);
  const type = fileTypeName(model.fileInfo.metadata.general.file_type);
  await round(sequence, promptOf(16, vocab), 1);  // warm-up
  for (let r = 0; r < o.rounds; r++) {
    const prompt = o.prompt ?? promptOf(o.promptTokens, vocab);
    const result = await round(sequence, prompt, o.generate);
    console.log(JSON.stringify({
      model: basename(o.model),
      prefill_ms: +result.prefillMs.toFixed(1),
      prefill_tokens_per_s: +(prompt.length * 1000 / result.prefillMs).toFixed(2),
      decode_ms: +result.decodeMs.toFixed(1),
      decode_tokens_per_s: +(o.generate * 1000 / result.decodeMs).toFixed(2),
      prompt_tokens: prompt.length,
      generated: o.generate,
      threads: context.idealThreads,
      type,
      batch_size: context.batchSize,
      context_size: context.contextSize,
      flash_attention: context.flashAttention,
      first_tokens: result.tokens.slice(0, o.showTokens),
    }));
  }
  await context.dispose();
  await model.dispose();
  await llama.dispose();
}

await main();
