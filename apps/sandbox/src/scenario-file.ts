import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { parseScenario, ScenarioError, type Scenario } from './scenario.js';

/**
 * Reads and validates a YAML (or JSON) scenario file.
 *
 * @throws {@link ScenarioError} when the file cannot be read, is not YAML, or does not
 * validate; the message names the file and the bad field's path.
 */
export async function loadScenarioFile(path: string): Promise<Scenario> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (cause) {
    throw new ScenarioError(`cannot read scenario file ${path}: ${(cause as Error).message}`, '(root)', { cause });
  }
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (cause) {
    throw new ScenarioError(`scenario file ${path} is not valid YAML: ${(cause as Error).message}`, '(root)', {
      cause,
    });
  }
  try {
    return parseScenario(raw);
  } catch (error) {
    if (error instanceof ScenarioError) {
      throw new ScenarioError(`scenario file ${path}: ${error.message}`, error.path, { cause: error.cause });
    }
    throw error;
  }
}
