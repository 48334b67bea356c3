// The oldest Node.js the service runs on. package.json's `engines` says the same to npm (which only warns),
// and test/cli/node-version.test.ts holds the two equal; this refuses to start on an older one instead of
// starting and failing later in ways that name no cause (README, "Quick start", says how to get Node).

export const OLDEST_NODE_MAJOR = 22;

/** Why this Node.js cannot run matchsim, or null when it can; `version` as `process.version` gives it. */
export function nodeVersionProblem(version: string): string | null {
  const major = Number(/^v(\d+)\./.exec(version)?.[1] ?? Number.NaN);
  if (major >= OLDEST_NODE_MAJOR) return null;
  return `Node.js ${OLDEST_NODE_MAJOR} or later is needed, and this is ${version} (README, "Quick start", says how to get it)`;
}
