/** "12 s ago", "3 min ago", "2 h ago", "4 d ago"; "never" for null. */
export function ago(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return 'never';
  const seconds = Math.max(0, Math.round((now - new Date(iso).getTime()) / 1000));
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ago`;
  return `${Math.floor(seconds / 86_400)} d ago`;
}

export function dateTime(iso: string | null | undefined): string {
  return iso ? new Date(iso).toLocaleString() : '—';
}

export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return '—';
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * How a deployment's devices stand, from its entries (one per device and service): "2 completed,
 * 1 failed of 3", "1 rolled back of 1". The API's succeeded and failed counts say nothing of a
 * device restored or rolled back, which after a rollback is every one of them.
 */
export function deviceTally(entries: { device_id: string; status: string }[], total: number): string {
  const statusOf = new Map(entries.map((e) => [e.device_id, e.status]));
  const counts = new Map<string, number>();
  for (const status of statusOf.values()) counts.set(status, (counts.get(status) ?? 0) + 1);
  const parts = [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([s, n]) => `${n} ${s.replaceAll('_', ' ')}`);
  return `${parts.length > 0 ? parts.join(', ') : 'no devices yet'} of ${total}`;
}
