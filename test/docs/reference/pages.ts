// The generated reference pages under docs/reference/: which file each is and how it is made.
// `npm run docs:reference` writes them; test/docs/reference.test.ts fails when one is stale.
import { cliPage } from './cli.js';
import { configurationPage } from './config.js';
import { errorsPage } from './errors.js';
import { metricsPage } from './metrics.js';
import { openApiPage } from './openapi.js';

/** Each generated page: its path from the repository's root, and its text. */
export async function referencePages(): Promise<[path: string, text: string][]> {
  return [
    ['docs/reference/configuration.md', configurationPage()],
    ['docs/reference/errors.md', errorsPage()],
    ['docs/reference/cli.md', await cliPage()],
    ['docs/reference/metrics.md', await metricsPage()],
    ['docs/reference/openapi.json', await openApiPage()],
  ];
}
