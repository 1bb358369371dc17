// The markdown tables of one serve-side-by-side run (issue 35), from OUTDIR/results.jsonl
// and OUTDIR/machine.txt:  node side_by_side_table.mjs OUTDIR
// Each cell is the range over the rounds (min-max); a ratio row divides baton's figure by
// llama-server's of the same round, so its range is over the rounds' ratios. The targets
// table checks issue 35's targets at 16 and 64 streams on every round's ratio.
import { readFileSync } from "node:fs";

const dir = process.argv[2];
const lines = readFileSync(`${dir}/results.jsonl`, "utf8").trim().split("\n").map((l) => JSON.parse(l));
const machine = readFileSync(`${dir}/machine.txt`, "utf8");

const names = { baton: "baton", baton0: "baton --step-tokens 0 (before)",
                llama: "llama-server" };
const fmt = (x, digits) => (x === null || x === undefined || Number.isNaN(x) ? "-" : x.toFixed(digits));
function range(values, digits) {
  const v = values.filter((x) => x !== null && x !== undefined && !Number.isNaN(x));
  if (v.length === 0) return "-";
  const lo = fmt(Math.min(...v), digits), hi = fmt(Math.max(...v), digits);
  return lo === hi ? lo : `${lo}-${hi}`;
}

const byKey = new Map();  // "server streams" -> reports by round
for (const l of lines) {
  const r = l.report;
  if (r.failed) continue;
  const key = `${l.server} ${r.streams}`;
  if (!byKey.has(key)) byKey.set(key, new Map());
  byKey.get(key).set(r.round, { ...r, load: l.load, load_ok: l.load_ok });
}
const streamCounts = [...new Set(lines.filter((l) => !l.report.failed).map((l) => l.report.streams))].sort((a, b) => a - b);
const metrics = [["tokens_per_s", 1], ["ttft_p50", 3], ["ttft_p99", 3], ["gap_p50", 3], ["gap_p99", 3]];

const out = [];
out.push("| streams | server | rounds | tokens/s | TTFT p50 s | TTFT p99 s | inter-token p50 s | inter-token p99 s | errors | streams with chunks != usage |");
out.push("|---|---|---|---|---|---|---|---|---|---|");
const ratios = {};  // "server streams metric" -> [ratio per round]
for (const n of streamCounts) {
  const llama = byKey.get(`llama ${n}`);
  for (const server of ["baton", "baton0", "llama"]) {
    const rounds = byKey.get(`${server} ${n}`);
    if (!rounds) continue;
    const rs = [...rounds.values()];
    const cells = metrics.map(([m, d]) => range(rs.map((r) => r[m]), d));
    const errors = rs.map((r) => r.errors).join(", ");
    const mismatch = rs.map((r) => r.count_mismatch).join(", ");
    out.push(`| ${n} | ${names[server]} | ${rs.length} | ${cells.join(" | ")} | ${errors} | ${mismatch} |`);
    if (server === "llama" || !llama) continue;
    for (const [m] of metrics) {
      ratios[`${server} ${n} ${m}`] = [...rounds.entries()]
        .filter(([round]) => llama.has(round))
        .map(([round, r]) => r[m] / llama.get(round)[m]);
    }
  }
  for (const server of ["baton", "baton0"]) {
    if (!byKey.has(`${server} ${n}`) || !llama) continue;
    const cells = metrics.map(([m]) => `${range(ratios[`${server} ${n} ${m}`], 2)}x`);
    out.push(`| ${n} | ${server === "baton" ? "baton" : "baton before"} / llama-server | | ${cells.join(" | ")} | | |`);
  }
}

out.push("");
out.push("| target, at 16 and 64 streams (every round's ratio) | baton | baton --step-tokens 0 |");
out.push("|---|---|---|");
const targets = [["inter-token p99 <= 0.5x llama-server's", "gap_p99", (x) => x <= 0.5],
                 ["aggregate tokens/s >= 1.5x", "tokens_per_s", (x) => x >= 1.5],
                 ["TTFT p50 <= 0.5x", "ttft_p50", (x) => x <= 0.5]];
function verdict(server, metric, ok) {
  const parts = [];
  for (const n of [16, 64]) {
    const rs = ratios[`${server} ${n} ${metric}`];
    if (!rs || rs.length === 0) continue;
    const met = rs.filter(ok).length;
    parts.push(`${n}: ${met === rs.length ? "met" : met === 0 ? "**missed**" : `met in ${met} of ${rs.length}`} (${range(rs, 2)}x)`);
  }
  return parts.length ? parts.join("; ") : "-";
}
for (const [label, metric, ok] of targets) {
  out.push(`| ${label} | ${verdict("baton", metric, ok)} | ${verdict("baton0", metric, ok)} |`);
}
const errs = (server) => {
  const total = [16, 64].flatMap((n) => [...(byKey.get(`${server} ${n}`)?.values() ?? [])]).reduce((a, r) => a + r.errors, 0);
  return byKey.has(`${server} 16`) || byKey.has(`${server} 64`) ? (total === 0 ? "met (0)" : `**missed** (${total})`) : "-";
};
out.push(`| 0 errors | ${errs("baton")} | ${errs("baton0")} |`);

const late = lines.filter((l) => !l.load_ok);
out.push("");
out.push(late.length === 0
  ? "Every measured round started with the 1-minute load average below the threshold."
  : `${late.length} round(s) started above the load threshold: ${late.map((l) => `${l.server} ${l.report.streams}/${l.report.round} at ${l.load}`).join(", ")}.`);
const prompts = lines.filter((l) => !l.report.failed && l.report.prompt_tokens_min !== null);
if (prompts.length) {
  out.push(`Prompt tokens per stream: ${Math.min(...prompts.map((l) => l.report.prompt_tokens_min))}-${Math.max(...prompts.map((l) => l.report.prompt_tokens_max))}.`);
}
out.push("");
out.push("```");
out.push(machine.trim());
out.push("```");
console.log(out.join("\n"));
