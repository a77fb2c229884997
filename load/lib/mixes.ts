/**
 * The operation mixes npm run capacity searches, as plain data (transport-free: the k6 script runs them, Node
 * checks a user's mix before starting k6). A mix is operation ids of the catalogue with their shares of the
 * arrival rate; the token operation is called without the cache (a fresh token each time), the creations with
 * each VU's cached token.
 */
export const CAPACITY_OPERATIONS = ['createAccessToken', 'requestToPay', 'deposit', 'refund'] as const;
export type CapacityOperation = (typeof CAPACITY_OPERATIONS)[number];

export type Mix = Partial<Record<CapacityOperation, number>>;

export const MIXES: Record<string, { mix: Mix; describe: string }> = {
  token: {
    mix: { createAccessToken: 1 },
    describe: 'the token operation alone, no cache: what a fleet of clients that do not cache costs',
  },
  'request-to-pay': { mix: { requestToPay: 1 }, describe: 'request to pay with cached tokens' },
  mixed: {
    mix: { requestToPay: 6, deposit: 2, refund: 1, createAccessToken: 1 },
    describe: 'request to pay 60%, deposit 20%, refund 10%, token 10%',
  },
};

/** A mix by name, or written out as "op:share,op:share" (a bare op has share 1). Throws, saying why, on anything else. */
export function parseMix(text: string): Mix {
  const named = MIXES[text];
  if (named) return named.mix;
  const mix: Mix = {};
  for (const part of text.split(',')) {
    const [op, share = '1', extra] = part.trim().split(':');
    if (extra !== undefined || !(CAPACITY_OPERATIONS as readonly string[]).includes(op ?? '')) {
      throw new Error(
        `"${part.trim()}" is not an operation of a mix: name a mix (${Object.keys(MIXES).join(', ')}) or write operations with shares, such as requestToPay:3,deposit:1 (operations: ${CAPACITY_OPERATIONS.join(', ')})`,
      );
    }
    const value = Number(share);
    if (!Number.isFinite(value) || value <= 0) throw new Error(`the share of ${op} must be a positive number, got "${share}"`);
    if (mix[op as CapacityOperation] !== undefined) throw new Error(`${op} is named twice in the mix`);
    mix[op as CapacityOperation] = value;
  }
  return mix;
}

/** Each operation's arrival rate for a total rate, at least 1 per second each. */
export function ratesOf(mix: Mix, total: number): [CapacityOperation, number][] {
  const entries = Object.entries(mix) as [CapacityOperation, number][];
  const sum = entries.reduce((s, [, share]) => s + share, 0);
  return entries.map(([op, share]) => [op, Math.max(1, Math.round((total * share) / sum))]);
}

/** The mix written out, for the k6 script's LOAD_MIX. */
export function mixText(mix: Mix): string {
  return Object.entries(mix)
    .map(([op, share]) => `${op}:${share}`)
    .join(',');
}
