/**
 * The interactive-shell reader: collects what the device sends, answers pager prompts, and
 * resolves once the last line of output is what the caller waits for (usually a prompt).
 * Every wait is bounded by an overall limit and an idle limit; output size is bounded; a
 * device that sends binary noise instead of text is noticed.
 */
import { StringDecoder } from 'node:string_decoder';
import type { Duplex } from 'node:stream';
import { DriverError } from '../types';
import { countBinary, formatBytes, renderLine, stripAnsi, tailOf } from './text';

export interface ExpectOptions {
  /** What is being waited for, for messages: "output of 'show version'". */
  what: string;
  /** Overall limit for this wait (may be what is left of a larger budget)... */
  timeoutMs: number;
  /** ...and the configured limit it comes from, for the message. */
  timeoutName: 'connect' | 'command';
  limitMs: number;
  idleMs: number;
  /** Tested against the rendered last line; the first to return true wins. */
  until: Array<(lastLine: string) => boolean>;
  /** Answer pager prompts with a space. */
  pager: boolean;
}

export interface ExpectResult {
  /** Everything received during the wait (decoded, not yet cleaned). */
  raw: string;
  /** Rendered last line (the prompt). */
  lastLine: string;
  /** Index into `until` of the matcher that ended the wait. */
  matched: number;
}

export interface ShellHooks {
  pager: RegExp[];
  maxOutputBytes: number;
  sent(text: string): void;
  received(text: string): void;
  info(text: string): void;
}

interface Waiter {
  opts: ExpectOptions;
  resolve(r: ExpectResult): void;
  reject(e: Error): void;
  overall: NodeJS.Timeout;
  idle?: NodeJS.Timeout;
}

/** A last line longer than this is output, not a prompt. */
const MAX_PROMPT_LINE = 1024;
const BINARY_MIN = 256;

export class CliShell {
  private chunks: string[] = [];
  private chars = 0;
  private bytes = 0;
  private binary = 0;
  private lastLine = '';
  private transcriptPending = '';
  private waiter?: Waiter;
  private readonly decoder = new StringDecoder('utf8');
  /**
   * Why the shell can no longer be used (every later wait fails with it), or a function making
   * that error: a shell closed on the happy path never builds an Error nobody reads.
   */
  private brokenBy?: DriverError | (() => DriverError);

  constructor(
    private readonly stream: Duplex,
    private readonly where: string,
    private readonly hooks: ShellHooks,
  ) {
    stream.on('data', (b: Buffer) => this.onData(b));
    stream.on('close', () => {
      const what = this.pendingWhat();
      this.fail(() => new DriverError('protocol', `${this.where}: connection closed by the device${what}`));
    });
    stream.on('error', (e: Error) => this.fail(new DriverError('protocol', `${this.where}: channel error: ${e.message}`)));
  }

  /** Set once the shell can no longer be used; every later wait fails with it. */
  get broken(): DriverError | undefined {
    if (typeof this.brokenBy === 'function') this.brokenBy = this.brokenBy();
    return this.brokenBy;
  }

  get isBroken(): boolean {
    return this.brokenBy !== undefined;
  }

  send(text: string): void {
    if (this.brokenBy) return;
    this.hooks.sent(text);
    this.stream.write(text);
  }

  expect(opts: ExpectOptions): Promise<ExpectResult> {
    if (this.brokenBy) return Promise.reject(this.broken!);
    if (this.waiter) return Promise.reject(new Error('CliShell.expect: a wait is already in progress'));
    return new Promise<ExpectResult>((resolve, reject) => {
      const overall = setTimeout(
        () =>
          this.fail(
            new DriverError(
              'timeout',
              `${this.where}: timed out waiting for ${opts.what} (${opts.timeoutName} timeout ${opts.limitMs} ms; ${this.progress()})`,
            ),
          ),
        opts.timeoutMs,
      );
      this.waiter = { opts, resolve, reject, overall };
      this.armIdle();
      // Data that arrived before the wait started may already hold the answer.
      if (this.chars > 0) this.check();
    });
  }

  /** Fails the current wait (if any) and every later one; `err` may be a function making the error. */
  fail(err: DriverError | (() => DriverError)): void {
    if (!this.brokenBy) this.brokenBy = err;
    this.flushTranscript();
    const w = this.waiter;
    if (!w) return;
    this.clearWaiter();
    // A wait exists only while the shell was not broken, so `err` is what broke it.
    w.reject(this.broken!);
  }

  private pendingWhat(): string {
    return this.waiter ? ` while waiting for ${this.waiter.opts.what} (${this.progress()})` : '';
  }

  private progress(): string {
    return this.bytes === 0 ? 'nothing received' : `${formatBytes(this.bytes)} received`;
  }

  private armIdle(): void {
    const w = this.waiter;
    if (!w) return;
    if (w.idle) clearTimeout(w.idle);
    w.idle = setTimeout(
      () =>
        this.fail(
          new DriverError(
            'timeout',
            `${this.where}: device silent for ${w.opts.idleMs} ms while waiting for ${w.opts.what} (idle timeout; ${this.progress()})`,
          ),
        ),
      w.opts.idleMs,
    );
  }

  private clearWaiter(): void {
    const w = this.waiter;
    if (!w) return;
    clearTimeout(w.overall);
    if (w.idle) clearTimeout(w.idle);
    this.waiter = undefined;
  }

  private onData(b: Buffer): void {
    if (this.brokenBy) return;
    this.bytes += b.length;
    const text = this.decoder.write(b);
    if (text.length === 0) return;
    this.chunks.push(text);
    this.chars += text.length;
    this.transcriptPending += text;
    if (this.transcriptPending.length > 65536 || this.transcriptPending.includes('\n')) this.flushTranscript(false);

    if (this.bytes > this.hooks.maxOutputBytes) {
      this.fail(
        new DriverError(
          'protocol',
          `${this.where}: output exceeded the ${formatBytes(this.hooks.maxOutputBytes)} limit${this.pendingWhat()}; session aborted`,
        ),
      );
      return;
    }
    this.binary += countBinary(text);
    if (this.binary >= BINARY_MIN && this.binary * 20 > this.chars) {
      this.fail(
        new DriverError(
          'protocol',
          `${this.where}: device sent binary data, not CLI text (${this.binary} of ${this.chars} characters unprintable)${this.pendingWhat()}`,
        ),
      );
      return;
    }
    const nl = text.lastIndexOf('\n');
    this.lastLine = nl >= 0 ? text.slice(nl + 1) : this.lastLine + text;
    if (this.lastLine.length > 8 * MAX_PROMPT_LINE) this.lastLine = this.lastLine.slice(-8 * MAX_PROMPT_LINE);
    if (this.waiter) {
      this.armIdle();
      this.check();
    }
  }

  private check(): void {
    const w = this.waiter;
    if (!w) return;
    if (w.opts.pager && this.lastLine.length <= MAX_PROMPT_LINE) {
      const visible = stripAnsi(this.lastLine);
      if (this.hooks.pager.some((re) => tailOf(re).test(visible))) {
        // The pager text stays in the collected output (removed when cleaning); forget it here
        // so the same prompt is not answered twice.
        this.lastLine = '';
        this.hooks.info('pager prompt answered with a space');
        this.stream.write(' ');
        return;
      }
    }
    if (this.lastLine.length > MAX_PROMPT_LINE) return;
    const line = renderLine(this.lastLine);
    if (line === '') return;
    const matched = w.opts.until.findIndex((f) => f(line));
    if (matched < 0) return;
    const raw = this.chunks.join('');
    this.chunks = [];
    this.chars = 0;
    this.binary = 0;
    this.bytes = 0;
    this.lastLine = '';
    this.flushTranscript();
    this.clearWaiter();
    w.resolve({ raw, lastLine: line, matched });
  }

  /** Writes received text to the transcript by whole lines (so a secret is never split). */
  private flushTranscript(all = true): void {
    if (this.transcriptPending === '') return;
    let upto = this.transcriptPending.length;
    if (!all && this.transcriptPending.length <= 65536) upto = this.transcriptPending.lastIndexOf('\n') + 1;
    if (upto <= 0) return;
    this.hooks.received(this.transcriptPending.slice(0, upto));
    this.transcriptPending = this.transcriptPending.slice(upto);
  }
}
