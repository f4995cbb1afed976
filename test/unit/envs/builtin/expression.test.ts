import { describe, expect, test } from 'vitest';
import { ExpressionError, MAX_EXPRESSION_LENGTH, evaluateExpression, formatRational, makeRational, parseNumberAnswer } from '../../../../src/envs/builtin/expression.ts';

const valueOf = (source: string) => formatRational(evaluateExpression(source).value);

describe('evaluateExpression', () => {
  test.each([
    ['2 + 3 * 4', '14'],
    ['(2 + 3) * 4', '20'],
    ['2 * (3 + 4) - 5', '9'],
    ['10 - 2 - 3', '5'], // left-associative
    ['8 / 4 / 2', '1'],
    ['-3 + 5', '2'],
    ['2 * -3', '-6'],
    ['--3', '3'],
    ['-(2 + 3) * 2', '-10'],
    ['+4', '4'],
    ['7 / 2', '3.5'],
    ['1 / 3 * 3', '1'], // exact: no floating-point error
    ['0.1 + 0.2', '0.3'],
    ['6 × 7 − 2 ÷ 2', '41'],
    ['  ( ( 5 ) )  ', '5'],
    ['12345678901234567890 * 10', '123456789012345678900'],
  ])('%s = %s', (source, expected) => {
    expect(valueOf(source)).toBe(expected);
  });

  test('records the number literals it used, in order', () => {
    expect(evaluateExpression('(25 - 7) * 3 + 7').numbers).toEqual([25n, 7n, 3n, 7n].map((n) => makeRational(n)));
  });

  test.each([
    ['constructor', /"constructor" at position 1 is not allowed/],
    ['__proto__', /"__proto__" at position 1 is not allowed/],
    ['Math.max(1, 2)', /"Math" at position 1 is not allowed/],
    ['alert(1)', /"alert"/],
    ['(1).constructor', /"\." at position 4 is not allowed/],
    ['2 ** 3', /"\*\*" at position 3 is not allowed/],
    ['2 ^ 3', /"\^" at position 3 is not allowed/],
    ['1e5', /"e5" at position 2 is not allowed/],
    ['x = 1', /"x"/],
    ['"1"', /"""/],
    ['', /empty/],
    ['   ', /empty/],
    ['(1 + 2', /expected "\)" but found the end of the expression/],
    ['1 +', /expected a number or "\(" but found the end/],
    ['1 2', /unexpected "2" at position 3/],
    ['* 3', /expected a number or "\(" but found "\*" at position 1/],
    ['1.2.3', /malformed number/],
    ['1 / 0', /division by zero/],
    ['4 / (2 - 2)', /division by zero/],
    [`${'('.repeat(100)}1${')'.repeat(100)}`, /nested more than/],
    [`${'-'.repeat(100)}1`, /nested more than/],
    ['1+'.repeat(MAX_EXPRESSION_LENGTH) + '1', /longer than/],
  ])('rejects %j', (source, message) => {
    expect(() => evaluateExpression(source)).toThrow(ExpressionError);
    expect(() => evaluateExpression(source)).toThrow(message);
  });
});

describe('formatRational and parseNumberAnswer', () => {
  test('writes whole numbers, terminating decimals, and repeating fractions', () => {
    expect(formatRational(makeRational(42))).toBe('42');
    expect(formatRational(makeRational(-5, 2))).toBe('-2.5');
    expect(formatRational(makeRational(1, 8))).toBe('0.125');
    expect(formatRational(makeRational(1, 3))).toBe('1/3 ≈ 0.333333');
    expect(formatRational(makeRational(-2, 3))).toBe('-2/3 ≈ -0.666667');
  });

  test.each([
    ['1200', 1200], ['1,200', 1200], ['1200.0', 1200], ['1,200.00', 1200], ['$1,200', 1200], [' 1200. ', 1200],
    ['-7', -7], ['+7', 7], ['−7', -7], ['2.5', 2.5], ['1,234,567', 1234567],
  ])('reads %j as %d', (text, expected) => {
    const value = parseNumberAnswer(text)!;
    expect(Number(value.num) / Number(value.den)).toBe(expected);
  });

  test.each(['12,00', '1 200', 'twelve', '3/4', '1e3', '12 apples', '', '1,2345'])('does not read %j', (text) => {
    expect(parseNumberAnswer(text)).toBeUndefined();
  });
});
