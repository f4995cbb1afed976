/** An error the CLI prints as one clear message (no stack) before exiting non-zero; with `pointToHelp`, followed by where the command's options are listed. */
export class CliError extends Error {
  override readonly name = 'CliError';

  constructor(
    message: string,
    readonly exitCode = 1,
    readonly pointToHelp = false,
  ) {
    super(message);
  }
}
