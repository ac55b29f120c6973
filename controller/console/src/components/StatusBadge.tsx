import './status-badge.css';

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
    <span className="sb-badge" data-color={COLOURS[value] ?? 'gray'}>
      {value.replaceAll('_', ' ')}
    </span>
  );
}
