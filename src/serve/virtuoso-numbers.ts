/**
 * Lexical forms of xsd:double and xsd:float values as oxigraph writes them, so that a number read
 * back from Virtuoso is written as the oxigraph store writes the same value: the shortest decimal
 * that reads back as the same binary value (a float's as a 32-bit float), in plain notation (no
 * exponent: `1e21` is `1000000000000000000000`, `1e-7` is `0.0000001`), an integral value without
 * a fraction (`828`), and `-0` for negative zero. Virtuoso writes `STR()` of a double with 16
 * significant digits (`74.4` as `74.40000000000001`, the same binary double) and of a float with
 * the digits of the float widened to a double (`0.1` as `0.1000000014901161`).
 */

/**
 * A decimal number written by JavaScript (`String(x)`, `x.toPrecision(p)`), maybe in exponent
 * notation (`1.5e-7`, `1e+21`), written in plain notation with the same digits.
 * @param text a finite number's JavaScript spelling
 * @returns the same digits without exponent (`0.00000015`, `1000000000000000000000`)
 */
function plainNotation(text: string): string {
  const e = text.search(/e/i);
  if (e < 0) return text;
  const negative = text.startsWith('-');
  const mantissa = text.slice(negative ? 1 : 0, e);
  const exponent = Number(text.slice(e + 1));
  const point = mantissa.indexOf('.');
  const digits = mantissa.replace('.', '');
  const at = (point < 0 ? mantissa.length : point) + exponent;
  let plain: string;
  if (at <= 0) plain = `0.${'0'.repeat(-at)}${digits}`;
  else if (at >= digits.length) plain = digits + '0'.repeat(at - digits.length);
  else plain = `${digits.slice(0, at)}.${digits.slice(at)}`;
  plain = plain.replace(/^0+(?=\d)/, '');
  if (plain.includes('.')) plain = plain.replace(/\.?0+$/, '');
  return negative ? `-${plain}` : plain;
}

/**
 * The lexical form oxigraph writes for an xsd:double value (module comment).
 * @param x the value (finite; NaN and infinities are written by the caller)
 * @returns the shortest round-trip decimal in plain notation (`74.4`, `828`, `-0`)
 */
export function doubleLexical(x: number): string {
  if (Object.is(x, -0)) return '-0';
  return plainNotation(String(x));
}

/**
 * The lexical form oxigraph writes for an xsd:float value (module comment).
 * @param x the value, rounded to the nearest 32-bit float first (finite)
 * @returns the shortest decimal that reads back as the same 32-bit float, in plain notation (`0.1`, `1000000000000`)
 */
export function floatLexical(x: number): string {
  const f = Math.fround(x);
  if (Object.is(f, -0)) return '-0';
  for (let p = 1; p < 9; p++) {
    const text = f.toPrecision(p);
    if (Math.fround(Number(text)) === f) return doubleLexical(Number(text));
  }
  return doubleLexical(Number(f.toPrecision(9)));
}

/** The fractional digits of oxigraph's xsd:decimal (a 128-bit integer of 10^-18 units). */
const DECIMAL_DIGITS = 18;
const DECIMAL_UNIT = 10n ** BigInt(DECIMAL_DIGITS);
/** An xsd:integer or xsd:decimal lexical form as Virtuoso writes one. */
const DECIMAL = /^([+-]?)(\d*)(?:\.(\d*))?$/;

/**
 * The quotient of two xsd:decimal values as oxigraph computes it (op:numeric-divide, SPARQL 1.1
 * §17.3): truncated toward zero after 18 fractional digits, written without trailing zeros
 * (`2.333333333333333333`, `-0.666666666666666666`, `2.5`, `4`). Virtuoso divides decimals with
 * about 15 fractional digits, rounded.
 * @param dividend an xsd:integer or xsd:decimal lexical form (`7`, `-4.50`; digits past the 18th fractional one are dropped)
 * @param divisor a positive integer (a count)
 * @returns the quotient's lexical form, or undefined when `dividend` is no such form or `divisor` is not positive
 */
export function decimalQuotient(dividend: string, divisor: number): string | undefined {
  const m = DECIMAL.exec(dividend);
  if (!m || (m[2] === '' && (m[3] ?? '') === '') || !Number.isSafeInteger(divisor) || divisor <= 0) return undefined;
  const units = BigInt(m[2] || '0') * DECIMAL_UNIT + BigInt((m[3] ?? '').slice(0, DECIMAL_DIGITS).padEnd(DECIMAL_DIGITS, '0'));
  const quotient = units / BigInt(divisor);
  const whole = (quotient / DECIMAL_UNIT).toString();
  const fraction = (quotient % DECIMAL_UNIT).toString().padStart(DECIMAL_DIGITS, '0').replace(/0+$/, '');
  const negative = m[1] === '-' && quotient !== 0n;
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}
