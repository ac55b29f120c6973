import { CATALOGUE } from './catalogue';

const rows = Object.entries(CATALOGUE)
  .sort(([a], [b]) => a.localeCompare(b))
  .map(([code, spec]) => `| ${code} | ${spec.status} | ${spec.message} | ${spec.doc} |`);
console.log(
  [
    '# Error codes',
    '',
    'Every error body is `{"error": "...", "code": "..."}` (snapshot endpoints answer plain text).',
    '',
    '| code | status | default message | meaning |',
    '|---|---|---|---|',
    ...rows,
  ].join('\n'),
);
