/** A command line that cannot be understood: usage is printed and the exit code is 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** A command that exists but is not part of this build yet: exit code 1 with the reason. */
export class NotAvailableError extends Error {
  constructor(command: string, reason: string) {
    super(`market ${command} is not available in this version yet: ${reason}`);
    this.name = 'NotAvailableError';
  }
}
