import type { AgentLink, DeliveredJob } from '../../../shared/src/jobs/link';

/**
 * The link, handing back at close every job message it delivered that was neither acked nor
 * dropped: jobs still running when an agent's stop grace ran out go to another agent of the
 * pool at once instead of after the ack wait.
 */
export function releaseOnClose<L extends AgentLink>(link: L): L {
  const outstanding = new Set<DeliveredJob>();
  const tracked = (job: DeliveredJob): DeliveredJob => {
    outstanding.add(job);
    const settle = (fn: () => void) => () => {
      outstanding.delete(job);
      fn();
    };
    return { ...job, working: () => job.working(), ack: settle(() => job.ack()), term: settle(() => job.term()), nak: settle(() => job.nak()) };
  };
  return new Proxy(link, {
    get(target, prop) {
      if (prop === 'pull')
        return (max: number, waitMs: number, onJob: (job: DeliveredJob) => void) => target.pull(max, waitMs, (job) => onJob(tracked(job)));
      if (prop === 'close') {
        return async () => {
          const released = outstanding.size;
          for (const job of outstanding) job.nak();
          outstanding.clear();
          // The naks must reach the server before the connection goes (bounded: NATS may be down).
          const nc = (target as { connection?: { flush(): Promise<void> } }).connection;
          if (released > 0 && nc) await Promise.race([nc.flush().catch(() => undefined), new Promise((r) => setTimeout(r, 2_000).unref())]);
          await target.close();
        };
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
