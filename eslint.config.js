// Lint: typescript-eslint's recommended rules plus the layering the README states
// (src/ui -> src/workers -> src/rl, src/envs, src/models -> src/gpu; src/chat, the chat protocol, and
// src/common are leaves all may use):
// src/envs, src/rl and src/gpu import no React, zustand, Monaco or UI code; src/gpu imports neither
// src/envs, src/rl nor src/models; src/models (catalogue and cache) imports no layer above src/gpu;
// src/envs imports neither src/gpu, src/rl, src/isolation nor src/workers; src/isolation (the one
// layer around untrusted environment code, below both hosts) imports only src/envs and the leaves;
// src/ui does not import src/gpu (it goes through src/workers); src/workers imports no UI or CLI
// code; src/cli imports neither src/ui nor src/workers (it shares the sandbox's code through src/isolation).
// Inside src/ui, `tabrl/ui-rooms` (eslint/ui-rooms.js) keeps app → features (in order) → store → kit.
// test/unit/lint/layering.test.ts proves each rule fires.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { uiRoomsPlugin } from './eslint/ui-rooms.js';

const UI_LIBRARIES = ['react', 'react-dom', 'react-dom/*', 'react/*', 'zustand', 'zustand/*', 'monaco-editor', 'monaco-editor/*', '@monaco-editor/*'];
const layerRule = (forbiddenPaths, why) => ({
  'no-restricted-imports': ['error', {
    paths: UI_LIBRARIES.filter((name) => !name.includes('*')).map((name) => ({ name, message: why })),
    patterns: [
      { group: UI_LIBRARIES.filter((name) => name.includes('*')), message: why },
      { group: forbiddenPaths, message: why },
    ],
  }],
});

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'test-results/', 'runs/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['src/chat/**', 'src/common/**'],
    rules: layerRule(['**/envs/**', '**/rl/**', '**/gpu/**', '**/isolation/**', '**/ui/**', '**/workers/**', '**/cli/**'], 'src/chat (the chat protocol) and src/common (errorMessage) are leaves: they import no other layer.'),
  },
  {
    files: ['src/rl/**'],
    rules: layerRule(['**/models/**', '**/ui/**', '**/workers/**', '**/cli/**'], 'src/rl stays free of the model catalogue and cache (src/models, a sibling), and of UI, worker and CLI code (README, layering).'),
  },
  {
    files: ['src/gpu/**'],
    rules: layerRule(['**/envs/**', '**/rl/**', '**/models/**', '**/isolation/**', '**/ui/**', '**/workers/**', '**/cli/**'], 'src/gpu imports neither src/envs, src/rl nor src/models (chat types come from src/chat/protocol.ts), and no UI, worker or CLI code (README, layering).'),
  },
  {
    files: ['src/models/**'],
    rules: layerRule(['**/envs/**', '**/rl/**', '**/isolation/**', '**/ui/**', '**/workers/**', '**/cli/**'], 'src/models (the model catalogue and cache) sits just above src/gpu: it imports neither src/envs nor src/rl, and no UI, worker or CLI code (README, layering).'),
  },
  {
    files: ['src/envs/**'],
    rules: layerRule(['**/gpu/**', '**/rl/**', '**/models/**', '**/isolation/**', '**/ui/**', '**/workers/**', '**/cli/**'], 'src/envs imports neither src/gpu, src/rl, src/models, src/isolation nor src/workers, and no UI or CLI code (README, layering).'),
  },
  {
    files: ['src/isolation/**'],
    rules: layerRule(['**/gpu/**', '**/rl/**', '**/models/**', '**/ui/**', '**/workers/**', '**/cli/**'], 'src/isolation sits below both hosts of environment code (src/workers and src/cli): it imports only src/envs and the leaves (docs/architecture.md, layering).'),
  },
  {
    files: ['src/ui/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['**/gpu/**'], message: 'src/ui does not import src/gpu: reach the model code through src/workers, and the catalogue and cache in src/models (README, layering).' }] }] },
  },
  {
    files: ['src/ui/**/*.{ts,tsx}'],
    plugins: { tabrl: uiRoomsPlugin },
    rules: { 'tabrl/ui-rooms': 'error' },
  },
  {
    files: ['src/cli/**'],
    rules: layerRule(['**/ui/**', '**/workers/**'], 'src/cli runs in Node beside the stack: it may import any layer but the React app in src/ui and the browser workers in src/workers; what it shares with the browser sandbox is in src/isolation (docs/architecture.md, layering).'),
  },
  {
    files: ['src/workers/**'],
    rules: layerRule(['**/ui/**', '**/cli/**'], 'src/workers is below src/ui: it may not import UI or CLI code.'),
  },
  {
    files: ['bin/**', 'scripts/**/*.mjs', '.ci/**', 'eslint/**'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
);
