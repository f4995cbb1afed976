/** The lint's layering rules fire: each forbidden import, linted as if it were in that layer's folder, is an error naming the rule; an allowed one is not. */
import { ESLint } from 'eslint';
import { describe, expect, test } from 'vitest';

const eslint = new ESLint({ cwd: new URL('../../..', import.meta.url).pathname });

/** The no-restricted-imports messages for `code` placed at `filePath`. */
async function layeringErrors(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages.filter((message) => message.ruleId === 'no-restricted-imports').map((message) => message.message);
}

describe('layering lint', () => {
  test.each([
    ['src/ui/bad.ts', '../gpu/inference/presets.ts', /src\/ui does not import src\/gpu/],
    ['src/gpu/io/bad.ts', '../../envs/types.ts', /src\/gpu imports neither src\/envs, src\/rl nor src\/models/],
    ['src/gpu/io/bad.ts', '../../rl/checkpoint.ts', /src\/gpu imports neither src\/envs, src\/rl nor src\/models/],
    ['src/gpu/io/bad.ts', '../../models/catalogue.ts', /src\/gpu imports neither src\/envs, src\/rl nor src\/models/],
    ['src/models/bad.ts', '../workers/engine-bridge.ts', /src\/models \(the model catalogue and cache\) sits just above src\/gpu/],
    ['src/models/bad.ts', '../envs/types.ts', /src\/models \(the model catalogue and cache\)/],
    ['src/envs/bad.ts', '../gpu/inference/presets.ts', /src\/envs imports neither src\/gpu, src\/rl, src\/models, src\/isolation nor src\/workers/],
    ['src/envs/bad.ts', '../rl/checkpoint.ts', /src\/envs imports neither/],
    ['src/envs/bad.ts', '../workers/engine-bridge.ts', /src\/envs imports neither/],
    ['src/envs/bad.ts', '../models/catalogue.ts', /src\/envs imports neither/],
    ['src/rl/bad.ts', '../models/catalogue.ts', /src\/rl stays free of the model catalogue/],
    ['src/cli/bad.ts', '../ui/actions.ts', /src\/cli runs in Node beside the stack/],
    ['src/cli/bad.ts', '../workers/sandbox/protocol.ts', /it may import any layer but the React app in src\/ui and the browser workers in src\/workers/],
    ['src/isolation/bad.ts', '../workers/sandbox/protocol.ts', /src\/isolation sits below both hosts of environment code/],
    ['src/isolation/bad.ts', '../cli/model-call-filter.ts', /src\/isolation sits below both hosts of environment code/],
    ['src/isolation/bad.ts', '../rl/checkpoint.ts', /src\/isolation sits below both hosts of environment code/],
    ['src/envs/bad.ts', '../isolation/protocol.ts', /src\/envs imports neither src\/gpu, src\/rl, src\/models, src\/isolation nor src\/workers/],
    ['src/chat/bad.ts', '../envs/types.ts', /src\/chat \(the chat protocol\) and src\/common/],
    ['src/rl/bad.ts', 'react', /src\/rl stays free of the model catalogue and cache \(src\/models, a sibling\), and of UI/],
  ])('%s importing %s is refused', async (filePath, from, message) => {
    const errors = await layeringErrors(filePath, `import * as imported from '${from}';\nexport const x = imported;\n`);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(message);
  });

  test('allowed imports pass: ui and workers from the catalogue, the catalogue from gpu, gpu and envs from the chat protocol, every layer from src/common', async () => {
    expect(await layeringErrors('src/ui/good.ts', "import { REAL_MODEL_PRESETS } from '../models/catalogue.ts';\nexport const x = REAL_MODEL_PRESETS;\n")).toEqual([]);
    expect(await layeringErrors('src/workers/good.ts', "import { isModelCached } from '../models/cache.ts';\nexport const x = isModelCached;\n")).toEqual([]);
    expect(await layeringErrors('src/models/good.ts', "import { TINY_CONFIG } from '../gpu/inference/presets.ts';\nexport const x = TINY_CONFIG;\n")).toEqual([]);
    for (const layer of ['ui', 'workers', 'isolation', 'rl', 'envs', 'gpu', 'models', 'cli', 'chat']) {
      expect(await layeringErrors(`src/${layer}/good.ts`, "import { errorMessage } from '../common/error-message.ts';\nexport const x = errorMessage;\n"), layer).toEqual([]);
    }
    expect(await layeringErrors('src/gpu/io/good.ts', "import type { Message } from '../../chat/protocol.ts';\nexport type X = Message;\n")).toEqual([]);
    expect(await layeringErrors('src/envs/good.ts', "import type { Message } from '../chat/protocol.ts';\nexport type X = Message;\n")).toEqual([]);
    // Both hosts of environment code share the isolation layer, which uses the environment API.
    for (const host of ['cli', 'workers']) {
      expect(await layeringErrors(`src/${host}/good.ts`, "import { ANSWER_PLACEHOLDER } from '../isolation/protocol.ts';\nexport const x = ANSWER_PLACEHOLDER;\n"), host).toEqual([]);
    }
    expect(await layeringErrors('src/isolation/good.ts', "import { toPlainData } from '../envs/index.ts';\nexport const x = toPlainData;\n")).toEqual([]);
  });
});
