// The Python client as a package: its generated modules are not stale (`npm run client:generate` writes
// them from docs/openapi/openapi.json, as it writes the TypeScript client's types), it and its tests are
// `mypy --strict` clean for Python 3.9, and a wheel builds offline (`python3 -m build --no-isolation`, with
// Debian's python3-build and python3-hatchling) and installs into a fresh virtual environment, with no
// dependency (`--skip-dependency-check`, below). The live tests are test/clients/python-client.test.ts.
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { PYTHON_MODELS, PYTHON_RESOURCES, pythonSources } from '../../clients/python/generate.js';

const run = promisify(execFile);
const root = new URL('../../', import.meta.url).pathname;
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');
const PYTHON = '/usr/bin/python3';
const has = (module: string) =>
  spawnSync(PYTHON, ['-c', `import ${module}`], { stdio: 'ignore' }).status === 0;
const work = mkdtempSync(path.join(tmpdir(), 'matchsim-python-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const tools = { mypy: has('mypy'), build: has('build') && has('hatchling') && has('ensurepip') };
for (const [tool, present] of Object.entries(tools)) {
  if (!present) console.warn(`skipped: ${PYTHON} has no ${tool} (Debian's packages, as .ci/run installs)`);
}

describe('the Python client package', () => {
  it('has modules generated from the stored document (run `npm run client:generate` when this fails)', () => {
    const generated = pythonSources(JSON.parse(read('docs/openapi/openapi.json')));
    expect(generated.models).toBe(read(PYTHON_MODELS));
    expect(generated.resources).toBe(read(PYTHON_RESOURCES));
  });

  it.skipIf(!tools.mypy)(
    'is mypy --strict clean, its tests too',
    async () => {
      const args = [
        '-m',
        'mypy',
        '--strict',
        '--python-version',
        '3.9',
        '--cache-dir',
        path.join(work, 'mypy'),
      ];
      const outcome = await run(PYTHON, [...args, 'src', 'tests'], {
        cwd: path.join(root, 'clients/python'),
        env: { ...process.env, MYPYPATH: path.join(root, 'clients/python/src') },
      }).catch((error: { stdout?: string; stderr?: string }) => error);
      expect(`${outcome.stdout}${outcome.stderr}`).toMatch(/^Success: no issues found/m);
    },
    300_000,
  );

  it.skipIf(!tools.build)(
    'builds a wheel offline that installs into a fresh virtual environment',
    async () => {
      const source = path.join(work, 'source');
      // A copy, so that the build's own files never land in the checkout.
      await run('cp', ['-r', path.join(root, 'clients/python'), source]);
      const dist = path.join(work, 'dist');
      // --skip-dependency-check: Debian's python3-build 0.9 reports Debian's own hatchling as missing (and
      // asks for `editables`, which only an editable install needs); the build itself needs neither check.
      await run(
        PYTHON,
        ['-m', 'build', '--no-isolation', '--skip-dependency-check', '--outdir', dist, source],
        {
          env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
        },
      );
      const files = readdirSync(dist).sort();
      expect(files).toEqual(['matchsim-2.0.0-py3-none-any.whl', 'matchsim-2.0.0.tar.gz']);
      const venv = path.join(work, 'venv');
      await run(PYTHON, ['-m', 'venv', venv]);
      const pip = path.join(venv, 'bin/pip');
      await run(pip, ['install', '--no-index', '--no-deps', '--quiet', path.join(dist, files[0]!)]);
      const check = [
        'import matchsim, pathlib',
        'root = pathlib.Path(matchsim.__file__).parent',
        'assert (root / "py.typed").exists()',
        'print(matchsim.__version__, len(matchsim.OPERATIONS), matchsim.Client(api_key="k").base_url)',
      ].join('\n');
      const { stdout } = await run(path.join(venv, 'bin/python'), ['-c', check], { cwd: work });
      expect(stdout.trim()).toMatch(/^2\.0\.0 \d+ http:\/\/localhost:8080$/);
      const { stdout: listed } = await run(pip, ['list', '--format=freeze'], { cwd: work });
      expect(listed).toContain('matchsim==2.0.0');
    },
    300_000,
  );
});
