import { expect, it } from 'vitest';
import { duplicateKeys, logProblems } from './json-lines.js';

it('finds a key repeated in one object, at any depth, and nothing else', () => {
  expect(duplicateKeys('{"a":1,"b":{"a":2},"c":[{"a":1},{"a":2}]}')).toEqual([]);
  expect(duplicateKeys('{"pid":1,"msg":"x","pid":1}')).toEqual(['pid']);
  expect(duplicateKeys('{"req":{"id":"a","id":"b"},"s":"\\"id\\":"}')).toEqual(['req.id']);
  expect(duplicateKeys('{"l":[{"k":1,"k":2}]}')).toEqual(['l[].k']);
  expect(logProblems('{"a":1}\nplain text\n{"a":1,"a":2}\n[1]\n')).toEqual([
    'not JSON: plain text',
    'key a twice: {"a":1,"a":2}',
    'not an object: [1]',
  ]);
});
