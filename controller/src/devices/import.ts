import { parse } from 'csv-parse/sync';
import { appError } from '../errors/app-error';
import { MAX_IMPORT_FIELDS, MAX_IMPORT_ROWS } from '../http/body-limits';
import { deviceFieldProblem } from './rules';

/** Import rule 2: the CSV columns (and JSON keys) in the order API.md gives them. */
export const IMPORT_COLUMNS = ['name', 'host', 'device_type', 'manufacturer', 'model', 'platform', 'site', 'description'] as const;
const REQUIRED = ['name', 'host', 'device_type'] as const;
const MAX_LENGTH: Record<string, number> = { name: 255, host: 253, device_type: 64, description: 2000 };

type Column = (typeof IMPORT_COLUMNS)[number];
export type ImportFields = Record<Column, string>;

/** One input row before checks: its number as the person sees it, and its raw values. */
export interface ImportRow {
  row: number;
  values: unknown;
}

export interface ImportError {
  row: number;
  name: string;
  error: string;
}

/**
 * Records and fields of a CSV body, counted on its bytes before csv-parse sees them: a record ends
 * at every line break outside quotes (CRLF once, a lone CR or LF each), and a field at every comma
 * outside quotes too. Never fewer than csv-parse makes (it stops at a quote it would not open or
 * close, and the count does not), so the limits hold whatever the file.
 */
export function csvShape(bytes: Uint8Array): { records: number; fields: number } {
  let records = 0;
  let commas = 0;
  let quoted = false;
  const n = bytes.length;
  for (let i = 0; i < n; i++) {
    const b = bytes[i];
    if (b > 0x2c) continue; // every byte that matters ('"', ',', CR, LF) is at most ','
    if (b === 0x22) quoted = !quoted;
    else if (quoted) continue;
    else if (b === 0x2c) commas++;
    else if (b === 0x0a || (b === 0x0d && bytes[i + 1] !== 0x0a)) records++;
  }
  const last = bytes[n - 1];
  if (n > 0 && last !== 0x0a && last !== 0x0d) records++;
  return { records, fields: records + commas };
}

/**
 * Refuses a CSV import over MAX_IMPORT_ROWS rows (the header aside) or MAX_IMPORT_FIELDS fields
 * before it is decoded or parsed: csv-parse keeps every record until the end, and each row of a
 * length other than the header's costs it an error object (tens of microseconds).
 * Returns the field count, for the heap budget.
 */
export function checkCsvSize(bytes: Uint8Array): number {
  const { records, fields } = csvShape(bytes);
  const rows = Math.max(records - 1, 0);
  if (rows > MAX_IMPORT_ROWS || fields > MAX_IMPORT_FIELDS) {
    const n = (x: number) => x.toLocaleString('en-US');
    throw appError(
      'IMPORT_TOO_MANY_ROWS',
      `A device import takes at most ${n(MAX_IMPORT_ROWS)} rows and ${n(MAX_IMPORT_FIELDS)} fields; this CSV has ${n(rows)} row${rows === 1 ? '' : 's'} and ` +
        `${n(fields)} fields: split it into several files`,
      { max_rows: MAX_IMPORT_ROWS, max_fields: MAX_IMPORT_FIELDS },
    );
  }
  return fields;
}

/**
 * CSV text → rows. The header is row 1 and every following record is the next row (a quoted
 * value may span lines); blank lines count as rows and are skipped. Handles a UTF-8 BOM, CRLF,
 * quoted commas and newlines; extra columns are ignored; a header without name, host or
 * device_type is refused naming the missing ones.
 */
export function parseCsv(text: string): ImportRow[] {
  let records: string[][];
  try {
    records = parse(text, { bom: true, relax_column_count: true, skip_empty_lines: false });
  } catch (err) {
    throw appError('IMPORT_INVALID_CSV', `CSV could not be parsed: ${(err as Error).message}`);
  }
  const blank = (record: string[]) => record.every((value) => value.trim() === '');
  while (records.length > 0 && blank(records[records.length - 1])) records.pop();
  if (records.length === 0 || blank(records[0])) throw appError('IMPORT_EMPTY');
  const header = records[0].map((h) => h.trim().toLowerCase());
  const missing = REQUIRED.filter((column) => !header.includes(column));
  if (missing.length > 0) {
    throw appError('IMPORT_MISSING_COLUMNS', `CSV header is missing required columns: ${missing.join(', ')}`, { missing_columns: missing });
  }
  const index = Object.fromEntries(IMPORT_COLUMNS.map((column) => [column, header.indexOf(column)]));
  const rows: ImportRow[] = [];
  records.forEach((record, i) => {
    if (i === 0 || blank(record)) return;
    const values: Record<string, string> = {};
    for (const column of IMPORT_COLUMNS) if (index[column] >= 0) values[column] = record[index[column]] ?? '';
    rows.push({ row: i + 1, values });
  });
  return rows;
}

/** JSON array items → rows numbered from 1 in array order. */
export function jsonRows(items: unknown[]): ImportRow[] {
  return items.map((values, i) => ({ row: i + 1, values }));
}

/** Why one row cannot become a device, or its trimmed fields. */
function checkRow(values: unknown): { fields: ImportFields; error?: string } {
  const fields = Object.fromEntries(IMPORT_COLUMNS.map((c) => [c, ''])) as ImportFields;
  if (typeof values !== 'object' || values === null || Array.isArray(values)) {
    return { fields, error: 'Row must be an object with name, host and device_type' };
  }
  for (const column of IMPORT_COLUMNS) {
    const value = (values as Record<string, unknown>)[column];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string' && typeof value !== 'number') return { fields, error: `${column} must be a string` };
    fields[column] = String(value).trim();
  }
  const empty = REQUIRED.filter((column) => fields[column] === '');
  if (empty.length > 0) return { fields, error: `Missing required ${empty.join(', ')}` };
  for (const column of IMPORT_COLUMNS) {
    const max = MAX_LENGTH[column] ?? 200;
    if (fields[column].length > max) return { fields, error: `${column} is longer than ${max} characters` };
  }
  const problem = deviceFieldProblem(fields);
  return problem ? { fields, error: problem.message } : { fields };
}

/** Rules 1, 2 and duplicate names inside one file; rule 4 (names already stored) is the insert's. */
export function validateImportRows(rows: ImportRow[]): { valid: { row: number; fields: ImportFields }[]; errors: ImportError[] } {
  const valid: { row: number; fields: ImportFields }[] = [];
  const errors: ImportError[] = [];
  const firstRow = new Map<string, number>();
  for (const { row, values } of rows) {
    const { fields, error } = checkRow(values);
    if (error) {
      errors.push({ row, name: fields.name, error });
      continue;
    }
    const earlier = firstRow.get(fields.name);
    if (earlier !== undefined) {
      errors.push({ row, name: fields.name, error: `Duplicate name in this file (first at row ${earlier})` });
      continue;
    }
    firstRow.set(fields.name, row);
    valid.push({ row, fields });
  }
  return { valid, errors };
}
