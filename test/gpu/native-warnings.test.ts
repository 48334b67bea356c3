// The test run's filter of Dawn's and Mesa's native stderr lines (test/helpers/native-warnings.ts): the
// known lines go, split across writes or not, with the blank line Dawn puts after its Vulkan warning;
// everything else, another Dawn warning included, arrives whole and in order.
import { describe, expect, it } from 'vitest';
import { dropKnownNativeLines } from '../helpers/native-warnings.js';

function fakeStream() {
  const written: string[] = [];
  const stream = {
    write(chunk: string) {
      written.push(chunk);
      return true;
    },
  } as unknown as NodeJS.WriteStream;
  return { stream, text: () => written.join('') };
}

describe('the native warnings filter', () => {
  it('drops the known lines and keeps the rest whole, however the writes split them', () => {
    const { stream, text } = fakeStream();
    const restore = dropKnownNativeLines(stream);
    const input = [
      'error: XDG_RUNTIME_DIR is invalid or not set in the environment.\n',
      'Warning: Vulkan shaderUniform*ArrayDynamicIndexing required.\n',
      ' - While initializing adapter (backend=BackendType::Vulkan)\n',
      '    at InitializeImpl (/home/runner/work/node-webgpu/node-webgpu/third_party/dawn/src/dawn/native/vulkan/PhysicalDeviceVk.cpp:257)\n',
      '\n',
      'Warning: maxDynamicUniformBuffersPerPipelineLayout artificially reduced from 90 to 16 to fit dynamic offset allocation limit.\n',
      'a test line\n',
      '\n',
      'Warning: maxDynamicStorageBuffersPerPipelineLayout artificially reduced from 80 to 16 to fit dynamic offset allocation limit.\n',
      'Warning: a new Dawn warning.\n',
      'the last line, unfinished',
    ].join('');
    // In pieces of 7 bytes: lines arrive cut anywhere.
    for (let at = 0; at < input.length; at += 7) stream.write(input.slice(at, at + 7));
    expect(text()).toBe('a test line\n\nWarning: a new Dawn warning.\n');
    restore();
    expect(text()).toBe('a test line\n\nWarning: a new Dawn warning.\nthe last line, unfinished');
    stream.write('after\n');
    expect(text()).toMatch(/unfinishedafter\n$/);
  });
});
