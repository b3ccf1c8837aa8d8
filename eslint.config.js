// Lint: typescript-eslint's recommended rules (syntax-level, no type information, so it stays fast).
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      '.servers/**',
      'scripts/servers/**/node_modules/**',
      'core/src/data/migrations/**',
      'bench/results/**',
      'plugins/web-client/www/**',
      'plugins/web-client/www-admin/**',
      'plugins/web-client/app/generated/**',
    ],
  },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      'no-control-regex': 'off',
    },
  },
  {
    // Dependencies point one way (GUIDE.md section 1): protocol front ends (core/src/http) use the
    // domain, never the reverse. Domain code throws core/src/errors.ts errors, never Boom. The
    // composition roots (app.ts builds the HTTP server, testing.ts hands it to tests) are exempt.
    files: ['core/src/**/*.ts'],
    ignores: ['core/src/http/**', 'core/src/app.ts', 'core/src/testing.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['@hapi/*'], message: 'HTTP belongs in core/src/http: throw a core/src/errors.ts error instead of Boom.' },
            { group: ['**/http/*', '**/http'], message: 'Domain code must not depend on the HTTP front end (core/src/http).' },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        fetch: 'readonly',
        AbortController: 'readonly',
        require: 'readonly',
        module: 'writable',
        __dirname: 'readonly',
      },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
