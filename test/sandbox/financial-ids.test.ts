import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { financialTransactionId, randomBelow } from '../../sandbox/domain/financial-ids.ts';

describe('financial transaction ids', () => {
  it('are ten digits, the first not 0, as the live sandbox gives them', () => {
    for (let i = 0; i < 20_000; i += 1) assert.match(financialTransactionId(), /^[1-9]\d{9}$/);
  });

  it('draw every first digit and every later digit about equally often', () => {
    const draws = 90_000;
    const first = new Array<number>(10).fill(0);
    const later = new Array<number>(10).fill(0);
    for (let i = 0; i < draws; i += 1) {
      const id = financialTransactionId();
      first[Number(id[0])]! += 1;
      for (const digit of id.slice(1)) later[Number(digit)]! += 1;
    }
    assert.equal(first[0], 0);
    // Each count within 5% of its expectation: a bias of the draw (a skewed modulo, a digit never drawn) is far larger.
    for (let digit = 1; digit <= 9; digit += 1) assert.ok(Math.abs(first[digit]! / (draws / 9) - 1) < 0.05, `first digit ${digit}: ${first[digit]} of ${draws}`);
    for (let digit = 0; digit <= 9; digit += 1) assert.ok(Math.abs(later[digit]! / (draws * 9 / 10) - 1) < 0.05, `digit ${digit}: ${later[digit]} of ${draws * 9}`);
  });

  it('draws below its bound, over more draws than one pool holds', () => {
    const seen = new Set<number>();
    for (let i = 0; i < 5_000; i += 1) {
      const draw = randomBelow(7);
      assert.ok(Number.isInteger(draw) && draw >= 0 && draw < 7, String(draw));
      seen.add(draw);
    }
    assert.equal(seen.size, 7);
    assert.equal(randomBelow(1), 0);
    const large = randomBelow(2 ** 32);
    assert.ok(large >= 0 && large < 2 ** 32);
  });
});
