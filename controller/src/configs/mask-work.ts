import { unifiedDiff } from '../../../shared/src/diff/unified';
import { maskDeviceText, type DeviceText, type SecretMasker } from './config-secrets';

/** Two texts of a device, diffed line by line (unifiedDiff): each masked first, or given as shown (a string: reveal). */
export interface TextsToDiff {
  before: DeviceText | string;
  after: DeviceText | string;
}
export interface ShownDiff {
  diff: string;
  additions: number;
  deletions: number;
  identical: boolean;
}
/** What the mask pool does, on the event loop or in a worker (mask-pool.ts). */
export type MaskWork = { mask: DeviceText } | { diff: TextsToDiff };

/** The masked text, or the diff of the texts as shown. */
export function doMaskWork(work: MaskWork, masker: SecretMasker): string | ShownDiff {
  if ('mask' in work) return maskDeviceText(work.mask, masker);
  const shown = (text: DeviceText | string) => (typeof text === 'string' ? text : maskDeviceText(text, masker));
  const [before, after] = [shown(work.diff.before), shown(work.diff.after)];
  return { ...unifiedDiff(before, after), identical: before === after };
}

/** Characters a piece of work reads: what decides where it runs. */
export function workSize(work: MaskWork): number {
  const size = (text: DeviceText | string) => (typeof text === 'string' ? text : text.text).length;
  return 'mask' in work ? size(work.mask) : size(work.diff.before) + size(work.diff.after);
}
