import { builtinModules } from 'node:module';
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
