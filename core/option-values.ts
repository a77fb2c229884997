import { InvalidOptionValue } from './command-line.ts';

/**
 * The kinds of value an option takes, as `parse` functions of its declaration (core/command-line.ts): each turns the
 * text as written into the value the command uses, or throws InvalidOptionValue saying what the value should be and
 * what to write instead, so that every command refuses a bad value in the same words.
 */

export type ParseValue<T> = (raw: string) => T;

/** A whole number from min to max (no sign unless min is below 0), e.g. `--parallel 4`. */
export function wholeNumber(min: number, max: number, example: number): ParseValue<number> {
  const expected = max === Number.POSITIVE_INFINITY ? `a whole number, ${min} or more` : `a whole number from ${min} to ${max}`;
  const form = min < 0 ? /^-?\d+$/ : /^\d+$/;
  return (raw) => {
    const value = Number(raw);
    if (!form.test(raw) || value < min || value > max) throw new InvalidOptionValue(expected, String(example));
    return value;
  };
}

/** Bounds of a decimal number: above `above` (0 by default) or at least `atLeast`, and at most `max`. */
interface DecimalBounds {
  above?: number;
  atLeast?: number;
  max?: number;
}

/** A decimal number written with digits and at most one point, within bounds, e.g. `--precision 0.05`. */
export function decimalNumber({ above, atLeast, max }: DecimalBounds, example: number): ParseValue<number> {
  const lower = atLeast !== undefined ? `, ${atLeast} or more` : ` above ${above ?? 0}`;
  const expected = `a number${lower}${max === undefined ? '' : ` and at most ${max}`}`;
  return (raw) => {
    const value = Number(raw);
    const low = atLeast !== undefined ? value >= atLeast : value > (above ?? 0);
    if (!/^\d+(\.\d+)?$/.test(raw) || !low || (max !== undefined && value > max)) throw new InvalidOptionValue(expected, String(example));
    return value;
  };
}

/**
 * A number, 0 or more, kept as written: for a value the command passes on as text to a program that reads it
 * (a LOAD_* setting of k6), where the number is not the command's own to use.
 */
export function numberAsWritten(example: number): ParseValue<string> {
  const check = decimalNumber({ atLeast: 0 }, example);
  return (raw) => {
    check(raw);
    return raw;
  };
}

/** One of a few words, e.g. `--fail-on new`; the first is the example. */
export function oneOf<const T extends string>(words: readonly T[]): ParseValue<T> {
  const expected = words.length === 2 ? `${words[0]} or ${words[1]}` : `one of ${words.join(', ')}`;
  return (raw) => {
    if (!(words as readonly string[]).includes(raw)) throw new InvalidOptionValue(expected, words[0]!);
    return raw as T;
  };
}

/** Text of a given form, described in words, e.g. a Kubernetes quantity `2Gi`. */
export function matching(form: RegExp, expected: string, example: string): ParseValue<string> {
  return (raw) => {
    if (!form.test(raw)) throw new InvalidOptionValue(expected, example);
    return raw;
  };
}

/** An http(s) URL, e.g. `--base-url http://momo:8080`. */
export function httpUrl(example: string): ParseValue<string> {
  return matching(/^https?:\/\/[^\s/]+/, 'an http(s) URL', example);
}

/**
 * A comma-separated list of names, each one of `known` (what they are called: "deviations", and where they are
 * listed), or "none" for no name at all; e.g. `--only missing-callback,wrong-status`. The names it gets wrong are said.
 */
export function namesAmong(known: readonly string[], what: string, whereListed: string): ParseValue<string[]> {
  return (raw) => {
    if (raw === 'none') return [];
    const names = raw
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const unknown = names.filter((name) => !known.includes(name));
    if (unknown.length > 0) {
      const which = unknown.map((n) => `"${n}"`).join(', ');
      throw new InvalidOptionValue(
        `a list of ${what} or none: ${which} ${unknown.length === 1 ? 'is not one of them' : 'are not among them'} (${whereListed})`,
        known[0] ?? 'none',
      );
    }
    return names;
  };
}
