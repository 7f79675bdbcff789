// The import-cycle guard (`npm run check:cycles`, run by .ci/run). Type-only imports count:
// a cycle through types is still two modules that cannot be understood one without the other.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import cycle: move what both modules need into a third one (or into the one that owns it).',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|node_modules)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      // Workspace packages resolve to their sources, as in the tests: a cycle across packages shows too.
      conditionNames: ['@sluice/source', 'import', 'types', 'default'],
      exportsFields: ['exports'],
      extensions: ['.ts', '.js', '.mjs', '.json'],
    },
  },
};
