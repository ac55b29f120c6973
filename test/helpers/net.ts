import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import net from 'node:net';

/** Small process and port helpers shared by every test that starts a real peer (sshd, slapd, netconfd, nats-server). */

/**
 * Ports handed out come from below Linux's ephemeral range (32768-60999), where the kernel never
 * picks a port for a connection or a listen(0): a port checked free here was then taken by some
 * other process's outgoing connection or port-0 server before our peer bound it (nats-server failed
 * with "address already in use"). Only another freePort caller can still pick the same one, out of
 * 22,000, and never within this process.
 */
const RANGE = { from: 10_000, to: 32_767 };
const handedOut = new Set<number>();

function listenable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** A TCP port free on 127.0.0.1 right now, outside the ephemeral range. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = RANGE.from + Math.floor(Math.random() * (RANGE.to - RANGE.from + 1));
    if (handedOut.has(port)) continue;
    if (await listenable(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`no free port between ${RANGE.from} and ${RANGE.to} after 200 tries`);
}

/**
 * Whether process `pid` holds a socket listening on `port` (Linux /proc). A port
 * picked free can be taken by another test's server before ours binds it; without this check a
 * readiness probe would take that server's answer for ours.
 */
export function listensOn(pid: number, port: number): boolean {
  const suffix = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const inodes = ['/proc/net/tcp', '/proc/net/tcp6']
    .flatMap((table) => readFileSync(table, 'utf8').split('\n'))
    .map((line) => line.trim().split(/\s+/))
    .filter((cols) => cols[1]?.endsWith(suffix) && cols[3] === '0A') // 0A: LISTEN
    .map((cols) => `socket:[${cols[9]}]`);
  if (!inodes.length) return false;
  const fdDir = `/proc/${pid}/fd`;
  return readdirSync(fdDir).some((fd) => {
    try {
      return inodes.includes(readlinkSync(`${fdDir}/${fd}`));
    } catch {
      return false; // closed since the listing
    }
  });
}

/** Polls `check` until it holds; fails early with the peer's logs if the process exits. */
export async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  proc: ChildProcess,
  logs: () => string,
  limitMs = 15_000,
): Promise<void> {
  const until = Date.now() + limitMs;
  while (Date.now() < until) {
    if (proc.exitCode !== null) throw new Error(`${what}: process exited with ${proc.exitCode}\n${logs()}`);
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what}: not ready after ${limitMs}ms\n${logs()}`);
}

/** SIGTERM, then SIGKILL after 3 s; resolves once the process has exited. */
export function stopProcess(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const t = setTimeout(() => proc.kill('SIGKILL'), 3000);
    proc.once('exit', () => {
      clearTimeout(t);
      resolve();
    });
    proc.kill('SIGTERM');
  });
}
