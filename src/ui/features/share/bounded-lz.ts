/**
 * lz-string's `decompressFromEncodedURIComponent` with a cap on the text it produces, checked while it
 * decompresses: the LZW scheme lets each code stand for a string one character longer than the last,
 * so a link of 154k characters decompressed to 1.9 GB before its size could be checked. The decoding
 * is lz-string 1.5's own (MIT), step for step, so every link lz-string makes decodes the same here;
 * only the running count of characters is new. It does not compress (lz-string does).
 */

/** lz-string's URI-safe alphabet, in the order of the values its characters stand for. */
const URI_SAFE_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+-$';
const VALUE_OF = new Map([...URI_SAFE_ALPHABET].map((character, value) => [character, value]));
/** Each input character carries 6 bits. */
const RESET_VALUE = 32;

/** Thrown when the decompressed text would be longer than allowed. */
export class DecompressedTooLongError extends Error {
  override readonly name = 'DecompressedTooLongError';
}

/**
 * Decompresses `input` (lz-string's URI-safe encoding) as lz-string does, throwing
 * DecompressedTooLongError as soon as the output passes `maxChars`; null for damaged input, as lz-string.
 */
export function decompressBounded(input: string, maxChars: number): string | null {
  if (input === '') return null;
  const text = input.replace(/ /g, '+');
  const length = text.length;
  const valueAt = (index: number) => VALUE_OF.get(text.charAt(index)) ?? 0;
  const data = { val: valueAt(0), position: RESET_VALUE, index: 1 };
  const readBits = (count: number): number => {
    let bits = 0;
    for (let power = 1; power !== 2 ** count; power <<= 1) {
      const bit = data.val & data.position;
      data.position >>= 1;
      if (data.position === 0) {
        data.position = RESET_VALUE;
        data.val = valueAt(data.index++);
      }
      bits |= (bit > 0 ? 1 : 0) * power;
    }
    return bits;
  };
  const dictionary: (string | number)[] = [0, 1, 2];
  let enlargeIn = 4;
  let dictSize = 4;
  let numBits = 3;
  let produced = 0;
  const result: string[] = [];
  const emit = (piece: string) => {
    produced += piece.length;
    if (produced > maxChars) throw new DecompressedTooLongError(`the compressed text decompresses to more than ${maxChars} characters`);
    result.push(piece);
  };

  const first = readBits(2);
  if (first === 2) return '';
  const c = String.fromCharCode(readBits(first === 0 ? 8 : 16));
  dictionary[3] = c;
  let w = c;
  emit(c);
  for (;;) {
    if (data.index > length) return '';
    let code = readBits(numBits);
    if (code === 0 || code === 1) {
      dictionary[dictSize++] = String.fromCharCode(readBits(code === 0 ? 8 : 16));
      code = dictSize - 1;
      enlargeIn--;
    } else if (code === 2) {
      return result.join('');
    }
    if (enlargeIn === 0) {
      enlargeIn = 2 ** numBits;
      numBits++;
    }
    let entry: string;
    const known = dictionary[code];
    if (known) entry = known as string;
    else if (code === dictSize) entry = w + w.charAt(0);
    else return null;
    emit(entry);
    dictionary[dictSize++] = w + entry.charAt(0);
    enlargeIn--;
    w = entry;
    if (enlargeIn === 0) {
      enlargeIn = 2 ** numBits;
      numBits++;
    }
  }
}
