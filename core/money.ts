/**
 * Amounts are decimal strings on the wire. They are held as bigint counts of 1/10 000 so that sums,
 * comparisons and balances are exact.
 */
const SCALE_DIGITS = 4;
const SCALE = 10n ** BigInt(SCALE_DIGITS);
const NUMBER_SCALE = 10 ** SCALE_DIGITS;
// Every amount a payment carries is far below these, where a double holds the minor units exactly and the
// arithmetic is cheaper than BigInt's (the sandbox converts amounts on every payment); larger ones take BigInt.
const EXACT_WHOLE_DIGITS = 11;
const EXACT_MINOR = BigInt(Number.MAX_SAFE_INTEGER);
const [ZERO, NINE, DOT, MINUS] = ['0', '9', '.', '-'].map((c) => c.charCodeAt(0)) as [number, number, number, number];
const POWERS_OF_TEN = [1, 10, 100, 1_000, 10_000];

/**
 * The minor units of a decimal amount: an optional "-", one or more digits 0-9, and at most SCALE_DIGITS decimals
 * after a ".". Read character by character: a regular expression's match and its captured strings cost more
 * than the rest of the conversion on every payment.
 */
export function toMinor(amount: string): bigint {
  const { length } = amount;
  const negative = amount.charCodeAt(0) === MINUS;
  const wholeStart = negative ? 1 : 0;
  let end = wholeStart;
  let whole = 0;
  for (let code = amount.charCodeAt(end); code >= ZERO && code <= NINE; code = amount.charCodeAt(++end)) whole = whole * 10 + (code - ZERO);
  const wholeDigits = end - wholeStart;
  let fraction = 0;
  let fractionDigits = 0;
  if (wholeDigits > 0 && amount.charCodeAt(end) === DOT) {
    for (let code = amount.charCodeAt(++end); code >= ZERO && code <= NINE && fractionDigits <= SCALE_DIGITS; code = amount.charCodeAt(++end)) {
      fraction = fraction * 10 + (code - ZERO);
      fractionDigits += 1;
    }
    if (fractionDigits === 0) end = -1;
  }
  if (wholeDigits === 0 || fractionDigits > SCALE_DIGITS || end !== length) {
    throw new RangeError(`"${amount}" is not a decimal amount with at most ${SCALE_DIGITS} decimals`);
  }
  const minorFraction = fraction * POWERS_OF_TEN[SCALE_DIGITS - fractionDigits]!;
  const value = wholeDigits <= EXACT_WHOLE_DIGITS
    ? BigInt(whole * NUMBER_SCALE + minorFraction)
    : BigInt(amount.slice(wholeStart, wholeStart + wholeDigits)) * SCALE + BigInt(minorFraction);
  return negative ? -value : value;
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

/**
 * normaliseAmount of an amount already read as these minor units: the text itself when it is a whole number
 * with no sign or leading zero, which is already canonical (and most amounts are), else fromMinor.
 */
export function canonicalAmount(amount: string, minor: bigint): string {
  const first = amount.charCodeAt(0);
  return first > ZERO && first <= NINE && !amount.includes('.') ? amount : fromMinor(minor);
}
