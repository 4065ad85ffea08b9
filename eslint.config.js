// Lint: the recommended rules of ESLint and typescript-eslint, plus the few house rules below. Formatting is
// Prettier's job (eslint-config-prettier turns off every rule it would fight).
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  prettier,
  { languageOptions: { globals: globals.node } },
  { files: ['src/views/**'], languageOptions: { globals: globals.browser } },
  {
    rules: {
      // A name starting with _ is unused on purpose (a parameter a signature requires, a value destructured away).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      eqeqeq: ['error', 'smart'],
    },
  },
  {
    // The server's code: stdout carries MCP messages only (the server logs through its logger, on stderr).
    files: ['src/**'],
    rules: {
      'no-console': 'error',
      // Text for a model is built by small functions with early returns, one case per line, not chains of ternaries.
      'no-nested-ternary': 'error',
    },
  },
  {
    // TypeScript itself reports undefined names in .ts files (typescript-eslint's advice).
    files: ['**/*.ts'],
    rules: { 'no-undef': 'off' },
  },
);
