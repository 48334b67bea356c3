// The typed client as a project installs it: `npm pack` in clients/typescript builds JavaScript with
// declarations into a tarball; a fresh project gets the tarball's contents as node_modules/@matchsim/client
// (its dependency and Node's types linked from this checkout: no registry needed), and the README's
// examples, taken from the README itself, type-check against the declarations (strict tsc) and run
// against the demo service. A failing command, type error or example fails the test.
import { execFile } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DemoService, startDemoService } from '../helpers/demo-service.js';

const run = promisify(execFile);
const root = new URL('../../', import.meta.url).pathname;
const clientDir = path.join(root, 'clients/typescript');
const work = mkdtempSync(path.join(tmpdir(), 'matchsim-client-'));
let demo: DemoService;

beforeAll(async () => {
  demo = await startDemoService();
}, 120_000);
afterAll(async () => {
  await demo?.close();
  rmSync(work, { recursive: true, force: true });
});

/** The README's ```ts blocks, in order, as one module. */
function readmeExamples(): string {
  const readme = readFileSync(path.join(clientDir, 'README.md'), 'utf8');
  return [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]).join('\n');
}

/** A project with the packed client installed: the tarball's package/ as node_modules/@matchsim/client. */
async function projectWithPackedClient(): Promise<string> {
  const packs = path.join(work, 'packs');
  mkdirSync(packs);
  await run('npm', ['pack', '--silent', '--pack-destination', packs], { cwd: clientDir });
  const [tarball] = readdirSync(packs).filter((name) => name.endsWith('.tgz'));
  expect(tarball).toBe('matchsim-client-2.0.0.tgz');
  const project = path.join(work, 'project');
  const modules = path.join(project, 'node_modules');
  mkdirSync(path.join(modules, '@matchsim'), { recursive: true });
  mkdirSync(path.join(modules, '@types'));
  await run('tar', ['xzf', path.join(packs, tarball!), '-C', path.join(modules, '@matchsim')]);
  await run('mv', [path.join(modules, '@matchsim/package'), path.join(modules, '@matchsim/client')]);
  for (const name of ['openapi-fetch', 'openapi-typescript-helpers', '@types/node', 'undici-types']) {
    symlinkSync(path.join(root, 'node_modules', name), path.join(modules, name));
  }
  writeFileSync(path.join(project, 'package.json'), JSON.stringify({ private: true, type: 'module' }));
  writeFileSync(
    path.join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noUncheckedIndexedAccess: true,
        types: ['node'],
        outDir: 'out',
      },
      include: ['example.ts'],
    }),
  );
  writeFileSync(path.join(project, 'example.ts'), readmeExamples());
  return project;
}

describe('the client package', () => {
  it('packs to JavaScript with declarations, and the README examples type-check and run', async () => {
    const project = await projectWithPackedClient();
    const installed = path.join(project, 'node_modules/@matchsim/client');
    const files = readdirSync(path.join(installed, 'dist')).sort();
    expect(files).toEqual(expect.arrayContaining(['index.d.ts', 'index.js', 'schema.d.ts', 'schema.js']));
    expect(readdirSync(installed)).not.toContain('src');

    const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
    const compiled = await run('node', [tsc, '-p', project]).catch((error: { stdout: string }) => {
      throw new Error(`the README examples do not type-check:\n${error.stdout}`);
    });
    expect(compiled.stdout).toBe('');

    const { stdout } = await run('node', [path.join(project, 'out/example.js')], {
      cwd: project,
      env: { PATH: process.env.PATH, MATCHSIM_URL: demo.baseUrl, MATCHSIM_KEY: demo.liveKey },
    }).catch((error: { stdout: string; stderr: string }) => {
      throw new Error(`the README examples failed:\n${error.stdout}\n${error.stderr}`);
    });
    expect(stdout).toMatch(/: \d+\.\d{3} credits\n/);
    expect(stdout).toMatch(/^home 0\.\d{3}, draw 0\.\d{3}, away 0\.\d{3}$/m);
    expect(stdout).toContain('schema,result,markets 0\n');
    expect(stdout.match(/^\d+ delivered 0\.\d+$/gm)).toHaveLength(2);
    expect(stdout).toMatch(/^\d+ delivered jobs$/m);
    expect(stdout).toContain('404 fixture_not_found');
  }, 240_000);
});
