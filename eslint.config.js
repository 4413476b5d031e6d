import neostandard from 'neostandard'

// The Fastify ecosystem's style (standard, with TypeScript), as Fastify core and the @fastify plugins use it.
export default [
  ...neostandard({
    ts: true,
    ignores: ['dist/**', 'build/**', 'coverage/**', '.tap/**', 'tap-snapshots/**', 'test/fixtures/consumer/**']
  }),
  {
    rules: {
      // TypeBox's idiom names a schema and its static type alike (`const Item = Type.Object(...)`,
      // `type Item = Static<typeof Item>`); the compiler itself refuses a real redeclaration.
      '@typescript-eslint/no-redeclare': 'off'
    }
  },
  {
    // Fastify's line length (its eslint settings): 120 characters of code; a URL, a string, a template
    // literal, a regular expression or a comment (trailing ones too) may run longer rather than be cut.
    rules: {
      'max-len': ['error', {
        code: 120,
        tabWidth: 2,
        ignoreUrls: true,
        ignoreStrings: true,
        ignoreTemplateLiterals: true,
        ignoreRegExpLiterals: true,
        ignoreComments: true,
        ignoreTrailingComments: true
      }]
    }
  },
  {
    // Typed linting of the library and its tests: an assertion the compiler does not need is an error,
    // so every one left says something the types do not. (The type tests assert types on purpose.)
    files: ['lib/**/*.ts', 'test/**/*.ts'],
    ignores: ['test/types/**', 'test/fixtures/**'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: { '@typescript-eslint/no-unnecessary-type-assertion': 'error' }
  },
  {
    // Type tests declare classes and schemas only for the compiler to judge: `void Items` keeps
    // such a class "used" under noUnusedLocals, and a schema may be read only by `typeof`.
    files: ['test/types/**'],
    rules: { 'no-void': 'off', '@typescript-eslint/no-unused-vars': 'off' }
  }
]
