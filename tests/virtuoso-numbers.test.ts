/**
 * The lexical forms of doubles, floats and decimal quotients as oxigraph writes them
 * (virtuoso-numbers.ts), which `serve --store virtuoso` writes for the values Virtuoso gives back
 * with other digits (serve-virtuoso-values.slow.test.ts compares both stores).
 */
import { describe, expect, it } from 'vitest';
import { decimalQuotient, doubleLexical, floatLexical } from '../src/serve/virtuoso-numbers.js';

describe('serve --store virtuoso / numbers written as oxigraph writes them', () => {
  it('writes a double as its shortest round-trip decimal in plain notation', () => {
    const cases: [number, string][] = [
      [Number('74.40000000000001'), '74.4'],
      [828, '828'],
      [6.6899999999999995, '6.6899999999999995'],
      [1e21, '1000000000000000000000'],
      [-5e22, '-50000000000000000000000'],
      [1.5e-7, '0.00000015'],
      [-1.25e-10, '-0.000000000125'],
      [0.00001234, '0.00001234'],
      [-0, '-0'],
      [0, '0'],
    ];
    expect(cases.map(([x]) => doubleLexical(x))).toEqual(cases.map(([, text]) => text));
  });

  it('writes a float as the shortest decimal that reads back as the same 32-bit float', () => {
    const cases: [number, string][] = [
      [0.1000000014901161, '0.1'],
      [999999995904, '1000000000000'],
      [16777217, '16777216'],
      [3.4028234663852886e38, '340282350000000000000000000000000000000'],
      [1e-10, '0.0000000001'],
      [-0, '-0'],
    ];
    expect(cases.map(([x]) => floatLexical(x))).toEqual(cases.map(([, text]) => text));
  });

  it('divides a decimal by a count truncating after 18 fractional digits, without trailing zeros', () => {
    expect(decimalQuotient('7', 3)).toBe('2.333333333333333333');
    expect(decimalQuotient('-2', 3)).toBe('-0.666666666666666666');
    expect(decimalQuotient('5', 2)).toBe('2.5');
    expect(decimalQuotient('12.0', 3)).toBe('4');
    expect(decimalQuotient('1.75', 1)).toBe('1.75');
    expect(decimalQuotient('-0.000000000000000001', 2)).toBe('0');
    expect(decimalQuotient('2000000000000', 7)).toBe('285714285714.285714285714285714');
    expect([decimalQuotient('1e3', 2), decimalQuotient('', 2), decimalQuotient('3', 0), decimalQuotient('abc', 1)]).toEqual([undefined, undefined, undefined, undefined]);
  });
});
