import { builtinModules } from 'node:module';
import stylistic from '@stylistic/eslint-plugin';
import tseslint from 'typescript-eslint';

// Only the rules the project relies on; the type-aware ones read tsconfig.json through the project service.
export default tseslint.config(
  { ignores: ['node_modules/**', '.data/**', 'bin/*.js'] },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
    },
  },
  {
    // The formatter, run by `npm test` through `npm run lint` (`npm run lint -- --fix` applies it): the
    // code's own style, 2-space indent, single quotes (SQL in template literals), semicolons, 160 columns.
    files: ['**/*.ts'],
    ignores: ['clients/typescript/src/schema.ts'],
    plugins: { '@stylistic': stylistic },
    rules: {
      '@stylistic/indent': ['error', 2, { SwitchCase: 1, flatTernaryExpressions: true, ignoredNodes: ['TemplateLiteral *'] }],
      '@stylistic/quotes': ['error', 'single', { avoidEscape: true, allowTemplateLiterals: 'always' }],
      '@stylistic/semi': ['error', 'always'],
      '@stylistic/comma-dangle': ['error', 'always-multiline'],
      '@stylistic/comma-spacing': 'error',
      '@stylistic/key-spacing': 'error',
      '@stylistic/keyword-spacing': 'error',
      '@stylistic/space-before-blocks': 'error',
      '@stylistic/space-infix-ops': 'error',
      '@stylistic/arrow-spacing': 'error',
      '@stylistic/brace-style': ['error', '1tbs', { allowSingleLine: true }],
      '@stylistic/eol-last': 'error',
      '@stylistic/no-trailing-spaces': 'error',
      '@stylistic/no-multiple-empty-lines': ['error', { max: 1, maxEOF: 0 }],
      '@stylistic/no-tabs': 'error',
      '@stylistic/member-delimiter-style': 'error',
      '@stylistic/type-annotation-spacing': 'error',
      // Lines are wrapped as code; only a template literal (SQL, HTML: a line break would change its text), a URL
      // or a regular expression may run longer.
      '@stylistic/max-len': ['error', {
        code: 160, ignoreUrls: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true,
      }],
    },
  },
  {
    // Workflow code is replayed in Temporal's sandbox: it must stay deterministic and bundle alone.
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        paths: builtinModules.filter((name) => !name.startsWith('_')).map((name) => ({
          name, message: 'Workflows cannot use Node built-ins; do the work in an activity.',
        })),
        patterns: [
          { regex: '^node:', message: 'Workflows cannot use Node built-ins; do the work in an activity.' },
          {
            regex: '(^|/)(activities|db|runtime)(/|$)',
            allowTypeImports: true,
            message: 'Workflows may only `import type` from activities, db and runtime; call them through proxyActivities.',
          },
        ],
      }],
    },
  },
);
