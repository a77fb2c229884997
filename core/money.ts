/**
 * Amounts are decimal strings on the wire. They are held as bigint counts of 1/10 000 so that sums,
 * comparisons and balances are exact.
 */
const SCALE_DIGITS = 4;
const SCALE = 10n ** BigInt(SCALE_DIGITS);
const DECIMAL_AMOUNT = new RegExp(`^(-?)(\\d+)(?:\\.(\\d{1,${SCALE_DIGITS}}))?$`);

/** The minor units of a decimal amount: an optional "-", one or more digits 0-9, and at most SCALE_DIGITS decimals after a ".". */
export function toMinor(amount: string): bigint {
  const match = DECIMAL_AMOUNT.exec(amount);
  if (!match) throw new RangeError(`"${amount}" is not a decimal amount with at most ${SCALE_DIGITS} decimals`);
  const [, sign, whole, fraction = ''] = match;
  const value = BigInt(whole!) * SCALE + BigInt(fraction.padEnd(SCALE_DIGITS, '0'));
  return sign === '-' ? -value : value;
}

/** The canonical form the live sandbox answers: no trailing zeros, no trailing dot ("12.50" → "12.5"). */
export function fromMinor(minor: bigint): string {
  const abs = minor < 0n ? -minor : minor;
  const fraction = (abs % SCALE).toString().padStart(SCALE_DIGITS, '0').replace(/0+$/, '');
  return `${minor < 0n ? '-' : ''}${abs / SCALE}${fraction ? `.${fraction}` : ''}`;
}

export function normaliseAmount(amount: string): string {
  return fromMinor(toMinor(amount));
}
