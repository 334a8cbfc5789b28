/**
 * Errors carry the stable code names of the C++ library (include/snowid/status.h) and say
 * whether the same call can succeed later without anyone fixing anything.
 */
export const Codes = [
  "SEQUENCE_EXHAUSTED",
  "CLOCK_BEHIND",
  "UNAVAILABLE",
  "LEASE_UNCERTAIN",
  "CLOCK_MOVED_BACK",
  "UNHEALTHY",
  "OUT_OF_RANGE",
  "INVALID_ARGUMENT",
  "FAILED_PRECONDITION",
  "DATA_LOSS",
  "NOT_FOUND",
  "LEASE_LOST",
  "RESOURCE_EXHAUSTED",
  "ALREADY_EXISTS",
] as const;

export type Code = (typeof Codes)[number];

const RETRYABLE: ReadonlySet<string> = new Set([
  "SEQUENCE_EXHAUSTED",
  "CLOCK_BEHIND",
  "UNAVAILABLE",
  "LEASE_UNCERTAIN",
]);

/** True when retrying the same call later may succeed (the C++ `is_retryable`). */
export function isRetryable(code: Code): boolean {
  return RETRYABLE.has(code);
}

export function isCode(word: string): word is Code {
  return (Codes as readonly string[]).includes(word);
}

export class SnowidError extends Error {
  readonly code: Code;
  /** Whether the same call can succeed later without a change anywhere. */
  readonly retryable: boolean;
  /** For retryable codes: about how long until a retry can succeed, in milliseconds. */
  readonly retryAfterMs: number;

  constructor(code: Code, message: string, retryAfterMs = 0, options?: { cause?: unknown }) {
    super(`${code}: ${message}`, options);
    this.name = "SnowidError";
    this.code = code;
    this.retryable = isRetryable(code);
    this.retryAfterMs = this.retryable ? Math.max(0, retryAfterMs) : 0;
  }
}

export function invalid(message: string): SnowidError {
  return new SnowidError("INVALID_ARGUMENT", message);
}

export function outOfRange(message: string): SnowidError {
  return new SnowidError("OUT_OF_RANGE", message);
}
