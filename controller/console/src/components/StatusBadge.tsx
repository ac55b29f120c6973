import { Badge } from '@mantine/core';

const COLOURS: Record<string, string> = {
  online: 'green',
  ok: 'green',
  succeeded: 'green',
  completed: 'green',
  success: 'green',
  rolled_back: 'grape',
  degraded: 'yellow',
  partial: 'yellow',
  running: 'blue',
  in_progress: 'blue',
  rolling_back: 'blue',
  queued: 'gray',
  pending: 'gray',
  offline: 'red',
  down: 'red',
  failed: 'red',
  revoked: 'red',
  no_agents: 'gray',
  stale: 'yellow',
};

/** A state as a coloured label; the text always carries the meaning (not only the colour). */
export function StatusBadge({ status }: { status: string | null | undefined }) {
  const value = status ?? 'unknown';
  return (
    // Text two shades darker than Mantine's light variant keeps WCAG AA contrast on the tint.
    <Badge color={COLOURS[value] ?? 'gray'} variant="light" c={`${COLOURS[value] ?? 'gray'}.9`} styles={{ root: { minWidth: 'max-content' } }}>
      {value.replaceAll('_', ' ')}
    </Badge>
  );
}
