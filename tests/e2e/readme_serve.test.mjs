// The README's `baton serve` examples run as written, from the repository's root, on the
// committed models: each command of its sh block serves on port 8080 (on a free port only
// when this machine has 8080 taken) and writes its ledger where the default path points
// (a temporary XDG_STATE_HOME, not the user's), and its TOML block is models/baton.toml,
// word for word.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { batonBinary, get, post, startProcess, tempDir } from './helpers.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
const section = readme.slice(readme.indexOf('## `baton serve`'),
                             readme.indexOf('\n## ', readme.indexOf('## `baton serve`') + 1));

// The first fenced block of `language` in the section.
function block(language) {
  const m = new RegExp('```' + language + '\\n([\\s\\S]*?)```').exec(section);
  assert.ok(m, `the README's baton serve section has a ${language} block`);
  return m[1];
}

// Whether 127.0.0.1:PORT can be listened on now.
function portFree(port) {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

// The commands of an sh block: continuation lines joined, comments dropped.
function commands(text) {
  return text.replace(/\\\n\s*/g, ' ').split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line.startsWith('build/release/baton serve'));
}

describe('the README\'s baton serve examples', () => {
  test('the TOML example is models/baton.toml', () => {
    assert.equal(block('toml'), fs.readFileSync(path.join(root, 'models', 'baton.toml'), 'utf8'));
  });

  const examples = commands(block('sh'));
  test('the sh block has the flag and the file examples', () => {
    assert.equal(examples.length, 2, examples.join('\n'));
  });

  for (const command of examples) {
    test(command, async () => {
      const args = command.split(/\s+/).slice(1);  // the built baton stands for build/release/baton
      const asWritten = await portFree(8080);
      const state = tempDir('baton-readme-state-');
      const server = await startProcess(batonBinary(), asWritten ? args : [...args, '--port', '0'],
                                        { cwd: root, env: { XDG_STATE_HOME: state, BATON_LEDGER: '' } });
      try {
        if (asWritten) assert.equal(server.port, 8080, server.describe());
        assert.equal((await get(`${server.url}/health`, { key: null })).status, 200);
        // The file sets api_key = "change-me"; the flags set none.
        const key = args.includes('--config') ? 'change-me' : null;
        const answer = await post(`${server.url}/v1/chat/completions`, {
          model: 'chat', max_tokens: 8, messages: [{ role: 'user', content: 'Hello' }] }, { key });
        assert.equal(answer.status, 200, answer.text);
        const embedding = await post(`${server.url}/v1/embeddings`,
                                     { model: 'embed', input: 'the sea' }, { key });
        assert.equal(embedding.status, 200, embedding.text);
        assert.doesNotMatch(server.stderr(), /warning|capped/, server.stderr());
      } finally {
        assert.deepEqual(await server.stop('SIGTERM'), { code: 0, signal: null },
                         server.describe());
      }
      assert.ok(fs.existsSync(path.join(state, 'baton', 'ledger.db')), 'the default ledger');
    });
  }
});
