/** "1 device", "3 devices": counts in messages a person reads. */
export const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
