import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { decimalScale, formatUnits, fromMinor, normaliseAmount, sameDecimal, toMinor, unitsAt } from '../../core/money.ts';

/** An amount read digit by digit as a sum of powers of ten: a second reading for toMinor to agree with. */
function bigintMinor(amount: string): bigint {
  const negative = amount.startsWith('-');
  const [whole = '', fraction = ''] = amount.slice(negative ? 1 : 0).split('.');
  let value = 0n;
  for (const digit of `${whole}${fraction.padEnd(4, '0')}`) value = value * 10n + BigInt(digit.charCodeAt(0) - 48);
  return negative ? -value : value;
}

const digits = (min: number, max: number) => fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: min, maxLength: max });
const amounts = fc
  .tuple(fc.boolean(), digits(1, 30), fc.option(digits(1, 4), { nil: undefined }))
  .map(([negative, whole, fraction]) => `${negative ? '-' : ''}${whole}${fraction === undefined ? '' : `.${fraction}`}`);

describe('amounts', () => {
  it('reads every decimal amount exactly, however many digits', () => {
    fc.assert(
      fc.property(amounts, (amount) => assert.equal(toMinor(amount), bigintMinor(amount))),
      { numRuns: 5000 },
    );
    assert.equal(toMinor('99999999999.9999'), 999_999_999_999_999n);
    assert.equal(toMinor('999999999999.9999'), 9_999_999_999_999_999n);
  });

  it('refuses exactly what is not a decimal amount with at most 4 decimals', () => {
    const decimal = /^-?\d+(?:\.\d{1,4})?$/;
    const text = fc.string({ unit: fc.constantFrom(...'0123456789.-+ e\u0661'), maxLength: 12 });
    fc.assert(
      fc.property(text, (amount) => {
        if (decimal.test(amount)) assert.equal(toMinor(amount), bigintMinor(amount));
        else assert.throws(() => toMinor(amount), /is not a decimal amount with at most 4 decimals/, JSON.stringify(amount));
      }),
      { numRuns: 20000 },
    );
    for (const refused of ['', '-', '1.', '.5', '1.23456', '--1', '1-', '+1', ' 1', '1 ', '1e3', '\u0661', '1.2.3', '0x10']) {
      assert.throws(() => toMinor(refused), /is not a decimal amount/, JSON.stringify(refused));
    }
  });

  it('writes every minor amount back in canonical form', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }), (minor) => {
        const text = fromMinor(minor);
        assert.match(text, /^-?(0|[1-9]\d*)(\.\d{0,3}[1-9])?$/);
        assert.equal(bigintMinor(text), minor);
      }),
      { numRuns: 5000 },
    );
    const edge = BigInt(Number.MAX_SAFE_INTEGER);
    for (const minor of [edge - 1n, edge, edge + 1n, 9_007_199_254_739_999n, 0n, -1n, 10_000n, 5_000n, -125_000n]) {
      assert.equal(bigintMinor(fromMinor(minor)), minor, `${minor}`);
    }
    assert.equal(fromMinor(9_007_199_254_739_999n), '900719925473.9999');
  });

  it('normalises as the live sandbox answers', () => {
    assert.equal(normaliseAmount('12.50'), '12.5');
    assert.equal(normaliseAmount('007'), '7');
    assert.equal(normaliseAmount('1.0000'), '1');
    assert.equal(normaliseAmount('-0.0100'), '-0.01');
    assert.equal(normaliseAmount('0'), '0');
    assert.throws(() => toMinor('1.23456'), /at most 4 decimals/);
  });
});

describe('amounts of any scale, as a target may answer them', () => {
  it('a sum done in binary floating point is another number than the decimal sum', () => {
    assert.equal(sameDecimal('3.3000000000000003', '3.3'), false);
    assert.equal(sameDecimal('1.0050', '1.005'), true);
    assert.equal(sameDecimal('1.00500000000', '1.005'), true);
    assert.equal(sameDecimal('-0', '0'), true);
    assert.equal(sameDecimal('1,000', '1000'), false, 'not a decimal amount: never the same');
  });

  it('units at a scale and back give the amount without trailing zeros', () => {
    fc.assert(
      fc.property(
        fc.tuple(fc.boolean(), digits(1, 30), fc.option(digits(1, 25), { nil: undefined })),
        fc.nat({ max: 10 }),
        ([negative, whole, fraction], extra) => {
          const amount = `${negative ? '-' : ''}${whole}${fraction === undefined ? '' : `.${fraction}`}`;
          const scale = decimalScale(amount)! + extra;
          const back = formatUnits(unitsAt(amount, scale), scale);
          assert.ok(sameDecimal(back, amount), `${amount} → ${back}`);
          assert.doesNotMatch(back, /\.\d*0$/);
        },
      ),
    );
  });

  it('an amount is not read at a scale smaller than its own', () => {
    assert.throws(() => unitsAt('0.30000000000000004', 4), /at most 4 decimals/);
    assert.equal(decimalScale('12'), 0);
    assert.equal(decimalScale('12.'), undefined);
  });
});
