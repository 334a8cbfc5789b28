package dev.snowid;

/** The stable error codes of snowid, the same words in every language's library. */
public enum Code {
  SEQUENCE_EXHAUSTED(true),
  CLOCK_BEHIND(true),
  UNAVAILABLE(true),
  LEASE_UNCERTAIN(true),
  CLOCK_MOVED_BACK(false),
  UNHEALTHY(false),
  OUT_OF_RANGE(false),
  INVALID_ARGUMENT(false),
  FAILED_PRECONDITION(false),
  DATA_LOSS(false),
  NOT_FOUND(false),
  LEASE_LOST(false),
  RESOURCE_EXHAUSTED(false),
  ALREADY_EXISTS(false);

  private final boolean retryable;

  Code(boolean retryable) {
    this.retryable = retryable;
  }

  /** True when the same call may succeed later without anyone changing anything. */
  public boolean isRetryable() {
    return retryable;
  }
}
