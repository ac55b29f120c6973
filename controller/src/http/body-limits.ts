/**
 * Every limit on request bodies, in one place, sized from the largest legitimate request and from
 * the controller's heap: `npm run controller`, the systemd unit and the compose file give V8 256 MiB
 * of old space (`--max-old-space-size=256`, 304 MiB in all), of which an idle controller uses 60–80.
 * docs/security.md#request-bodies has the measurements behind the numbers.
 *
 * Bytes alone do not bound the heap: JSON.parse turns `{},` (3 bytes) into an object of 64 bytes,
 * and a key never seen before costs a new hidden class, so 16 MiB of JSON can become 340 MiB of
 * objects. Bodies are therefore also limited in values, counted on the raw bytes before they are
 * decoded or parsed (large-bodies.ts), and large ones are parsed and handled under a heap budget.
 */

/** Every route without its own limit: enough for any single object or a few thousand ids. */
export const DEFAULT_BODY_LIMIT = 1024 * 1024;

/**
 * Render, resolve-variables, instances and deployments (variable_values). The largest legitimate
 * body is a render or deployment over 10,000 devices with per-device variables: the render
 * benchmark's (three services; 8 interfaces and 4 BGP neighbors a device) is 10.3 MiB with 570,000
 * values at 10,000 devices. 16 MiB leaves half as much again.
 */
export const VARIABLE_VALUES_BODY_LIMIT = 16 * 1024 * 1024;

/** CSV and JSON device imports: 50,000 rows (MAX_IMPORT_ROWS) of about 400 bytes each. */
export const IMPORT_BODY_LIMIT = 20 * 1024 * 1024;

/**
 * Most JSON values in one body, counted as the `{`, `[` and `,` outside strings (about one per
 * value or object member). 1.75 times the 10,000-device render above; at most 92 bytes of heap
 * each once parsed (measured, worst shape: objects each with a key never seen before), so a body
 * at the limit parses into at most about 90 MiB plus its text.
 */
export const MAX_BODY_VALUES = 1_000_000;

/** Rows of one device import (CSV or JSON): five times the 10,000 devices an import must take. */
export const MAX_IMPORT_ROWS = 50_000;

/**
 * Fields of one CSV import (every comma and line break outside quotes starts one): 50,000 rows of
 * 20 columns. csv-parse keeps every field until the end, extra columns included.
 */
export const MAX_IMPORT_FIELDS = 1_000_000;

/**
 * Bodies from this size are counted and parsed under the heap budget; a smaller one parses into at
 * most about 6 MiB (22 bytes of heap per byte), so a few at once need no accounting.
 */
export const LARGE_BODY_BYTES = 256 * 1024;

/**
 * What a large body is taken to cost while its request runs: its text decoded (up to 2 bytes a
 * byte when one character is outside Latin-1), the strings parsed out of it (as much again), and
 * HEAP_BYTES_PER_VALUE for each counted value or CSV field.
 */
export const HEAP_BYTES_PER_BODY_BYTE = 4;
export const HEAP_BYTES_PER_VALUE = 96;

/**
 * Share of V8's heap limit that large bodies being parsed and handled may take at once (121 MiB of
 * a 304 MiB heap). A body that costs more than the whole budget (a 16 MiB body at the value limit
 * can: 156 MiB) waits until no other large body is in hand and then runs alone.
 */
export const LARGE_BODY_HEAP_SHARE = 0.4;

/** 16 MiB, 256 KiB, 1,000 bytes: how a limit reads in a message. */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes.toLocaleString('en-US')} bytes`;
}
