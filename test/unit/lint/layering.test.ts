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

/** The tabrl/ui-rooms messages for `code` placed at `filePath` (a path under src/ui). */
async function roomErrors(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages.filter((message) => message.ruleId === 'tabrl/ui-rooms').map((message) => message.message);
}

describe('src/ui rooms lint (app → features in order → store and slices → kit)', () => {
  test.each([
    ['src/ui/features/models/bad.ts', '../training/training-actions.ts', /features\/models may not import features\/training, which comes after it/],
    ['src/ui/features/judge/bad.ts', '../studio/studio-actions.ts', /features\/judge may not import features\/studio/],
    ['src/ui/features/training/bad.ts', '../../app/init-playground.ts', /nothing below src\/ui\/app imports it/],
    ['src/ui/kit/bad.ts', '../store/index.ts', /src\/ui\/kit holds shared widgets that know no feature and no store/],
    ['src/ui/kit/bad.ts', '../features/environment/builtins.ts', /src\/ui\/kit holds shared widgets/],
    ['src/ui/store/bad.ts', '../features/training/training-actions.ts', /the store \(store\/ and each feature's \*-slice.ts\) imports only/],
    ['src/ui/features/chat/chat-slice.ts', '../training/training-actions.ts', /the store \(store\/ and each feature's \*-slice.ts\) imports only/],
    ['src/ui/features/chat/bad.ts', '../../old-actions.ts', /src\/ui keeps its files in app\/, kit\/, store\/ and features\/<name>\//],
  ])('%s importing %s is refused', async (filePath, from, message) => {
    const errors = await roomErrors(filePath, `import * as imported from '${from}';\nexport const x = imported;\n`);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(message);
  });

  test('allowed: a feature from earlier features, the kit, the store and any slice; a slice types from anywhere; the app from everything', async () => {
    const allowed: [string, string][] = [
      ['src/ui/features/training/good.ts', '../environment/builtins.ts'],
      ['src/ui/features/lessons/good.ts', '../training/training-actions.ts'],
      ['src/ui/features/training/good.ts', '../../kit/MetricChart.tsx'],
      ['src/ui/features/models/good.ts', '../../store/index.ts'],
      ['src/ui/features/environment/good.ts', '../lessons/lesson-slice.ts'],
      ['src/ui/store/good.ts', '../features/judge/judge-slice.ts'],
      ['src/ui/app/good.ts', '../features/studio/studio-actions.ts'],
      ['src/ui/kit/good.ts', './chart-palette.ts'],
    ];
    for (const [filePath, from] of allowed) expect(await roomErrors(filePath, `import * as imported from '${from}';\nexport const x = imported;\n`), `${filePath} → ${from}`).toEqual([]);
    expect(await roomErrors('src/ui/features/environment/editor-slice.ts', "import type { SharedState } from '../share/url-state.ts';\nexport type X = SharedState;\n")).toEqual([]);
  });
});
