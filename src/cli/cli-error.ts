/** An error the CLI prints as one clear message (no stack) before exiting non-zero. */
export class CliError extends Error {
  override readonly name = 'CliError';

  constructor(message: string, readonly exitCode = 1) {
    super(message);
  }
}
