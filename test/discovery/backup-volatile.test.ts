import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DIALECT_TYPES, getDialect, stableConfigLines } from '../../agent/src/drivers/ssh/dialects';
import { renderLines } from '../../agent/src/drivers/ssh/text';

/**
 * Backups of real-layout configurations (test/fixtures/backups/<dialect>/<name>.{a,b,changed}.txt):
 * a and b are two pulls of an unchanged device that differ only in what the device rewrites on
 * every pull (timestamps, byte counts, ntp clock-period, checksums, commit stamps); they must
 * store as the same text, hence the same hash. `changed` carries one real configuration change
 * on top of b and must hash differently, so the filters never hide a change.
 */
const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'backups');
const hash = (dialect: string, file: string) => {
  const lines = renderLines(readFileSync(join(FIXTURES, dialect, file), 'utf8'));
  return createHash('sha256')
    .update(stableConfigLines(getDialect(dialect), lines).join('\n'))
    .digest('hex');
};
const dialects = readdirSync(FIXTURES);

describe('volatile lines of real configurations', () => {
  it('every SSH dialect has captures', () => {
    expect(dialects.filter((d) => !DIALECT_TYPES.includes(d))).toEqual([]);
    expect(DIALECT_TYPES.filter((d) => d !== 'custom' && !dialects.includes(d))).toEqual([]);
  });

  for (const dialect of dialects) {
    const names = [...new Set(readdirSync(join(FIXTURES, dialect)).map((f) => f.replace(/\.(a|b|changed)\.txt$/, '')))];
    for (const name of names) {
      it(`${dialect} ${name}: two pulls of the unchanged device hash the same, a real change does not`, () => {
        const a = readFileSync(join(FIXTURES, dialect, `${name}.a.txt`), 'utf8');
        const b = readFileSync(join(FIXTURES, dialect, `${name}.b.txt`), 'utf8');
        expect(a).not.toBe(b);
        expect(hash(dialect, `${name}.a.txt`)).toBe(hash(dialect, `${name}.b.txt`));
        expect(hash(dialect, `${name}.changed.txt`)).not.toBe(hash(dialect, `${name}.b.txt`));
      });
    }
  }
});
