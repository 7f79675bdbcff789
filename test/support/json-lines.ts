/**
 * The keys that appear twice in one object of a JSON text, as `path.key` (`JSON.parse` keeps
 * the last and hides the first, so the raw text is scanned). The text must be valid JSON.
 */
export function duplicateKeys(text: string): string[] {
  const found: string[] = [];
  const stack: { keys: Set<string> | undefined; path: string; key?: string }[] = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      const value = JSON.parse(text.slice(i, j + 1)) as string;
      const top = stack.at(-1);
      if (expectKey && top?.keys) {
        if (top.keys.has(value)) found.push(`${top.path}${value}`);
        top.keys.add(value);
        top.key = value;
        expectKey = false;
      }
      i = j;
    } else if (c === '{') {
      const parent = stack.at(-1);
      const path = parent ? `${parent.path}${parent.keys ? (parent.key ?? '') : '[]'}.` : '';
      stack.push({ keys: new Set(), path });
      expectKey = true;
    } else if (c === '[') {
      const parent = stack.at(-1);
      stack.push({ keys: undefined, path: parent ? `${parent.path}${parent.key ?? ''}` : '' });
    } else if (c === '}' || c === ']') {
      stack.pop();
    } else if (c === ',') {
      expectKey = stack.at(-1)?.keys !== undefined;
    }
  }
  return found;
}

/**
 * Every problem of a process's output as a log: a line that is not one JSON object, or one
 * whose object repeats a key.
 */
export function logProblems(output: string): string[] {
  const problems: string[] = [];
  for (const line of output.split('\n')) {
    if (line.trim() === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      problems.push(`not JSON: ${line}`);
      continue;
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      problems.push(`not an object: ${line}`);
      continue;
    }
    const twice = duplicateKeys(line);
    if (twice.length > 0) problems.push(`key ${twice.join(', ')} twice: ${line}`);
  }
  return problems;
}
