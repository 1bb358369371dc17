// A streaming load generator for any OpenAI-compatible /v1/completions server (baton serve,
// llama.cpp's llama-server): one round of N concurrent streaming requests, timed per token.
//   node stream_load.mjs --url http://127.0.0.1:PORT --model NAME --streams N
//        [--max-tokens 64] [--prompt-words 60] [--round R] [--label L] [--raw FILE]
//        [--timeout 600]
//
// Every stream sends its own prompt (--prompt-words words drawn by a generator seeded with
// R and the stream's index: the same prompts for every server in round R, none sharing a
// prefix with another) with max_tokens, temperature 0, ignore_eos (every stream makes
// max_tokens tokens), logprobs 1 and stream_options.include_usage, all N at once.
// logprobs is asked for because a `make-model` model's random picks are mostly tokens
// whose text is empty: a server sends such a token's chunk only with its logprob.
// Per stream, the arrival time of every data chunk is kept; a chunk carries as many
// tokens as its logprobs list (else 1 when it has text). Reported, as one JSON line:
//   tokens_per_s       usage completion tokens of all streams / wall time of the round
//                      (first request sent to last stream ended); chunk_tokens_per_s the
//                      same counted from chunks
//   ttft_p50/p99       request sent to the first chunk with a token, seconds
//   gap_p50/p99        every gap between a stream's consecutive tokens (the tokens of one
//                      chunk are gaps of 0), over all streams, seconds
//   errors             streams with a status other than 200, an error event, no [DONE],
//                      a connection error or the timeout
//   count_mismatch     streams whose chunk token count differs from usage.completion_tokens
//                      (each listed in mismatches), short: streams with fewer usage tokens
//                      than max_tokens
// Percentiles are nearest-rank. --raw writes every stream's times and counts as JSON.
import { writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";

function parseArgs(argv) {
  const o = { url: "", model: "", streams: 1, maxTokens: 64, promptWords: 60, round: 1,
              label: "", raw: "", timeout: 600 };
  const names = { "--url": "url", "--model": "model", "--streams": "streams",
                  "--max-tokens": "maxTokens", "--prompt-words": "promptWords",
                  "--round": "round", "--label": "label", "--raw": "raw",
                  "--timeout": "timeout" };
  for (let i = 2; i < argv.length; i += 2) {
    const key = names[argv[i]];
    if (!key || i + 1 >= argv.length) throw new Error(`unknown or incomplete option ${argv[i]}`);
    o[key] = typeof o[key] === "number" ? Number(argv[i + 1]) : argv[i + 1];
  }
  if (!o.url || !o.model) throw new Error("--url and --model are required");
  return o;
}

// Plain English words: this tiny tokenizer splits them into one to three tokens each.
const WORDS = ("the of and to in is that it was for on are with as his they be at one have " +
  "this from or had by hot word but what some we can out other were all there when up use " +
  "your how said an each she which do their time if will way about many then them write " +
  "would like so these her long make thing see him two has look more day could go come did " +
  "number sound no most people my over know water than call first who may down side been " +
  "now find any new work part take get place made live where after back little only round " +
  "man year came show every good me give our under name very through just form sentence " +
  "great think say help low line differ turn cause much mean before move right boy old too " +
  "same tell does set three want air well also play small end put home read hand port " +
  "large spell add even land here must big high such follow act why ask men change went " +
  "light kind off need house picture try us again animal point mother world near build " +
  "self earth father head stand own page should country found answer school grow study " +
  "still learn plant cover food sun four between state keep eye never last let thought " +
  "city tree cross farm hard start might story saw far sea draw left late run while press " +
  "close night real life few north open seem together next white children begin got walk " +
  "example ease paper group always music those both mark often letter until mile river car " +
  "feet care second book carry took science eat room friend began idea fish mountain stop " +
  "once base hear horse cut sure watch color face wood main enough plain girl usual young " +
  "ready above ever red list though feel talk bird soon body dog family direct pose leave " +
  "song measure door product black short numeral class wind question happen complete ship " +
  "area half rock order fire south problem piece told knew pass since top whole king space " +
  "heard best hour better true during hundred five remember step early hold west ground").split(" ");

// A small deterministic generator (mulberry32), so that prompts repeat across servers.
function generator(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function prompt(round, index, words) {
  const next = generator(round * 100003 + index * 7919 + 1);
  const out = [`Round ${round} story ${index}:`];
  for (let i = 0; i < words; ++i) out.push(WORDS[Math.floor(next() * WORDS.length)]);
  return out.join(" ");
}

function tokensIn(choice) {
  const lp = choice.logprobs;
  if (lp && Array.isArray(lp.tokens)) return lp.tokens.length;     // OpenAI completions
  if (lp && Array.isArray(lp.content)) return lp.content.length;   // chat-style logprobs
  return choice.text ? 1 : 0;
}

async function stream(o, index) {
  const s = { index, status: 0, error: "", done: false, start: 0, times: [], chunkTokens: 0,
              usageTokens: -1, promptTokens: -1, end: 0 };
  const body = { model: o.model, prompt: prompt(o.round, index, o.promptWords),
                 max_tokens: o.maxTokens, temperature: 0, ignore_eos: true, logprobs: 1,
                 stream: true, stream_options: { include_usage: true } };
  const abort = AbortSignal.timeout(o.timeout * 1000);
  s.start = performance.now();
  try {
    const res = await fetch(`${o.url}/v1/completions`, {
      method: "POST", headers: { "content-type": "application/json" },
      body: JSON.stringify(body), signal: abort });
    s.status = res.status;
    if (res.status !== 200) {
      s.error = `status ${res.status}: ${(await res.text()).slice(0, 200)}`;
      return s;
    }
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const bytes of res.body) {
      const now = performance.now();
      buffer += decoder.decode(bytes, { stream: true }).replaceAll("\r\n", "\n");
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const event = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        for (const line of event.split("\n")) {
          if (!line.startsWith("data:")) continue;
          const data = line.slice(5).trim();
          if (data === "[DONE]") { s.done = true; continue; }
          const chunk = JSON.parse(data);
          if (chunk.error) { s.error = `error event: ${JSON.stringify(chunk.error).slice(0, 200)}`; continue; }
          if (chunk.usage) {
            s.usageTokens = chunk.usage.completion_tokens;
            s.promptTokens = chunk.usage.prompt_tokens;
          }
          for (const choice of chunk.choices ?? []) {
            const n = tokensIn(choice);
            s.chunkTokens += n;
            for (let k = 0; k < n; ++k) s.times.push(now);
          }
        }
      }
    }
    if (!s.done && !s.error) s.error = "no data: [DONE]";
  } catch (e) {
    s.error = `${e.name}: ${e.message}`;
  } finally {
    s.end = performance.now();
  }
  return s;
}

function percentile(values, p) {
  if (values.length === 0) return null;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];
}

const round = (x, digits) => (x === null ? null : Number(x.toFixed(digits)));

async function main() {
  const o = parseArgs(process.argv);
  const begin = performance.now();
  const streams = await Promise.all(Array.from({ length: o.streams }, (_, i) => stream(o, i)));
  const wall = (Math.max(...streams.map((s) => s.end)) - begin) / 1000;
  const ttft = [], gaps = [];
  let usage = 0, chunks = 0, errors = 0, short = 0;
  const mismatches = [];
  for (const s of streams) {
    if (s.error) ++errors;
    if (s.times.length > 0) ttft.push((s.times[0] - s.start) / 1000);
    for (let k = 1; k < s.times.length; ++k) gaps.push((s.times[k] - s.times[k - 1]) / 1000);
    usage += Math.max(0, s.usageTokens);
    chunks += s.chunkTokens;
    if (s.usageTokens >= 0 && s.usageTokens < o.maxTokens) ++short;
    if (s.chunkTokens !== s.usageTokens) {
      mismatches.push({ stream: s.index, chunks: s.chunkTokens, usage: s.usageTokens });
    }
  }
  const prompts = streams.map((s) => s.promptTokens).filter((n) => n >= 0);
  const report = {
    label: o.label, streams: o.streams, round: o.round, wall_s: round(wall, 3),
    tokens_per_s: round(usage / wall, 2), chunk_tokens_per_s: round(chunks / wall, 2),
    usage_tokens: usage, chunk_tokens: chunks,
    ttft_p50: round(percentile(ttft, 50), 4), ttft_p99: round(percentile(ttft, 99), 4),
    gap_p50: round(percentile(gaps, 50), 4), gap_p99: round(percentile(gaps, 99), 4),
    gaps: gaps.length, errors, short, count_mismatch: mismatches.length,
    prompt_tokens_min: prompts.length ? Math.min(...prompts) : null,
    prompt_tokens_max: prompts.length ? Math.max(...prompts) : null,
    mismatches: mismatches.slice(0, 8),
    first_error: streams.find((s) => s.error)?.error ?? "",
  };
  console.log(JSON.stringify(report));
  if (o.raw) {
    writeFileSync(o.raw, JSON.stringify(streams.map((s) => ({
      ...s, times: s.times.map((t) => round((t - begin) / 1000, 4)),
      start: round((s.start - begin) / 1000, 4), end: round((s.end - begin) / 1000, 4) }))));
  }
  process.exit(errors > 0 ? 1 : 0);
}

main().catch((e) => { console.error(`stream_load: ${e.message}`); process.exit(2); });
