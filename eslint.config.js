import tseslint from 'typescript-eslint';

// Boundaries (STYLE.md, Layout and boundaries; Errors and config).
// A package is imported through its face (`@sluice/<pkg>`, its `exports` map), never a path inside it.
const deepImports = [
  {
    regex: '^@sluice/[^/]+/.+',
    message: 'Import a Sluice package by its name only (`@sluice/<pkg>`): a path inside it is not part of its face.',
  },
  {
    regex: '^(\\.\\./)+((packages|apps)/)?[^./][^/]*/src(/|$)',
    message: "This reaches into another package's `src`: import it as `@sluice/<pkg>`.",
  },
];
// Only the config loader reads the environment; what else needs it gets it from the config.
const envMessage =
  'Only the config loader (packages/core/src/load-config.ts) reads `process.env`: read it from the config, or take it as an option (tests: from test/support).';
const processEnv = [
  { selector: "MemberExpression[object.name='process'][property.name='env']", message: envMessage },
  { selector: "MemberExpression[object.property.name='process'][property.name='env']", message: envMessage },
  {
    selector: "VariableDeclarator[init.name='process'] > ObjectPattern > Property[key.name='env']",
    message: envMessage,
  },
];
const deepDynamicImports = deepImports.map(({ regex, message }) => ({
  selector: `ImportExpression[source.value=/${regex.replaceAll('/', '\\/')}/]`,
  message,
}));
// One owner per stored shape (STYLE.md, Names that last): the campaign hash and the message
// record are read and written only by their owners, packages/store/src/campaigns/ and
// packages/store/src/records/, through their codecs (campaigns/codec.ts, records/codec.ts).
// Anywhere else in a `src`, their key builders (`keys.campaign`, `keys.message`) and the hash's
// own field prefixes (`n:`, `win:`, `archive:`) are refused: call a @sluice/store function.
const ownerMessage =
  'The campaign hash and the message record belong to packages/store/src/campaigns/ and records/ (their codecs): call a @sluice/store function instead (readCampaignFlags, readStoredCampaign(s), store.get, store.inspect, campaigns.status, …).';
const rawStoreAccess = [
  { selector: "MemberExpression[object.name='keys'][property.name=/^(campaign|message)$/]", message: ownerMessage },
  {
    selector: "MemberExpression[object.property.name='keys'][property.name=/^(campaign|message)$/]",
    message: ownerMessage,
  },
  {
    selector: "VariableDeclarator[init.name='keys'] > ObjectPattern > Property[key.name=/^(campaign|message)$/]",
    message: ownerMessage,
  },
  { selector: 'Literal[value=/^(n|win|archive):/]', message: ownerMessage },
  { selector: 'TemplateElement[value.raw=/^(n|win|archive):/]', message: ownerMessage },
];
const storeOwners = ['packages/store/src/campaigns/**', 'packages/store/src/records/**'];

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/*.config.*', 'eslint.config.js', '.dependency-cruiser.cjs'] },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      '@typescript-eslint/require-await': 'off',
      'no-restricted-imports': ['error', { patterns: deepImports }],
      'no-restricted-syntax': ['error', ...processEnv, ...deepDynamicImports],
    },
  },
  // The scripts are plain Node (no tsconfig covers them): the rules that need types are off.
  { files: ['scripts/**'], ...tseslint.configs.disableTypeChecked },
  {
    // Where the environment may be read: the config loader; a process's entry point, which
    // hands its environment over (apps' main.ts); the repository's scripts, which start
    // processes; and the tests' one support folder, which gives tests the environment.
    files: ['packages/core/src/load-config.ts', 'apps/*/src/main.ts', 'scripts/**', 'test/support/**'],
    rules: { 'no-restricted-syntax': ['error', ...deepDynamicImports] },
  },
  {
    // Raw access to the campaign hash and the message record stays with their owners.
    files: ['packages/*/src/**', 'apps/*/src/**'],
    ignores: [...storeOwners, 'packages/core/src/load-config.ts', 'apps/*/src/main.ts'],
    rules: { 'no-restricted-syntax': ['error', ...processEnv, ...deepDynamicImports, ...rawStoreAccess] },
  },
  {
    files: ['apps/*/src/main.ts'],
    rules: { 'no-restricted-syntax': ['error', ...deepDynamicImports, ...rawStoreAccess] },
  },
);
