// The live dashboard (GET /) in a real browser: Debian's chromium, headless, driven by
// puppeteer-core (which downloads no browser). The page asks for the API key when a /v1/
// route answers 401, shows every engine, a busy bar in an engine's lane after a request to
// it, the stretches where both engines were busy, a hang mark blamed on the engine an
// injected hang was aimed at, and loads and unloads a model with its buttons.
//
// BATON_CHROMIUM names the browser (default /usr/bin/chromium; scripts/setup installs it).
// BATON_SCREENSHOTS_DIR, when set, receives after-request.png and after-hang.png (the ones
// in docs/dashboard/ were made so).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import puppeteer from 'puppeteer-core';

import {
  API_KEY, get, makeModels, modelFlags, post, sleep, startServer, stopServer,
} from './helpers.mjs';

const CHROMIUM = process.env.BATON_CHROMIUM || '/usr/bin/chromium';
const WAIT_MS = 15_000;

let models;
let browser;

before(async () => {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`tests/e2e/dashboard: no browser at ${CHROMIUM}; run scripts/setup (it ` +
                    'installs Debian\'s chromium) or set BATON_CHROMIUM to a Chromium binary');
  }
  models = makeModels();
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    // A container has no user namespaces for the sandbox, no GPU, and a small /dev/shm.
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
});

after(async () => {
  if (browser) await browser.close();
});

async function openPage(url) {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  const errors = [];
  page.on('pageerror', (error) => errors.push(String(error)));
  await page.goto(url, { waitUntil: 'load' });
  return { page, errors };
}

async function screenshot(page, name) {
  const dir = process.env.BATON_SCREENSHOTS_DIR;
  if (!dir) return;
  fs.mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, name), fullPage: true });
}

// Waits until `fn(...args)` is true in the page; on time-out, fails with `what` and the
// page's text.
async function waitFor(page, what, fn, ...args) {
  try {
    await page.waitForFunction(fn, { timeout: WAIT_MS, polling: 100 }, ...args);
  } catch (error) {
    const text = await page.evaluate(() => document.body.innerText).catch(() => '');
    throw new Error(`the dashboard did not show ${what} within ${WAIT_MS} ms ` +
                    `(${error.message})\npage text:\n${text}`);
  }
}

// Clicks `selector` once it is in the page and enabled, as a user would wait for it. Should
// the page replace the node between puppeteer's find and its click ("detached"), finds it
// again: the test waits for states, never for time.
async function clickWhenReady(page, what, selector) {
  for (let attempt = 1; ; ++attempt) {
    await waitFor(page, what, (s) => {
      const node = document.querySelector(s);
      return node && !node.disabled;
    }, selector);
    try {
      await page.click(selector);
      return;
    } catch (error) {
      if (attempt >= 5 || !/detached|not clickable|No node found/i.test(error.message)) throw error;
    }
  }
}

const cell = (page, engine, cls) => page.$eval(
  `#engines tr[data-engine="${engine}"] td.${cls}`, (td) => td.textContent);

const chat = (model, extra = {}) => ({
  model,
  messages: [{ role: 'user', content: 'Hello' }],
  max_tokens: 16,
  temperature: 0,
  ...extra,
});

describe('the dashboard of a server with an API key', () => {
  let server;
  let page;
  let errors;
  before(async () => {
    server = await startServer([...modelFlags(models), '--api-key', API_KEY]);
  });
  after(async () => {
    if (page) await page.close();
    if (server) await stopServer(server);
  });

  test('GET /, /dashboard.js and /dashboard.css need no key and have their types', async () => {
    const types = { '/': /^text\/html/, '/dashboard.js': /^text\/javascript/,
                    '/dashboard.css': /^text\/css/ };
    for (const [route, type] of Object.entries(types)) {
      const res = await get(`${server.url}${route}`, { key: null });
      assert.equal(res.status, 200, `${route}: ${res.text.slice(0, 200)}`);
      assert.match(res.headers.get('content-type'), type, route);
      assert.ok(res.text.length > 100, `${route} has a body`);
    }
    assert.equal((await get(`${server.url}/v1/timeline`, { key: null })).status, 401);
    const timeline = await get(`${server.url}/v1/timeline?seconds=60`);
    assert.equal(timeline.status, 200, timeline.text);
    assert.deepEqual(timeline.json.engines.map((e) => e.name), ['chat-a', 'chat-b', 'embed']);
    assert.equal(timeline.json.seconds, 60);
    assert.ok(Array.isArray(timeline.json.overlap) && Array.isArray(timeline.json.faults));
    assert.equal((await get(`${server.url}/v1/timeline?seconds=-1`)).status, 400);
  });

  test('asks for the key after a 401, then shows every engine and model', async () => {
    ({ page, errors } = await openPage(server.url));
    await waitFor(page, 'the API key field', () => !document.querySelector('#key-form').hidden);
    // The key form is the answer to the 401s: no error banner beside it, after several polls.
    await waitFor(page, 'a few polls', () => Number(document.querySelector('#updated')
      .dataset.polls) >= 2);
    assert.equal(await page.$eval('#error', (box) => box.hidden), true,
                 await page.$eval('#error', (box) => box.textContent));
    await page.type('#key-input', API_KEY);
    await clickWhenReady(page, 'the key form\'s button', '#key-form button[type=submit]');
    await waitFor(page, 'a row per engine', () =>
      ['chat-a', 'chat-b', 'embed'].every((e) => document.querySelector(
        `#engines tr[data-engine="${e}"]`)));
    await waitFor(page, 'a row per model with its buttons', () =>
      document.querySelectorAll('#models tr[data-model] button.load').length === 3 &&
      document.querySelectorAll('#models tr[data-model] button.unload').length === 3);
    await waitFor(page, 'no error banner', () => document.querySelector('#error').hidden);
    assert.equal(await page.evaluate(() => localStorage.getItem('baton.apiKey')), API_KEY);
    assert.equal(await page.$eval('#experiment-section', (e) => e.hidden), true,
                 'no experiment runs: its section is hidden');
    assert.equal(await cell(page, 'chat-a', 'requests'), '0');
  });

  test('a chat completion shows as tokens, a request and a busy bar in its lane', async () => {
    const res = await post(`${server.url}/v1/chat/completions`,
                           chat('chat-a', { max_tokens: 64, ignore_eos: true }));
    assert.equal(res.status, 200, res.text);
    await waitFor(page, 'chat-a with one request and its tokens', () => {
      const row = document.querySelector('#engines tr[data-engine="chat-a"]');
      return row && row.querySelector('td.requests').textContent === '1' &&
             Number(row.querySelector('td.generated').textContent) > 0 &&
             Number(row.querySelector('td.tokens-per-s').textContent) > 0;
    });
    await waitFor(page, 'a busy bar in chat-a\'s lane',
                  () => document.querySelector('#timeline rect.busy[data-engine="chat-a"]'));
    assert.equal(await page.$('#timeline rect.busy[data-engine="chat-b"]'), null,
                 'chat-b did nothing: its lane is empty');
    assert.equal(await cell(page, 'chat-b', 'requests'), '0');
    assert.equal(await cell(page, 'chat-a', 'weight'), '1');  // the default turn weight
  });

  test('both engines busy at once shows in the overlap lane', async () => {
    await clickWhenReady(page, 'the 1-minute button', '#window-buttons button[data-seconds="60"]');
    await waitFor(page, 'the 1-minute window',
                  () => document.querySelector('#timeline svg')?.dataset.seconds === '60');
    // chat-a generates for 2.5 s, chat-b from 1 s to 3.5 s: 1.5 s of both at once.
    const t0 = Date.now();
    const drive = async (model, from, until) => {
      await sleep(from);
      for (let i = 0; Date.now() < t0 + until; ++i) {
        const res = await post(`${server.url}/v1/chat/completions`,
                               chat(model, { max_tokens: 256, ignore_eos: true,
                                             messages: [{ role: 'user', content: `run ${i}` }] }));
        assert.equal(res.status, 200, res.text);
      }
    };
    await Promise.all([drive('chat-a', 0, 2500), drive('chat-b', 1000, 3500)]);
    await waitFor(page, 'bars in both lanes and a two-engine stretch', () =>
      document.querySelector('#timeline rect.busy[data-engine="chat-b"]') &&
      document.querySelector('#timeline rect.overlap-engines'));
    const timeline = await get(`${server.url}/v1/timeline?seconds=60`);
    assert.ok(timeline.json.overlap.length > 0, timeline.text);
    assert.ok(Number(await cell(page, 'chat-b', 'requests')) > 0);
    await screenshot(page, 'after-request.png');
  });

  // A click that began before a poll must land: the poll updates the buttons in place.
  test('the model buttons stay the same nodes from poll to poll', async () => {
    const button = await page.$('#models tr[data-model="chat-a"] button.unload');
    assert.ok(button, 'chat-a has an Unload button');
    const polls = Number(await page.$eval('#updated', (e) => e.dataset.polls));
    await waitFor(page, 'two more polls', (n) => Number(document.querySelector('#updated')
      .dataset.polls) >= n + 2, polls);
    assert.equal(await button.evaluate((node) => node.isConnected), true,
                 'the Unload button was replaced by a poll');
    await button.dispose();
  });

  test('the Unload and Load buttons unload and load a model', async () => {
    await clickWhenReady(page, 'chat-b\'s Unload button',
                         '#models tr[data-model="chat-b"] button.unload');
    await waitFor(page, 'chat-b unloaded', () =>
      document.querySelector('#models tr[data-model="chat-b"]')?.dataset.state === 'unloaded');
    assert.match(await page.$eval('#model-message', (e) => e.textContent), /unload chat-b/);
    await waitFor(page, 'chat-b\'s engine unloaded', () =>
      document.querySelector('#engines tr[data-engine="chat-b"]')?.dataset.state === 'unloaded');
    await clickWhenReady(page, 'chat-b\'s Load button',
                         '#models tr[data-model="chat-b"] button.load');
    await waitFor(page, 'chat-b ready again', () =>
      document.querySelector('#models tr[data-model="chat-b"]')?.dataset.state === 'ready');
    assert.deepEqual(errors, [], 'no script error on the page');
  });
});

describe('the dashboard of a live experiment', () => {
  let server;
  let page;
  before(async () => {
    const plan = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'baton-exp-')), 'ab.toml');
    fs.writeFileSync(plan, 'name = "ab"\nblock_seconds = 0.5\nseed = 2\n' +
      '[[arm]]\nname = "concurrent"\npolicy = "concurrent"\n' +
      '[[arm]]\nname = "serialize"\npolicy = "serialize"\n');
    server = await startServer([...modelFlags(models), '--experiment', plan]);
  });
  after(async () => {
    if (page) await page.close();
    if (server) await stopServer(server);
  });

  test('shows both arms, the one running, and the verdict so far', async () => {
    let errors;
    ({ page, errors } = await openPage(server.url));
    await waitFor(page, 'the experiment section with both arms', () =>
      !document.querySelector('#experiment-section').hidden &&
      document.querySelectorAll('#experiment tr[data-arm]').length === 2);
    assert.equal(await page.$eval('#experiment-name', (e) => e.textContent), 'ab');
    await waitFor(page, 'one arm running and a block ended', () =>
      document.querySelectorAll('#experiment tr[data-running="true"]').length === 1 &&
      [...document.querySelectorAll('#experiment tr[data-arm] td:nth-child(3)')]
        .some((td) => Number(td.textContent) > 0));
    const verdict = await page.$eval('#experiment-verdict', (e) => e.dataset.decision);
    assert.equal(verdict, 'continue');  // no hang: nothing to tell the arms apart
    const state = await get(`${server.url}/v1/experiment`);
    assert.equal(state.status, 200, state.text);
    assert.deepEqual(state.json.arms.map((a) => a.name), ['concurrent', 'serialize']);
    assert.deepEqual(errors, []);
  });
});

describe('the dashboard after an injected hang', () => {
  let server;
  let page;
  let errors;
  before(async () => {
    server = await startServer([
      '--model', `A=${models.chatA}`, '--model', `B=${models.chatB}`,
      '--inject-hang-prob', '1', '--inject-fault-engine', 'A', '--watchdog-deadline', '0.3',
    ]);
  });
  after(async () => {
    if (page) await page.close();
    if (server) await stopServer(server);
  });

  test('a hang shows as a mark blamed on its engine, in its lane and the fault list', async () => {
    ({ page, errors } = await openPage(server.url));
    await waitFor(page, 'engines A and B', () =>
      document.querySelector('#engines tr[data-engine="A"]') &&
      document.querySelector('#engines tr[data-engine="B"]'));
    await clickWhenReady(page, 'the 1-minute button', '#window-buttons button[data-seconds="60"]');
    // B generates for 3 s; A is asked twice meanwhile, and each time its stream hangs.
    const t0 = Date.now();
    const driveB = async () => {
      for (let i = 0; Date.now() < t0 + 3000; ++i) {
        const res = await post(`${server.url}/v1/chat/completions`,
                               chat('B', { max_tokens: 256, ignore_eos: true,
                                           messages: [{ role: 'user', content: `run ${i}` }] }),
                               { key: null });
        assert.equal(res.status, 200, `B answers while A hangs: ${res.text}`);
      }
    };
    const askA = async (at) => {
      await sleep(at);
      const res = await post(`${server.url}/v1/chat/completions`, chat('A'), { key: null });
      assert.equal(res.status, 503, `A hangs and fails: ${res.text}`);
    };
    await Promise.all([driveB(), askA(500), askA(2000)]);
    await waitFor(page, 'a hang mark on A', () =>
      document.querySelector('#timeline path.fault-mark[data-kind="hang"][data-engine="A"]'));
    await waitFor(page, 'the hang in the fault list', () =>
      document.querySelector('#faults tr.fault-row[data-kind="hang"][data-engine="A"]'));
    await waitFor(page, 'A\'s fault count', () => Number(document.querySelector(
      '#engines tr[data-engine="A"] td.faults').textContent) > 0);
    await waitFor(page, 'a bar in B\'s lane',
                  () => document.querySelector('#timeline rect.busy[data-engine="B"]'));
    // The injected hangs are A's. (B may show a slowdown: on a loaded machine its steps
    // really can run five times their baseline; that is B's own measurement, not blame.)
    const marksOnB = await page.$$eval('#faults tr.fault-row[data-engine="B"]',
      (rows) => rows.map((row) => row.textContent));
    assert.equal(await page.$('#timeline path.fault-mark[data-kind="hang"][data-engine="B"]'),
                 null, `no hang is blamed on B; B's faults: ${JSON.stringify(marksOnB)}`);
    assert.deepEqual(errors, [], 'no script error on the page');
    await screenshot(page, 'after-hang.png');
  });
});
