// Vitest's global setup (vitest.config.ts): keeps the lines that Dawn and Mesa's drivers write straight
// to the process's stderr from native code, while an adapter is probed or opened on a machine without a
// GPU, out of the test run's output. They say what software rendering cannot do (lavapipe 22.3 refused,
// llvmpipe's limits lowered), not what the project did; gpu/adapter.ts already reports the adapter it
// chose, and why none, through its own words. Native code writes past any JavaScript hook in the test
// process, so they are dropped where the test processes' stderr arrives: here, in Vitest's own process,
// which pipes each test process's stderr into its own. Only these exact lines are dropped; every other line,
// a new Dawn warning included, passes as it came.

/** Whole lines dropped, each matched from start to end. */
const KNOWN_NATIVE_LINES = [
  // Dawn's OpenGL ES backend on llvmpipe, once per adapter.
  /^Warning: maxDynamic(Uniform|Storage)BuffersPerPipelineLayout artificially reduced from \d+ to \d+ to fit dynamic offset allocation limit\.$/,
  // Dawn's Vulkan backend refusing Debian bookworm's lavapipe, with its context and the blank line after.
  /^Warning: Vulkan shaderUniform\*ArrayDynamicIndexing required\.$/,
  /^ - While initializing adapter \(backend=BackendType::Vulkan\)$/,
  /^ {4}at InitializeImpl \(\S+\/PhysicalDeviceVk\.cpp:\d+\)$/,
  // Mesa's window-system code when the environment has no XDG_RUNTIME_DIR (CI's, a container's).
  /^error: XDG_RUNTIME_DIR is invalid or not set in the environment\.$/,
];

export function keepsLine(line: string): boolean {
  return !KNOWN_NATIVE_LINES.some((known) => known.test(line));
}

/**
 * Wraps `stream.write` so that whole lines reach it as before but the known native ones, and a blank line
 * right after one of them (Dawn ends its Vulkan warning with one). A line still open waits for its end.
 */
export function dropKnownNativeLines(stream: NodeJS.WriteStream): () => void {
  const write = stream.write.bind(stream) as (chunk: string) => boolean;
  let open = '';
  let afterDropped = false;
  const filtered = (chunk: unknown, ...rest: unknown[]): boolean => {
    const callback = rest.find((arg) => typeof arg === 'function') as (() => void) | undefined;
    const text =
      open + (typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8'));
    const lines = text.split('\n');
    open = lines.pop() ?? '';
    const kept: string[] = [];
    for (const line of lines) {
      const dropped = !keepsLine(line) || (afterDropped && line === '');
      afterDropped = !keepsLine(line);
      if (!dropped) kept.push(`${line}\n`);
    }
    const ok = kept.length === 0 ? true : write(kept.join(''));
    callback?.();
    return ok;
  };
  stream.write = filtered as typeof stream.write;
  return () => {
    stream.write = write as typeof stream.write;
    if (open !== '') write(open);
  };
}

export default function setup(): () => void {
  return dropKnownNativeLines(process.stderr);
}
