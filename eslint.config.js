// Lint: typescript-eslint's recommended rules plus the layer boundaries of shared/STYLE.md:
// src/envs, src/rl and src/gpu import no React, zustand, Monaco or UI code, and src/workers no UI code.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
    files: ['src/envs/**', 'src/rl/**', 'src/gpu/**'],
    rules: layerRule(['**/ui/**', '**/workers/**', '**/cli/**'], 'src/envs, src/rl and src/gpu stay free of UI, worker and CLI code (shared/STYLE.md, layering).'),
  },
  {
    files: ['src/workers/**'],
    rules: layerRule(['**/ui/**', '**/cli/**'], 'src/workers is below src/ui: it may not import UI or CLI code.'),
  },
  {
    files: ['bin/**', 'scripts/**/*.mjs', '.ci/**'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
);
