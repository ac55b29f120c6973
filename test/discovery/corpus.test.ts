import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { discoveryDialect, DISCOVERY_DIALECT_TYPES } from '../../agent/src/discovery/dialects';
import { SECTION_RECORDS, type SectionName } from '../../shared/src/discovery/records';
import { pollOverCli } from '../../agent/src/discovery/ssh-poll';
import { DriverError } from '../../agent/src/drivers/types';

/**
 * The corpus of real-layout captures: test/fixtures/discovery/<dialect>/<command>/<name>.txt is
 * what a device printed for that command (text, or JSON for a `| json` folder) and <name>.json the
 * records an engineer reads off it,
 * with the section status the poll must report (ok unless stated) and the captures of any other
 * command the poll runs for it (`also`). Each capture goes through a whole CLI poll, so what is
 * checked is what would be stored, partial status included.
 */
const CORPUS = join(import.meta.dirname, '..', 'fixtures', 'discovery');
const slug = (command: string) =>
  command
    .trim()
    .replace(/[^A-Za-z0-9]+/g, '-')
    .toLowerCase();

interface Case {
  about: string;
  records: unknown[];
  status?: 'ok' | 'partial';
  skipped_lines?: number;
  also?: Record<string, string>;
}

/** The section whose text or structured (`| json`) command the folder is named after, and that command. */
function sectionOf(dialect: string, folder: string): { section: SectionName; command: string } {
  for (const [section, spec] of Object.entries(discoveryDialect(dialect))) {
    const command = [spec?.command, spec?.structured?.command].find((c) => c !== undefined && slug(c) === folder);
    if (command) return { section: section as SectionName, command };
  }
  throw new Error(`${dialect}/${folder}: no section of ${dialect} runs this command`);
}

async function pollCapture(dialect: string, { section, command }: ReturnType<typeof sectionOf>, dir: string, name: string, c: Case) {
  const outputs: Record<string, string> = { [command]: readFileSync(join(dir, `${name}.txt`), 'utf8') };
  for (const [cmd, file] of Object.entries(c.also ?? {})) outputs[cmd] = readFileSync(join(dir, file), 'utf8');
  const run = async (cmd: string) => {
    if (cmd in outputs) return outputs[cmd];
    throw new DriverError('device', `'${cmd}' is not part of this capture`);
  };
  const polled = await pollOverCli({ run }, dialect);
  const result = polled.sections.find((s) => s.name === section)!;
  const records = (polled.records[SECTION_RECORDS[section]] as { protocol?: string }[]).filter(
    (r) => r.protocol === undefined || r.protocol === section,
  );
  return { result, records };
}

const dialects = readdirSync(CORPUS);

describe('discovery corpus', () => {
  it('holds only known dialects and commands their dialect runs, every capture with its expectations', () => {
    expect(dialects.filter((d) => !DISCOVERY_DIALECT_TYPES.includes(d))).toEqual([]);
    for (const dialect of dialects) {
      for (const folder of readdirSync(join(CORPUS, dialect))) {
        sectionOf(dialect, folder);
        const dir = join(CORPUS, dialect, folder);
        const files = readdirSync(dir);
        const referenced = new Set(
          files.filter((f) => f.endsWith('.json')).flatMap((f) => Object.values((JSON.parse(readFileSync(join(dir, f), 'utf8')) as Case).also ?? {})),
        );
        for (const f of files.filter((f) => f.endsWith('.txt'))) {
          expect(existsSync(join(dir, f.replace(/\.txt$/, '.json'))) || referenced.has(f), `${dialect}/${folder}/${f} has no expectations`).toBe(
            true,
          );
        }
      }
    }
  });

  for (const dialect of dialects) {
    for (const folder of readdirSync(join(CORPUS, dialect))) {
      const dir = join(CORPUS, dialect, folder);
      for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
        const name = file.replace(/\.json$/, '');
        const c = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Case;
        it(`${dialect} ${folder} ${name}: ${c.about}`, async () => {
          const found = sectionOf(dialect, folder);
          const { result, records } = await pollCapture(dialect, found, dir, name, c);
          expect(result.source).toBe(found.command);
          expect(records).toEqual(c.records);
          expect(result.status).toBe(c.status ?? 'ok');
          expect(result.skipped_lines).toBe(c.skipped_lines ?? 0);
          expect(result.records).toBe(c.records.length);
          if (result.status === 'partial') expect(result.unparsed_lines!.length).toBeGreaterThan(0);
        });
      }
    }
  }
});
