/**
 * Says so while something the agent needs keeps it waiting: the first line at once (a silent
 * agent looks hung), then one every `everyMs`, until stopped.
 */
export function whileWaiting(everyMs: number, say: () => void, firstAfterMs = 1_000): { stop(): void } {
  let timer: NodeJS.Timeout = setTimeout(function tick() {
    say();
    timer = setTimeout(tick, everyMs);
  }, firstAfterMs);
  return { stop: () => clearTimeout(timer) };
}
