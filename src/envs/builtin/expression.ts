/**
 * Safe arithmetic expressions with exact rational results, shared by countdown (checking the
 * model's expression) and calculator (the tool). A tokenizer and a recursive-descent parser over
 * numbers, `+ - * /` (also `× ÷ −`), unary minus and parentheses; everything else (names, calls,
 * `constructor`, exponent, assignment) is rejected with a readable error. It never calls `eval` or
 * `Function`. Arithmetic is exact (bigint fractions), so `1/3 * 3` is exactly 1. Also: parsing of a
 * model's numeric answer ("1,200", "1200.0", "$5") into the same exact form.
 */

/** An exact fraction `num / den` in lowest terms with `den > 0`. */
export interface Rational {
  num: bigint;
  den: bigint;
}

/** Why an expression was rejected or could not be evaluated; the message is meant for the model. */
export class ExpressionError extends Error {
  override readonly name = 'ExpressionError';
}

/** The value of an expression and the number literals it used, in order of appearance. */
export interface EvaluatedExpression {
  value: Rational;
  numbers: Rational[];
}

/** Longest expression accepted, in characters. */
export const MAX_EXPRESSION_LENGTH = 500;
/** Deepest nesting of parentheses and unary signs accepted. */
export const MAX_EXPRESSION_DEPTH = 64;
const MAX_LITERAL_DIGITS = 30;

/** Makes a fraction in lowest terms; throws an ExpressionError on a zero denominator. */
export function makeRational(num: bigint | number, den: bigint | number = 1n): Rational {
  let n = BigInt(num);
  let d = BigInt(den);
  if (d === 0n) throw new ExpressionError('division by zero');
  if (d < 0n) {
    n = -n;
    d = -d;
  }
  const g = gcd(n < 0n ? -n : n, d);
  return { num: n / g, den: d / g };
}

/** Whether two fractions are equal. */
export function rationalEquals(a: Rational, b: Rational): boolean {
  return a.num === b.num && a.den === b.den;
}

/** Whether a fraction is a whole number. */
export function isInteger(value: Rational): boolean {
  return value.den === 1n;
}

/**
 * Writes a fraction for people and models: "42", "-2.5" (terminating decimals exactly), or
 * "7/3 ≈ 2.333333" when the decimal does not terminate.
 */
export function formatRational(value: Rational): string {
  if (value.den === 1n) return value.num.toString();
  let rest = value.den;
  let twos = 0;
  let fives = 0;
  while (rest % 2n === 0n) {
    rest /= 2n;
    twos++;
  }
  while (rest % 5n === 0n) {
    rest /= 5n;
    fives++;
  }
  if (rest === 1n) return decimalString(value, Math.max(twos, fives));
  return `${value.num}/${value.den} ≈ ${decimalString(value, 6)}`;
}

/** Parses and evaluates an expression exactly; throws an ExpressionError saying what is wrong. */
export function evaluateExpression(source: string): EvaluatedExpression {
  if (source.length > MAX_EXPRESSION_LENGTH) throw new ExpressionError(`the expression is longer than ${MAX_EXPRESSION_LENGTH} characters`);
  const tokens = tokenize(source);
  if (tokens.length === 0) throw new ExpressionError('the expression is empty');
  const numbers: Rational[] = [];
  let position = 0;
  let depth = 0;

  const peek = (): Token | undefined => tokens[position];
  const describeNext = (): string => {
    const token = peek();
    return token ? `"${token.text}" at position ${token.at + 1}` : 'the end of the expression';
  };
  const enter = () => {
    if (++depth > MAX_EXPRESSION_DEPTH) throw new ExpressionError(`the expression is nested more than ${MAX_EXPRESSION_DEPTH} levels deep`);
  };

  // expression := term (("+" | "-") term)*
  const parseSum = (): Rational => {
    let value = parseProduct();
    for (let token = peek(); token?.kind === '+' || token?.kind === '-'; token = peek()) {
      position++;
      const right = parseProduct();
      value = token.kind === '+' ? add(value, right) : add(value, negate(right));
    }
    return value;
  };
  // term := unary (("*" | "/") unary)*
  const parseProduct = (): Rational => {
    let value = parseUnary();
    for (let token = peek(); token?.kind === '*' || token?.kind === '/'; token = peek()) {
      position++;
      const right = parseUnary();
      value = token.kind === '*' ? multiply(value, right) : divide(value, right);
    }
    return value;
  };
  // unary := ("-" | "+") unary | primary
  const parseUnary = (): Rational => {
    const token = peek();
    if (token?.kind === '-' || token?.kind === '+') {
      position++;
      enter();
      const operand = parseUnary();
      depth--;
      return token.kind === '-' ? negate(operand) : operand;
    }
    return parsePrimary();
  };
  // primary := number | "(" expression ")"
  const parsePrimary = (): Rational => {
    const token = peek();
    if (token?.kind === 'number') {
      position++;
      const value = parseDecimal(token.text);
      numbers.push(value);
      return value;
    }
    if (token?.kind === '(') {
      position++;
      enter();
      const value = parseSum();
      depth--;
      if (peek()?.kind !== ')') throw new ExpressionError(`expected ")" but found ${describeNext()}`);
      position++;
      return value;
    }
    throw new ExpressionError(`expected a number or "(" but found ${describeNext()}`);
  };

  const value = parseSum();
  if (position < tokens.length) throw new ExpressionError(`unexpected ${describeNext()}`);
  return { value, numbers };
}

/**
 * Reads a model's numeric answer exactly: optional sign and "$", thousands separators ("1,200"),
 * a decimal part ("1200.0" equals "1200"), a trailing full stop. Anything else gives undefined.
 */
export function parseNumberAnswer(text: string): Rational | undefined {
  let cleaned = text
    .trim()
    .replace(/\.$/, '')
    .replace(/^([+\-−]?)\$/, '$1')
    .replace(/−/g, '-');
  if (/^[+-]?\d{1,3}(,\d{3})+(\.\d+)?$/.test(cleaned)) cleaned = cleaned.replace(/,/g, '');
  const match = /^([+-]?)(\d+(?:\.\d+)?)$/.exec(cleaned);
  if (!match || match[2]!.replace('.', '').length > MAX_LITERAL_DIGITS) return undefined;
  const value = parseDecimal(match[2]!);
  return match[1] === '-' ? negate(value) : value;
}

type TokenKind = 'number' | '+' | '-' | '*' | '/' | '(' | ')';
interface Token {
  kind: TokenKind;
  text: string;
  at: number;
}

const OPERATORS: Record<string, TokenKind> = { '+': '+', '-': '-', '−': '-', '*': '*', '×': '*', '/': '/', '÷': '/', '(': '(', ')': ')' };

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const char = source[i]!;
    if (/\s/.test(char)) {
      i++;
      continue;
    }
    const number = /^\d+(?:\.\d+)?/.exec(source.slice(i, i + MAX_LITERAL_DIGITS + 2));
    if (number) {
      const text = number[0];
      if (text.replace('.', '').length > MAX_LITERAL_DIGITS) throw new ExpressionError(`the number at position ${i + 1} has more than ${MAX_LITERAL_DIGITS} digits`);
      if (/^\d|^\./.test(source.slice(i + text.length, i + text.length + 1))) throw new ExpressionError(`malformed number at position ${i + 1}`);
      tokens.push({ kind: 'number', text, at: i });
      i += text.length;
      continue;
    }
    const kind = OPERATORS[char];
    if (kind) {
      if (char === '*' && source[i + 1] === '*') throw new ExpressionError(`"**" at position ${i + 1} is not allowed: only + - * / and parentheses`);
      tokens.push({ kind, text: char, at: i });
      i++;
      continue;
    }
    const word = /^[A-Za-z_$][\w$]*/.exec(source.slice(i));
    if (word) throw new ExpressionError(`"${word[0]}" at position ${i + 1} is not allowed: only numbers, + - * / and parentheses`);
    throw new ExpressionError(`"${char}" at position ${i + 1} is not allowed: only numbers, + - * / and parentheses`);
  }
  return tokens;
}

function parseDecimal(text: string): Rational {
  const [whole, fraction = ''] = text.split('.');
  return makeRational(BigInt(whole! + fraction), 10n ** BigInt(fraction.length));
}

function add(a: Rational, b: Rational): Rational {
  return makeRational(a.num * b.den + b.num * a.den, a.den * b.den);
}

function negate(a: Rational): Rational {
  return { num: -a.num, den: a.den };
}

function multiply(a: Rational, b: Rational): Rational {
  return makeRational(a.num * b.num, a.den * b.den);
}

function divide(a: Rational, b: Rational): Rational {
  if (b.num === 0n) throw new ExpressionError('division by zero');
  return makeRational(a.num * b.den, a.den * b.num);
}

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a === 0n ? 1n : a;
}

/** The fraction rounded half away from zero to `places` decimals, trailing zeros trimmed. */
function decimalString(value: Rational, places: number): string {
  const negative = value.num < 0n;
  const scale = 10n ** BigInt(places);
  const magnitude = (negative ? -value.num : value.num) * scale;
  const rounded = (magnitude * 2n + value.den) / (2n * value.den);
  const whole = rounded / scale;
  const fraction = (rounded % scale).toString().padStart(places, '0').replace(/0+$/, '');
  return `${negative && rounded !== 0n ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}
