package dev.snowid;

import java.time.Duration;

/**
 * Every failure of the library: a stable {@link Code}, whether retrying the same call can succeed,
 * and for the retryable codes about how long to wait first.
 */
public class SnowidException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final Code code;
  private final long retryAfterMs;

  public SnowidException(Code code, String message) {
    this(code, message, 0, null);
  }

  public SnowidException(Code code, String message, long retryAfterMs) {
    this(code, message, retryAfterMs, null);
  }

  public SnowidException(Code code, String message, long retryAfterMs, Throwable cause) {
    super(code.name() + ": " + message, cause);
    this.code = code;
    this.retryAfterMs = code.isRetryable() ? Math.max(0, retryAfterMs) : 0;
  }

  public Code code() {
    return code;
  }

  public boolean isRetryable() {
    return code.isRetryable();
  }

  /** For a retryable code, about how long until a retry can succeed; zero otherwise. */
  public Duration retryAfter() {
    return Duration.ofMillis(retryAfterMs);
  }

  public long retryAfterMs() {
    return retryAfterMs;
  }

  static SnowidException invalid(String message) {
    return new SnowidException(Code.INVALID_ARGUMENT, message);
  }

  static SnowidException outOfRange(String message) {
    return new SnowidException(Code.OUT_OF_RANGE, message);
  }

  static SnowidException dataLoss(String message) {
    return new SnowidException(Code.DATA_LOSS, message);
  }
}
