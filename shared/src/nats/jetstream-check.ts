/**
 * Jobs and results travel through JetStream work queues, so a NATS server without JetStream
 * cannot carry them. nats.js reports that as a bare "503" when the JetStream API is first used;
 * both sides turn it into one line a person can act on.
 */
export function jetStreamMissing(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  return String(e?.code) === '503' || /jetstream not enabled/i.test(String(e?.message ?? ''));
}

export const JETSTREAM_REQUIRED = (url: string) =>
  `the NATS server at ${url} does not have JetStream enabled; start it with JetStream (nats-server -js, or a "jetstream {}" block in its configuration)`;
