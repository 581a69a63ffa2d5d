/**
 * The linter (`npm run lint`, run by CI): ESLint's recommended rules and typescript-eslint's for
 * src/, tests/, bench/ and scripts/.
 */
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'federation/comunica/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      // Unused parameters and caught errors named with a leading underscore are deliberate.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
    },
  },
  {
    // Control characters are what these patterns look for (names, XML 1.0 and SPARQL text checks).
    rules: { 'no-control-regex': 'off' },
  },
  {
    // commander hands each command its parsed options untyped; the command reads them into typed options.
    files: ['src/cli/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Pages run in the browser: their scripts see the DOM's globals.
    files: ['src/**/page*.ts', 'src/view/**/*.ts', 'src/serve/query-page.ts'],
    languageOptions: { globals: { ...globals.browser, ...globals.node } },
  },
);
