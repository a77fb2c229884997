/**
 * Amounts are decimal strings on the wire. They are held as bigint counts of 1/10 000 so that sums,
 * comparisons and balances are exact.
 */
const SCALE_DIGITS = 4;
const SCALE = 10n ** BigInt(SCALE_DIGITS);
const NUMBER_SCALE = 10 ** SCALE_DIGITS;
const DECIMAL = /^(-?)(\d+)(?:\.(\d{1,4}))?$/;
// Every amount a payment carries is far below these, where a double holds the minor units exactly and the
// arithmetic is cheaper than BigInt's (the sandbox converts amounts on every payment); larger ones take BigInt.
const EXACT_WHOLE_DIGITS = 11;
const EXACT_MINOR = BigInt(Number.MAX_SAFE_INTEGER);

export function toMinor(amount: string): bigint {
  const match = DECIMAL.exec(amount);
  if (!match) throw new RangeError(`"${amount}" is not a decimal amount with at most ${SCALE_DIGITS} decimals`);
  const [, sign, whole, fraction = ''] = match;
  const padded = fraction.padEnd(SCALE_DIGITS, '0');
  const value = whole!.length <= EXACT_WHOLE_DIGITS ? BigInt(Number(whole) * NUMBER_SCALE + Number(padded)) : BigInt(whole!) * SCALE + BigInt(padded);
  return sign === '-' ? -value : value;
}

/** The canonical form the live sandbox answers: no trailing zeros, no trailing dot ("12.50" → "12.5"). */
export function fromMinor(minor: bigint): string {
  const negative = minor < 0n;
  const abs = negative ? -minor : minor;
  let whole: string;
  let fraction: string;
  if (abs <= EXACT_MINOR) {
    const units = Number(abs);
    const rest = units % NUMBER_SCALE;
    // An exact multiple divides exactly; units / NUMBER_SCALE alone can round up to the next whole number.
    whole = String((units - rest) / NUMBER_SCALE);
    fraction = rest === 0 ? '' : String(rest).padStart(SCALE_DIGITS, '0').replace(/0+$/, '');
  } else {
    whole = String(abs / SCALE);
    fraction = (abs % SCALE).toString().padStart(SCALE_DIGITS, '0').replace(/0+$/, '');
  }
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

export function normaliseAmount(amount: string): string {
  return fromMinor(toMinor(amount));
}
