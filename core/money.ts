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

/**
 * Amounts of any scale, exactly, for what a target answers: a balance summed in binary floating point
 * ("3.3000000000000003") is a decimal amount too, and must compare unequal to 3.3 rather than fail to parse.
 */
const ANY_DECIMAL = /^(-?)(\d+)(?:\.(\d+))?$/;

/** How many decimals an amount has (0 for a whole one), or undefined when it is not a decimal amount. */
export function decimalScale(amount: string): number | undefined {
  const match = ANY_DECIMAL.exec(amount);
  return match ? (match[3] ?? '').length : undefined;
}

/** A decimal amount as a count of 10^-scale, for a scale at least its own (decimalScale). */
export function unitsAt(amount: string, scale: number): bigint {
  const match = ANY_DECIMAL.exec(amount);
  const fraction = match?.[3] ?? '';
  if (!match || fraction.length > scale) throw new RangeError(`"${amount}" is not a decimal amount with at most ${scale} decimals`);
  const value = BigInt(match[2]!) * 10n ** BigInt(scale) + BigInt(fraction.padEnd(scale, '0') || '0');
  return match[1] === '-' ? -value : value;
}

/** A count of 10^-scale as a decimal amount, without trailing zeros ("12.5", "-3"). */
export function formatUnits(units: bigint, scale: number): string {
  const abs = units < 0n ? -units : units;
  const unit = 10n ** BigInt(scale);
  const fraction = scale === 0 ? '' : (abs % unit).toString().padStart(scale, '0').replace(/0+$/, '');
  return `${units < 0n ? '-' : ''}${abs / unit}${fraction ? `.${fraction}` : ''}`;
}

/** Whether two decimal amounts are the same number, whatever their scales ("1.005" and "1.0050"); false if either is none. */
export function sameDecimal(a: string, b: string): boolean {
  const [sa, sb] = [decimalScale(a), decimalScale(b)];
  if (sa === undefined || sb === undefined) return false;
  const scale = Math.max(sa, sb);
  return unitsAt(a, scale) === unitsAt(b, scale);
}
