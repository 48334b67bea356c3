// The CLI refuses a Node.js older than the oldest it runs on (src/cli/node-version.ts), the same oldest
// that package.json's `engines` names.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { nodeVersionProblem, OLDEST_NODE_MAJOR } from '../../src/cli/node-version.js';

describe('the Node.js version check', () => {
  it('refuses Node 20 and takes 22 and 24, as package.json engines says', () => {
    const engines = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).engines;
    expect(engines.node).toBe(`>=${OLDEST_NODE_MAJOR}`);
    expect(nodeVersionProblem('v20.20.2')).toBe(
      'Node.js 22 or later is needed, and this is v20.20.2 (README, "Quick start", says how to get it)',
    );
    expect(nodeVersionProblem('v21.7.3')).not.toBeNull();
    expect(nodeVersionProblem('v22.0.0')).toBeNull();
    expect(nodeVersionProblem('v24.21.0')).toBeNull();
    expect(nodeVersionProblem(process.version)).toBeNull();
  });
});
