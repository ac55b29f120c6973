import { modals } from '@mantine/modals';
import { loadLateParts } from '../lib/late';

/** Asks before a destructive action; resolves true only on the confirm button. */
export async function confirmAction(title: string, message: string, confirmLabel: string): Promise<boolean> {
  // The dialog layer is one of the shell's late parts: it must be listening before it is asked.
  await (
    await loadLateParts()
  ).overlaysReady;
  return new Promise((resolve) => {
    modals.openConfirmModal({
      title,
      children: message,
      labels: { confirm: confirmLabel, cancel: 'Cancel' },
      confirmProps: { color: 'red' },
      onConfirm: () => resolve(true),
      onCancel: () => resolve(false),
      onClose: () => resolve(false),
    });
  });
}
