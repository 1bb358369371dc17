// The live dashboard of `baton serve`: polls GET /v1/engines, /v1/timeline, /v1/models,
// /v1/experiment and /health about once a second and draws them. No framework and no build
// step: this file is compiled into the binary as it is. Everything the server sends is put into the
// page as text (textContent), never as HTML.
'use strict';

(() => {
  const KEY_STORAGE = 'baton.apiKey';
  const POLL_MS = 1000;
  const RATE_WINDOW_MS = 5000;  // tokens/s: over this much of the recent past
  const SVG = 'http://www.w3.org/2000/svg';

  let windowSeconds = 600;
  let lastTimeline = null;
  let polls = 0;
  let timer = null;
  const samples = new Map();  // engine -> [{t, generated, prompt}], oldest first

  const $ = (selector) => document.querySelector(selector);

  // --- talking to the server ------------------------------------------------------------

  class ApiFailure extends Error {
    constructor(what, status, message) {
      super(`${what}: ${status ? `HTTP ${status}` : 'no answer'}${message ? ` ${message}` : ''}`);
      this.status = status;
    }
  }

  function apiKey() {
    try { return localStorage.getItem(KEY_STORAGE) || ''; } catch { return ''; }
  }

  async function api(path, { method = 'GET' } = {}) {
    const headers = {};
    const key = apiKey();
    if (key) headers.Authorization = `Bearer ${key}`;
    let res;
    try {
      res = await fetch(path, { method, headers, cache: 'no-store' });
    } catch (error) {
      throw new ApiFailure(`${method} ${path}`, 0, String(error.message || error));
    }
    const text = await res.text();
    let body = null;
    try { body = JSON.parse(text); } catch { body = null; }
    // (A poll that left before a new key was given does not ask again.)
    if (res.status === 401 && key === apiKey()) showKeyForm(key !== '');
    if (!res.ok) {
      const message = body && body.error && body.error.message ? body.error.message : text;
      throw new ApiFailure(`${method} ${path}`, res.status, message.slice(0, 300));
    }
    return { status: res.status, body };
  }

  // /health is not a /v1/ route (no key), and its 503 is an answer, not a failure.
  async function health() {
    const res = await fetch('/health', { cache: 'no-store' });
    return res.json();
  }

  function showKeyForm(rejected) {
    const form = $('#key-form');
    if (!form.hidden) return;
    form.hidden = false;
    $('#key-input').placeholder = rejected ? 'that key was refused' : 'key';
    $('#key-input').focus();
  }

  // --- formatting -----------------------------------------------------------------------

  function el(tag, { cls, text, attrs } = {}, children = []) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, value);
    for (const child of children) node.append(child);
    return node;
  }

  function svg(tag, attrs = {}, text) {
    const node = document.createElementNS(SVG, tag);
    for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  const dash = '–';
  const num = (v) => (v === undefined || v === null ? dash : String(v));

  function bytes(n) {
    if (n === undefined || n === null) return dash;
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let v = Number(n);
    let i = 0;
    while (v >= 1024 && i < units.length - 1) { v /= 1024; ++i; }
    return `${v.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
  }

  function ago(unixS, nowS) {
    if (unixS === undefined || unixS === null) return dash;
    const d = Math.round(nowS - unixS);
    if (d < 0) return `in ${duration(-d)}`;
    return `${duration(d)} ago`;
  }

  function duration(s) {
    if (s < 90) return `${Math.round(s)} s`;
    if (s < 5400) return `${Math.round(s / 60)} min`;
    return `${(s / 3600).toFixed(1)} h`;
  }

  const clock = (unixS) => new Date(unixS * 1000).toLocaleTimeString([], { hour12: false });

  function badge(state) {
    return el('span', { cls: `badge ${state}`, text: state });
  }

  // --- engines --------------------------------------------------------------------------

  // Tokens per second of `engine` over the last RATE_WINDOW_MS, from its cumulative
  // counters; null until two samples exist. A counter that went down (the model was
  // reloaded) starts the history again.
  function rates(engine, generated, prompt, now) {
    let list = samples.get(engine) || [];
    const last = list[list.length - 1];
    if (last && (generated < last.generated || prompt < last.prompt)) list = [];
    list.push({ t: now, generated, prompt });
    while (list.length > 2 && now - list[1].t >= RATE_WINDOW_MS) list.shift();
    samples.set(engine, list);
    if (list.length < 2) return null;
    const first = list[0];
    const dt = (now - first.t) / 1000;
    if (dt <= 0) return null;
    return { generated: (generated - first.generated) / dt, prompt: (prompt - first.prompt) / dt };
  }

  function kvCell(kv) {
    if (!kv || !kv.total) return el('td', { text: dash });
    const used = kv.total - kv.available;
    const pct = (100 * used) / kv.total;
    const meter = el('span', { cls: 'meter' }, [el('span', { attrs: { style: `width:${pct}%` } })]);
    return el('td', {}, [el('span', { cls: 'kv' }, [meter,
      el('span', { text: `${pct.toFixed(1)} % (${used}/${kv.total})` })])]);
  }

  function renderEngines(data) {
    $('#server-info').textContent = `backend ${data.backend} · policy ${data.policy}`;
    const now = performance.now();
    const deviceTotal = data.engines.reduce((sum, e) => sum + ((e.turn || {}).device_s || 0), 0);
    const rows = data.engines.map((e) => {
      const generated = e.generated_tokens ?? null;
      const prompt = e.prompt_tokens ?? null;
      const rate = generated === null ? null : rates(e.name, generated, prompt ?? 0, now);
      const state = e.model_state && e.model_state !== 'ready' ? e.model_state : (e.state ?? 'ok');
      const turn = e.turn || {};
      const requests = e.requests_done === undefined ? dash
        : `${e.requests_done}${e.requests_failed ? ` (${e.requests_failed} failed)` : ''}`;
      return el('tr', {attrs: {'data-engine': e.name, 'data-state': state}}, [
        el('td', {cls: 'name', text: e.name}),
        el('td', {text: e.kind}),
        el('td', {cls: 'state', attrs: {title: e.reason || ''}}, [badge(state)]),
        el('td', {cls: 'num queue', text: num(e.queue)}),
        el('td', {cls: 'num running', text: num(e.running)}),
        kvCell(e.kv_blocks),
        el('td', {cls: 'num tokens-per-s', text: rate ? rate.generated.toFixed(1) : dash}),
        el('td', {cls: 'num prompt-per-s', text: rate ? rate.prompt.toFixed(1) : dash}),
        el('td', {cls: 'num generated', text: num(generated)}),
        el('td', {cls: 'num requests', text: requests}),
        el('td', {cls: 'num turn-waits', text: num(turn.waits)}),
        el('td',
           {cls: 'num wait-s', text: turn.wait_s === undefined ? dash : turn.wait_s.toFixed(3)}),
        el('td', {cls: 'num weight', text: turn.weight === undefined ? dash : String(turn.weight)}),
        el('td', {
          cls: 'num device-share',
          text: turn.device_s === undefined || deviceTotal <= 0 ?
              dash :
              `${((100 * turn.device_s) / deviceTotal).toFixed(1)}`
        }),
        el('td', {cls: 'num faults', text: num(e.faults)}),
      ]);
    });
    $('#engines tbody').replaceChildren(...rows);
  }

  // --- timeline -------------------------------------------------------------------------

  // Intervals closer than a pixel become one bar: an hour of bursts stays a few hundred
  // elements.
  function pixelRuns(intervals, x) {
    const runs = [];
    for (const [s, e] of intervals) {
      const a = x(s);
      const b = Math.max(x(e), a + 1.5);
      const last = runs[runs.length - 1];
      if (last && a <= last.b + 0.5) {
        last.b = Math.max(last.b, b);
        last.end = Math.max(last.end, e);
        last.count += 1;
      } else {
        runs.push({ a, b, start: s, end: e, count: 1 });
      }
    }
    return runs;
  }

  function tickStep(seconds) {
    if (seconds <= 60) return 10;
    if (seconds <= 300) return 30;
    if (seconds <= 900) return 60;
    return 600;
  }

  function renderTimeline(t) {
    const box = $('#timeline');
    const width = Math.max(box.clientWidth, 480);
    const labelW = 120;
    const plotW = width - labelW - 10;
    const laneH = 24;
    const top = 16;  // room for the fault labels
    const lanes = [...t.engines.map((e) => ({ name: e.name, engine: e })),
      { name: '2+ engines busy', cls: 'overlap-engines', spans: t.overlap },
      { name: 'streams overlap', cls: 'overlap-streams', spans: t.stream_overlap || [] }];
    const height = top + lanes.length * laneH + 22;
    const start = t.now - t.seconds;
    const x = (time) => labelW + ((time - start) / t.seconds) * plotW;
    const root = svg('svg', { width, height, viewBox: `0 0 ${width} ${height}`,
      'data-now': t.now, 'data-seconds': t.seconds });
    const laneY = new Map();

    const step = tickStep(t.seconds);
    for (let ago = 0; ago <= t.seconds; ago += step) {
      const tx = x(t.now - ago);
      root.append(svg('line', { class: 'tick', x1: tx, x2: tx, y1: top, y2: height - 18 }));
      const label = ago === 0 ? 'now' : ago < 60 ? `-${ago}s` : `-${ago / 60}m`;
      root.append(svg('text', { class: 'axis-label', x: tx, y: height - 5 }, label));
    }

    lanes.forEach((lane, i) => {
      const y = top + i * laneH;
      laneY.set(lane.name, y);
      root.append(svg('rect', { class: 'lane-bg', x: labelW, y: y + 2, width: plotW, height: laneH - 4 }));
      root.append(svg('text', { class: 'lane-label', x: 4, y: y + laneH / 2 }, lane.name));
    });

    // Where two or more engines were busy, shaded across the engine lanes too.
    const engineBottom = top + t.engines.length * laneH;
    for (const run of pixelRuns(t.overlap, x)) {
      root.append(svg('rect', { class: 'overlap-band', x: run.a, y: top, width: run.b - run.a,
        height: engineBottom - top }));
    }

    lanes.forEach((lane) => {
      const y = laneY.get(lane.name);
      const spans = lane.engine ? lane.engine.intervals : lane.spans;
      const cls = lane.engine ? 'busy' : lane.cls;
      for (const run of pixelRuns(spans, x)) {
        const rect = svg('rect', { class: cls, x: run.a, y: y + 4, width: run.b - run.a,
          height: laneH - 8, rx: 1 });
        if (lane.engine) rect.setAttribute('data-engine', lane.name);
        rect.append(svg('title', {}, `${lane.name}: ${clock(run.start)} to ${clock(run.end)}, ` +
          `${(run.end - run.start).toFixed(3)} s${run.count > 1 ? ` (${run.count} intervals)` : ''}`));
        root.append(rect);
      }
    });

    let lastLabelX = -Infinity;
    for (const f of t.faults) {
      const fx = x(f.time);
      const y = laneY.has(f.engine) ? laneY.get(f.engine) : top;
      const kind = f.kind;
      if (f.onset !== undefined && laneY.has(f.engine)) {
        root.append(svg('rect', { class: 'fault-onset', x: x(f.onset), y: y + 2,
          width: Math.max(fx - x(f.onset), 1), height: laneH - 4 }));
      }
      root.append(svg('line', { class: `fault-line ${kind}`, x1: fx, x2: fx, y1: top,
        y2: top + lanes.length * laneH }));
      const cy = y + laneH / 2;
      const mark = svg('path', { class: `fault-mark ${kind}`, 'data-kind': kind,
        'data-engine': f.engine, d: `M${fx} ${cy - 7}L${fx + 6} ${cy}L${fx} ${cy + 7}L${fx - 6} ${cy}Z` });
      mark.append(svg('title', {}, `${kind}${f.fatal ? ' (fatal)' : ''} on ${f.engine || 'no engine'} ` +
        `at ${clock(f.time)}: ${f.detail}`));
      root.append(mark);
      if (fx - lastLabelX > 60) {
        const right = fx > width - 80;  // near "now": the label goes left of its line
        root.append(svg('text', { class: `fault-label ${kind}`, x: right ? fx - 3 : fx + 3, y: 11,
          'text-anchor': right ? 'end' : 'start' }, `${kind} ${f.engine}`));
        lastLabelX = fx;
      }
    }
    box.replaceChildren(root);
  }

  function renderFaults(t) {
    const rows = t.faults.slice(-20).reverse().map((f) => el('tr', {
      cls: 'fault-row', attrs: { 'data-kind': f.kind, 'data-engine': f.engine } }, [
      el('td', { text: clock(f.time) }),
      el('td', {}, [badge(f.kind)]),
      el('td', { text: f.engine || dash }),
      el('td', { cls: 'detail', text: `${f.fatal ? 'fatal: ' : ''}${f.detail}` }),
    ]));
    if (rows.length === 0) {
      rows.push(el('tr', {}, [el('td', { cls: 'muted', text: 'no faults in this window',
        attrs: { colspan: '4' } })]));
    }
    $('#faults tbody').replaceChildren(...rows);
  }

  // --- models ---------------------------------------------------------------------------

  function modelMessage(text, failed) {
    const box = $('#model-message');
    box.textContent = text;
    box.classList.toggle('failed', failed);
  }

  async function lifecycle(id, action) {
    modelMessage(`${action} ${id}…`, false);
    try {
      const { status, body } = await api(`/v1/models/${encodeURIComponent(id)}/${action}`,
        { method: 'POST' });
      modelMessage(`${action} ${id}: HTTP ${status}, ${body && body.state ? body.state : 'done'}`, false);
    } catch (error) {
      modelMessage(error.message, true);
    }
    pollSoon();
  }

  // A model's row, cells and buttons stay in the page from poll to poll; only their text
  // changes. A button replaced under the pointer would lose a click begun before the poll.
  const modelRows = new Map();  // id -> {row, cells, load, unload}

  function modelRow(id) {
    const known = modelRows.get(id);
    if (known) return known;
    const load = el('button', { cls: 'load', text: 'Load', attrs: { type: 'button' } });
    const unload = el('button', { cls: 'unload', text: 'Unload', attrs: { type: 'button' } });
    load.addEventListener('click', () => lifecycle(id, 'load'));
    unload.addEventListener('click', () => lifecycle(id, 'unload'));
    const cells = {
      name: el('td', { cls: 'name', text: id }), kind: el('td'), state: el('td', { cls: 'state' }),
      load: el('td'), memory: el('td', { cls: 'num' }), expiry: el('td'), lastUsed: el('td'),
    };
    const row = el('tr', { attrs: { 'data-model': id } },
      [...Object.values(cells), el('td', {}, [load, ' ', unload])]);
    const entry = { row, cells, load, unload };
    modelRows.set(id, entry);
    return entry;
  }

  function stateCellContents(m) {
    const parts = [badge(m.state || dash)];
    if (m.progress && m.progress.total_bytes) {
      const pct = (100 * m.progress.done_bytes) / m.progress.total_bytes;
      parts.push(' ', el('span', { cls: 'meter' }, [el('span', { attrs: { style: `width:${pct}%` } })]),
        ` ${pct.toFixed(0)} %`);
    }
    if (m.reason) parts.push(el('div', { cls: 'detail', text: m.reason }));
    return parts;
  }

  function updateModelRow(m, nowS) {
    const { row, cells, load, unload } = modelRow(m.id);
    row.dataset.state = m.state || '';
    load.disabled = m.state === 'ready' || m.state === 'loading';
    unload.disabled = m.state === 'unloaded' || m.state === 'unloading';
    cells.kind.textContent = m.kind ?? dash;
    cells.state.replaceChildren(...stateCellContents(m));
    cells.load.textContent = `${m.load ?? dash}${m.pinned ? ', pinned' : ''}`;
    cells.memory.textContent = m.memory_bytes ? bytes(m.memory_bytes) : dash;
    cells.expiry.textContent = m.idle_ttl_s ? `${duration(m.idle_ttl_s)} idle` +
      (m.expires_at ? `, unloads ${ago(m.expires_at, nowS)}` : '') : dash;
    cells.lastUsed.textContent = ago(m.last_used, nowS);
    return row;
  }

  function renderModels(data, nowS) {
    const memory = data.memory;
    $('#memory').textContent = memory
      ? `memory: ${bytes(memory.used_bytes)} used` +
        (memory.budget_bytes ? ` of a ${bytes(memory.budget_bytes)} budget` : ' (no budget)')
      : '';
    const rows = data.data.map((m) => updateModelRow(m, nowS));
    const ids = new Set(data.data.map((m) => m.id));
    for (const [id, { row }] of modelRows) {
      if (!ids.has(id)) { row.remove(); modelRows.delete(id); }
    }
    // Rows already in their place are not moved (moving one detaches it for a moment).
    const body = $('#models tbody');
    rows.forEach((row, i) => {
      if (body.children[i] !== row) body.insertBefore(row, body.children[i] || null);
    });
  }

  // --- the loop -------------------------------------------------------------------------

  // One poll, then the next, whatever this one met: a throw must not stop the page.
  async function poll() {
    timer = null;
    try {
      await refresh();
    } catch (error) {
      const box = $('#error');
      box.hidden = false;
      box.textContent = `dashboard: ${error.message}`;
    } finally {
      timer = setTimeout(poll, POLL_MS);
    }
  }

  // A live experiment (baton serve --experiment): its arms, its verdict so far; none: hidden.
  function renderExperiment(state) {
    const section = $('#experiment-section');
    section.hidden = state === null;
    if (state === null) return;
    $('#experiment-name').textContent = state.plan;
    const rows = state.arms.map(
        (arm) =>
            el('tr', {
              attrs: {'data-arm': arm.name, 'data-running': String(arm.name === state.arm)},
            },
               [
                 el('td',
                    {cls: 'name', text: arm.name + (arm.name === state.arm ? ' (running)' : '')}),
                 el('td', {text: arm.turn}),
                 el('td', {cls: 'num', text: num(arm.blocks)}),
                 el('td', {cls: 'num', text: arm.hours.toFixed(3)}),
                 el('td', {cls: 'num', text: num(arm.hangs)}),
                 el('td', {cls: 'num', text: num(arm.clusters)}),
               ]));
    $('#experiment tbody').replaceChildren(...rows);
    const bound = (v) => (v === null ? '∞' : v.toPrecision(3));
    const ratio = `rate ratio ${state.arms[1].name} / ${state.arms[0].name}: ` +
        `${state.ratio === null ? dash : state.ratio.toPrecision(3)} ` +
        `[${bound(state.ratio_low)}, ${bound(state.ratio_high)}], p = ${
                      state.p_value.toPrecision(3)}`;
    const needed = state.hours_still_needed === null ?
        '' :
        ` · about ${state.hours_still_needed.toFixed(1)} h more to a verdict`;
    const verdict = $('#experiment-verdict');
    verdict.dataset.decision = state.decision;
    verdict.textContent = state.ended ?
        `ended (${state.ended_reason}): ${state.decision}, staying on ${state.kept_arm} · ${
            ratio}` :
        `${state.decision} · block ${state.block} · ${ratio}${needed} · ` +
            `last switch ${state.last_switch_ms.toFixed(1)} ms`;
  }

  async function refresh() {
    const [engines, timeline, models, healthy, experiment] = await Promise.allSettled([
      api('/v1/engines'), api(`/v1/timeline?seconds=${windowSeconds}`), api('/v1/models'), health(),
      api('/v1/experiment')
    ]);
    const errors = [];
    // A 401 is answered by the key form (api() showed it), not by an error banner.
    const failed = (result) => {
      if (result.reason.status !== 401) errors.push(result.reason.message);
    };
    if (engines.status === 'fulfilled') renderEngines(engines.value.body);
    else failed(engines);
    if (timeline.status === 'fulfilled') {
      lastTimeline = timeline.value.body;
      renderTimeline(lastTimeline);
      renderFaults(lastTimeline);
    } else {
      failed(timeline);
    }
    const nowS = lastTimeline ? lastTimeline.now : Date.now() / 1000;
    if (models.status === 'fulfilled') renderModels(models.value.body, nowS);
    else failed(models);
    if (experiment.status === 'fulfilled')
      renderExperiment(experiment.value.body);
    else if (experiment.reason.status === 404)
      renderExperiment(null);  // none runs
    else
      failed(experiment);
    const h = $('#health');
    if (healthy.status === 'fulfilled') {
      h.className = `badge ${healthy.value.status}`;
      h.textContent = healthy.value.status;
      h.title = healthy.value.reason || '';
    } else {
      h.className = 'badge fatal';
      h.textContent = 'no answer';
    }
    const box = $('#error');
    const unique = [...new Set(errors)];
    box.hidden = unique.length === 0;
    box.textContent = unique.join('\n');
    ++polls;
    const updated = $('#updated');
    updated.dataset.polls = String(polls);
    updated.textContent = `updated ${new Date().toLocaleTimeString([], { hour12: false })}`;
  }

  function pollSoon() {
    if (timer === null) return;  // a poll is running; it schedules the next
    clearTimeout(timer);
    timer = setTimeout(poll, 0);
  }

  $('#key-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const key = $('#key-input').value.trim();
    try { localStorage.setItem(KEY_STORAGE, key); } catch { /* private mode: not kept */ }
    $('#key-form').hidden = true;
    pollSoon();
  });

  for (const button of document.querySelectorAll('#window-buttons button')) {
    button.addEventListener('click', () => {
      windowSeconds = Number(button.dataset.seconds);
      for (const b of document.querySelectorAll('#window-buttons button')) {
        b.classList.toggle('active', b === button);
      }
      pollSoon();
    });
  }

  window.addEventListener('resize', () => { if (lastTimeline) renderTimeline(lastTimeline); });
  poll();
})();
