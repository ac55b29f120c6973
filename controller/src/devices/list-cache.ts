/**
 * Recent GET /api/devices answers of this controller, each with the organization's device list
 * version (migration 110) read in the same statement as the body. An answer is reused only while
 * the organization's version is still that one, which makes the cache correct across controllers:
 * a write through any of them gives the organization a new version in the same transaction.
 *
 * Bounded: least recently used entries go first. A list body is at most 100 summary rows
 * (~40 KB), so the default bound keeps this under ~10 MB.
 */
export interface CachedList {
  version: number;
  body: Buffer;
}

export class DeviceListCache {
  private readonly entries = new Map<string, CachedList>();

  constructor(private readonly capacity = 256) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: string): CachedList | undefined {
    const entry = this.entries.get(key);
    if (entry) {
      // Map keeps insertion order: re-inserting marks the entry as most recently used.
      this.entries.delete(key);
      this.entries.set(key, entry);
    }
    return entry;
  }

  set(key: string, entry: CachedList): void {
    const current = this.entries.get(key);
    // A slower read that saw an older version must not replace a newer answer.
    if (current && current.version > entry.version) return;
    this.entries.delete(key);
    this.entries.set(key, entry);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as string);
  }
}
