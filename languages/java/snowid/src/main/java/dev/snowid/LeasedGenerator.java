package dev.snowid;

import dev.snowid.EtcdRegistry.Grant;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.regex.Pattern;

/**
 * A generator on a worker id leased from etcd (docs/protocol.md): acquire, renew every {@code
 * renewEveryMs} (at once when the wall clock has used up the mark), stop issuing {@code
 * stopAfterMs} after the send time of the last renewal that succeeded, call the lease lost a TTL
 * after it or when the watch sees the holder key go, then take a fresh id whose ids continue above
 * the last one this process issued.
 *
 * <p>Renewal and watch run on daemon threads: an open LeasedGenerator never keeps the JVM alive.
 * {@link #close()} releases the id cleanly and is idempotent. Safe to share between threads.
 */
public final class LeasedGenerator implements AutoCloseable {
  private static final long TICK_MS = 100;
  private static final long MAX_REACQUIRE_MS = 30_000;
  private static final Pattern ENDPOINT = Pattern.compile("https?://[^/\\s]+");

  /** What a listener is told: a worker id acquired, or lost (with why). */
  public record Event(String type, long region, long host, SnowidException error) {}

  private final class Keeper {
    final Grant grant;
    final LeaseGuard guard;
    final Generator generator;
    long lastOkSend;
    long nextDue;
    boolean lastAttemptFailed;
    volatile boolean done;

    Keeper(Grant grant, LeaseGuard guard, Generator generator, long send) {
      this.grant = grant;
      this.guard = guard;
      this.generator = generator;
      this.lastOkSend = send;
      this.nextDue = send + renewEveryMs;
    }
  }

  private final EtcdRegistry registry;
  private final Clock clock;
  private final Layout layout;
  private final long region;
  private final Long host;
  private final Path fenceFile;
  private final long ttlSeconds;
  private final long renewEveryMs;
  private final long stopAfterMs;
  private final long maxClockSkewMs;
  private final long retryEveryMs;
  private final long reacquireEveryMs;
  private final Builder generatorOptions;
  private final Consumer<Event> listener;

  private volatile Keeper keeper;
  private volatile boolean closed;
  private volatile SnowidException unhealthy;
  private Long lastIssuedMs;
  private long reacquireAt;
  private long reacquirePause;
  private final Thread thread;

  /** The options of a leased generator; every one has the default of docs/protocol.md. */
  public static final class Builder {
    private List<String> endpoints = List.of();
    private String prefix = "/snowid";
    private String cluster = "default";
    private long requestTimeoutMs = 2000;
    private Path caFile;
    private Path certFile;
    private Path keyFile;
    private String user;
    private String password;
    private long region;
    private Long host;
    private Layout layout = Presets.SNOWID;
    private Clock clock = Clock.SYSTEM;
    private Path fenceFile;
    private long ttlSeconds = 10;
    private long renewEveryMs = 3000;
    private long stopAfterMs = 8000;
    private long maxClockSkewMs = 100;
    private long quarantineMs = 10_000;
    private long retryEveryMs = 500;
    private long reacquireEveryMs = 1000;
    private Long maxBackwardMs;
    private Integer randomStartBound;
    private Long maxBorrowMs;
    private Long maxWaitMs;
    private Consumer<Event> listener;

    private Builder() {}

    /** etcd members, each {@code http(s)://host:port}. */
    public Builder endpoints(List<String> v) {
      endpoints = List.copyOf(v);
      return this;
    }

    public Builder endpoints(String... v) {
      return endpoints(List.of(v));
    }

    /** Starts with "/" and does not end with one. Default "/snowid". */
    public Builder prefix(String v) {
      prefix = v;
      return this;
    }

    /** [A-Za-z0-9._-]{1,128}. Default "default". */
    public Builder cluster(String v) {
      cluster = v;
      return this;
    }

    /**
     * The PEM CA bundle that https endpoints are checked against (their certificate must name the
     * endpoint's host). Default: the JVM's trust store.
     */
    public Builder caFile(Path v) {
      caFile = v;
      return this;
    }

    /**
     * A PEM client certificate (chain) and its unencrypted PKCS#8 PEM key ({@code BEGIN PRIVATE
     * KEY}), for members started with {@code --client-cert-auth}; a null key: the certificate file
     * holds it.
     */
    public Builder clientCertificate(Path certFile, Path keyFile) {
      this.certFile = certFile;
      this.keyFile = keyFile;
      return this;
    }

    /**
     * An etcd user: a token from {@code /v3/auth/authenticate} goes with every request, and is
     * replaced when etcd says it expired. A refused user is INVALID_ARGUMENT from {@code build()}.
     */
    public Builder user(String name, String password) {
      this.user = name;
      this.password = password;
      return this;
    }

    EtcdAccess access() {
      return new EtcdAccess(caFile, certFile, keyFile, user, password);
    }

    /** 1 ms to 1 minute; default 2000. */
    public Builder requestTimeoutMs(long v) {
      requestTimeoutMs = v;
      return this;
    }

    public Builder region(long v) {
      region = v;
      return this;
    }

    /** Pin one host id instead of any free one. */
    public Builder host(long v) {
      host = v;
      return this;
    }

    public Builder layout(Layout v) {
      layout = v;
      return this;
    }

    public Builder clock(Clock v) {
      clock = v;
      return this;
    }

    /** A fence file of this process's own (docs/protocol.md section 12). */
    public Builder fenceFile(Path v) {
      fenceFile = v;
      return this;
    }

    /** Whole seconds, 2 to 3600; default 10. */
    public Builder ttlSeconds(long v) {
      ttlSeconds = v;
      return this;
    }

    public Builder renewEveryMs(long v) {
      renewEveryMs = v;
      return this;
    }

    public Builder stopAfterMs(long v) {
      stopAfterMs = v;
      return this;
    }

    /** 0 to 60000; default 100. */
    public Builder maxClockSkewMs(long v) {
      maxClockSkewMs = v;
      return this;
    }

    /** 0 to 3600000; default 10000. */
    public Builder quarantineMs(long v) {
      quarantineMs = v;
      return this;
    }

    /** Between failed renewals; more than 0 and at most renewEveryMs. Default 500. */
    public Builder retryEveryMs(long v) {
      retryEveryMs = v;
      return this;
    }

    /** First pause between failed re-acquisitions, doubling up to 30 s. Default 1000. */
    public Builder reacquireEveryMs(long v) {
      reacquireEveryMs = v;
      return this;
    }

    public Builder maxBackwardMs(long v) {
      maxBackwardMs = v;
      return this;
    }

    public Builder randomStartBound(int v) {
      randomStartBound = v;
      return this;
    }

    public Builder maxBorrowMs(long v) {
      maxBorrowMs = v;
      return this;
    }

    public Builder maxWaitMs(long v) {
      maxWaitMs = v;
      return this;
    }

    /** Told, on a library thread, about acquired and lost worker ids. Must not block. */
    public Builder listener(Consumer<Event> v) {
      listener = v;
      return this;
    }

    /** Validates the options, acquires a worker id and returns a generator on it. */
    public LeasedGenerator build() {
      return new LeasedGenerator(this);
    }
  }

  public static Builder builder() {
    return new Builder();
  }

  /**
   * A builder configured by the tools' variables (docs/protocol.md section 4):
   * SNOWID_ETCD_ENDPOINTS (or SNOWID_ETCD), SNOWID_ETCD_PREFIX, SNOWID_ETCD_CLUSTER, the TLS files
   * SNOWID_ETCD_CA, SNOWID_ETCD_CERT and SNOWID_ETCD_KEY, SNOWID_ETCD_USER and
   * SNOWID_ETCD_PASSWORD, SNOWID_REGION, SNOWID_HOST ({@code any} or a number).
   */
  public static Builder fromEnv(Map<String, String> env) {
    Builder b = builder();
    String endpoints = env.getOrDefault("SNOWID_ETCD_ENDPOINTS", env.get("SNOWID_ETCD"));
    if (endpoints == null || endpoints.isBlank()) {
      throw SnowidException.invalid("SNOWID_ETCD_ENDPOINTS is not set or empty");
    }
    List<String> list = new ArrayList<>();
    for (String s : endpoints.split(",")) {
      if (!s.isBlank()) {
        list.add(s.trim());
      }
    }
    b.endpoints(list);
    if (env.get("SNOWID_ETCD_PREFIX") != null) {
      b.prefix(env.get("SNOWID_ETCD_PREFIX"));
    }
    if (env.get("SNOWID_ETCD_CLUSTER") != null) {
      b.cluster(env.get("SNOWID_ETCD_CLUSTER"));
    }
    String ca = nonEmpty(env, "SNOWID_ETCD_CA");
    String cert = nonEmpty(env, "SNOWID_ETCD_CERT");
    String key = nonEmpty(env, "SNOWID_ETCD_KEY");
    if (ca != null) {
      b.caFile(Path.of(ca));
    }
    if (key != null && cert == null) {
      throw SnowidException.invalid("SNOWID_ETCD_KEY needs SNOWID_ETCD_CERT");
    }
    if (cert != null) {
      b.clientCertificate(Path.of(cert), key == null ? null : Path.of(key));
    }
    String user = nonEmpty(env, "SNOWID_ETCD_USER");
    String password = env.get("SNOWID_ETCD_PASSWORD");
    if (password != null && user == null) {
      throw SnowidException.invalid("SNOWID_ETCD_PASSWORD needs SNOWID_ETCD_USER");
    }
    if (user != null) {
      b.user(user, password == null ? "" : password);
    }
    if (env.get("SNOWID_REGION") != null) {
      b.region(number("SNOWID_REGION", env.get("SNOWID_REGION")));
    }
    String host = env.get("SNOWID_HOST");
    if (host != null && !host.equals("any")) {
      b.host(number("SNOWID_HOST", host));
    }
    return b;
  }

  private static String nonEmpty(Map<String, String> env, String name) {
    String v = env.get(name);
    return v == null || v.isEmpty() ? null : v;
  }

  private static long number(String name, String v) {
    if (!v.matches("0|[1-9][0-9]{0,9}")) {
      throw SnowidException.invalid(name + " must be a whole number, not " + Json.write(v));
    }
    return Long.parseLong(v);
  }

  /** Declares a namespace that has never issued an id new (as {@code snowid workers init}). */
  public static void initializeNamespace(List<String> endpoints, String prefix, String cluster) {
    initializeNamespace(builder().endpoints(endpoints).prefix(prefix).cluster(cluster));
  }

  /**
   * Declares the namespace of {@code b} new, reaching etcd as {@code b} says (endpoints, TLS,
   * user); its other settings are not used.
   */
  public static void initializeNamespace(Builder b) {
    EtcdValues.checkNamespace(b.prefix, b.cluster);
    checkEndpoints(b.endpoints);
    EtcdRegistry r =
        new EtcdRegistry(
            b.endpoints,
            b.access(),
            b.prefix,
            b.cluster,
            Presets.SNOWID,
            0,
            b.requestTimeoutMs,
            System::currentTimeMillis);
    r.gateway.authenticate();
    r.initializeNamespace();
  }

  private static void checkEndpoints(List<String> endpoints) {
    if (endpoints.isEmpty()) {
      throw SnowidException.invalid("etcd: at least one endpoint is needed");
    }
    for (String url : endpoints) {
      if (!ENDPOINT.matcher(url).matches()) {
        throw SnowidException.invalid(
            "etcd: an endpoint is http(s)://host:port, not " + Json.write(url));
      }
    }
  }

  private LeasedGenerator(Builder b) {
    checkEndpoints(b.endpoints);
    EtcdValues.checkNamespace(b.prefix, b.cluster);
    EtcdValues.checkEtcdOptions(b.quarantineMs, b.requestTimeoutMs);
    if (b.ttlSeconds > Long.MAX_VALUE / 1000) {
      throw SnowidException.invalid("ttlSeconds is too large");
    }
    EtcdValues.checkLeaseTiming(
        b.ttlSeconds * 1000, b.renewEveryMs, b.stopAfterMs, b.maxClockSkewMs);
    if (!(b.retryEveryMs > 0 && b.retryEveryMs <= b.renewEveryMs)) {
      throw SnowidException.invalid("retryEveryMs must be more than 0 and at most renewEveryMs");
    }
    if (!(b.reacquireEveryMs > 0)) {
      throw SnowidException.invalid("reacquireEveryMs must be more than 0");
    }
    b.layout.checkWorker(b.region, b.host == null ? 0 : b.host);
    this.clock = b.clock;
    this.layout = b.layout;
    this.region = b.region;
    this.host = b.host;
    this.fenceFile = b.fenceFile;
    this.ttlSeconds = b.ttlSeconds;
    this.renewEveryMs = b.renewEveryMs;
    this.stopAfterMs = b.stopAfterMs;
    this.maxClockSkewMs = b.maxClockSkewMs;
    this.retryEveryMs = b.retryEveryMs;
    this.reacquireEveryMs = b.reacquireEveryMs;
    this.generatorOptions = b;
    this.listener = b.listener;
    this.registry =
        new EtcdRegistry(
            b.endpoints,
            b.access(),
            b.prefix,
            b.cluster,
            b.layout,
            b.quarantineMs,
            b.requestTimeoutMs,
            clock::nowMs);
    registry.warmUp();
    this.keeper = acquire();
    this.thread = new Thread(this::run, "snowid-lease-keeper");
    thread.setDaemon(true);
    thread.start();
  }

  /** The worker id held now as {region, host}, or null while a lost one is being replaced. */
  public long[] worker() {
    Keeper k = keeper;
    return k == null || k.done ? null : new long[] {k.grant.region(), k.grant.host()};
  }

  /** True while a worker id is held and its lease confirmed in time. */
  public boolean ready() {
    Keeper k = keeper;
    return k != null && !k.done && clock.monoMs() < k.guard.deadlineMono();
  }

  /** False for good once the clock moved back beyond maxBackwardMs (the id is given back). */
  public boolean healthy() {
    return unhealthy == null;
  }

  public boolean closed() {
    return closed;
  }

  /** The next id; waits like {@link Generator#nextId()}; LEASE_UNCERTAIN while not confirmed. */
  public long nextId() {
    return current().nextId();
  }

  public long tryNextId() {
    return current().tryNextId();
  }

  /** Up to {@code n} consecutive ids of one tick; waits like {@link Generator#reserve(int)}. */
  public Generator.IdBatch reserve(int n) {
    return current().reserve(n);
  }

  /**
   * Stops issuing, records the fence, and releases the worker id with the exact last instant
   * issued, so that its next holder need not wait out the quarantine. Idempotent; a release that
   * fails is reported after the lease has been abandoned.
   */
  @Override
  public void close() {
    Keeper k;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      k = keeper;
      if (k == null || k.done) {
        return;
      }
      stop(k);
    }
    thread.interrupt();
    k.generator.close();
    try {
      registry.release(k.grant, k.generator.lastIssuedMs());
    } catch (SnowidException e) {
      registry.abandon(k.grant);
      if (e.code() != Code.LEASE_LOST) {
        throw e;
      }
    }
  }

  // --- internals ---------------------------------------------------------------------------

  private Generator current() {
    if (closed) {
      throw new SnowidException(Code.FAILED_PRECONDITION, "the leased generator is closed");
    }
    SnowidException bad = unhealthy;
    if (bad != null) {
      throw new SnowidException(Code.UNHEALTHY, bad.getMessage());
    }
    Keeper k = keeper;
    if (k == null || k.done) {
      throw new SnowidException(
          Code.LEASE_UNCERTAIN, "the worker-id lease was lost; a fresh id is being acquired", 10);
    }
    return k.generator;
  }

  private static String hostName() {
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (UnknownHostException e) {
      return "";
    }
  }

  private Keeper acquire() {
    long send = clock.monoMs();
    long highWaterMs = clock.nowMs() + stopAfterMs;
    ProcessHandle me = ProcessHandle.current();
    long started = me.info().startInstant().map(Instant::toEpochMilli).orElse(0L);
    Grant grant =
        registry.acquire(
            region,
            host,
            ttlSeconds,
            stopAfterMs,
            highWaterMs,
            new EtcdValues.Holder(hostName(), me.pid(), started, "", 0));
    LeaseGuard guard = new LeaseGuard();
    guard.extend(send + stopAfterMs, highWaterMs);
    Long waitUntil = EtcdValues.waitUntilMs(grant.previousHighWaterMs(), null, maxClockSkewMs);
    Generator generator;
    try {
      Generator.Builder g =
          Generator.builder()
              .layout(layout)
              .worker(grant.region(), grant.host())
              .clock(clock)
              .lease(guard)
              .onUnhealthy(this::onUnhealthy);
      Builder o = generatorOptions;
      if (o.maxBackwardMs != null) {
        g.maxBackwardMs(o.maxBackwardMs);
      }
      if (o.randomStartBound != null) {
        g.randomStartBound(o.randomStartBound);
      }
      if (o.maxBorrowMs != null) {
        g.maxBorrowMs(o.maxBorrowMs);
      }
      if (o.maxWaitMs != null) {
        g.maxWaitMs(o.maxWaitMs);
      }
      if (fenceFile != null) {
        g.fenceFile(fenceFile);
      }
      if (waitUntil != null) {
        g.waitUntilMs(waitUntil);
      }
      if (lastIssuedMs != null) {
        g.continueAfterMs(lastIssuedMs);
      }
      generator = g.build();
    } catch (RuntimeException e) {
      registry.abandon(grant);
      throw e;
    }
    Keeper k = new Keeper(grant, guard, generator, send);
    Thread w = new Thread(() -> watch(k), "snowid-lease-watch");
    w.setDaemon(true);
    w.start();
    tell(new Event("acquired", grant.region(), grant.host(), null));
    return k;
  }

  private void tell(Event e) {
    if (listener != null) {
      try {
        listener.accept(e);
      } catch (RuntimeException ignored) {
        // a listener's failure is its own
      }
    }
  }

  private static SnowidException leaseLost(Keeper k, String why) {
    return new SnowidException(
        Code.LEASE_LOST, "lease on worker " + k.grant.region() + "/" + k.grant.host() + " " + why);
  }

  private void watch(Keeper k) {
    while (!k.done) {
      try {
        if (registry.waitLost(k.grant, () -> k.done)) {
          lose(k, leaseLost(k, "was revoked or expired"));
        }
        return;
      } catch (InterruptedException e) {
        return;
      } catch (RuntimeException e) {
        try {
          Thread.sleep(retryEveryMs);
        } catch (InterruptedException ie) {
          return;
        }
      }
    }
  }

  private void run() {
    while (!closed) {
      try {
        Thread.sleep(TICK_MS);
      } catch (InterruptedException e) {
        if (closed) {
          return;
        }
      }
      try {
        tick();
      } catch (RuntimeException e) {
        // the next tick tries again
      }
    }
  }

  private void tick() {
    Keeper k = keeper;
    if (closed || unhealthy != null) {
      return;
    }
    if (k == null || k.done) {
      long now = clock.monoMs();
      if (now >= reacquireAt) {
        reacquire(now);
      }
      return;
    }
    long now = clock.monoMs();
    if (now >= k.lastOkSend + ttlSeconds * 1000) {
      lose(k, leaseLost(k, "expired: no renewal succeeded in time"));
      return;
    }
    boolean markRunningOut =
        !k.lastAttemptFailed
            && clock.nowMs() > k.guard.highWaterMs() - (stopAfterMs - renewEveryMs);
    if (now < k.nextDue && !markRunningOut) {
      return;
    }
    renew(k);
  }

  private void renew(Keeper k) {
    long send = clock.monoMs();
    long highWaterMs = clock.nowMs() + stopAfterMs;
    try {
      registry.renew(k.grant, highWaterMs, k.lastOkSend + ttlSeconds * 1000 - send);
      if (k.done) {
        return;
      }
      // The deadline counts from the send time: etcd may have taken the renewal any time after.
      k.guard.extend(send + stopAfterMs, highWaterMs);
      k.lastOkSend = Math.max(k.lastOkSend, send);
      k.lastAttemptFailed = false;
      k.nextDue = send + renewEveryMs;
    } catch (SnowidException e) {
      k.lastAttemptFailed = true;
      k.nextDue = send + retryEveryMs;
      if (e.code() == Code.LEASE_LOST) {
        lose(k, e);
      }
    }
  }

  private void stop(Keeper k) {
    k.done = true;
    k.guard.markLost();
  }

  private void lose(Keeper k, SnowidException error) {
    synchronized (this) {
      if (k.done) {
        return;
      }
      stop(k);
      long last = k.generator.lastIssuedMs();
      lastIssuedMs = lastIssuedMs == null ? last : Math.max(lastIssuedMs, last);
      reacquirePause = reacquireEveryMs;
      reacquireAt = clock.monoMs();
    }
    registry.abandon(k.grant);
    tell(new Event("lost", k.grant.region(), k.grant.host(), error));
  }

  private void reacquire(long now) {
    Keeper k;
    try {
      k = acquire();
    } catch (RuntimeException e) {
      reacquireAt = now + reacquirePause;
      reacquirePause = Math.min(reacquirePause * 2, Math.max(MAX_REACQUIRE_MS, reacquireEveryMs));
      return;
    }
    boolean release;
    synchronized (this) {
      release = closed || unhealthy != null;
      if (!release) {
        keeper = k;
      }
    }
    if (release) {
      stop(k);
      k.generator.close();
      try {
        registry.release(k.grant, k.generator.lastIssuedMs());
      } catch (RuntimeException e) {
        registry.abandon(k.grant);
      }
    }
  }

  private void onUnhealthy(SnowidException e) {
    Keeper k;
    synchronized (this) {
      unhealthy = e;
      k = keeper;
      if (k == null || k.done) {
        return;
      }
      stop(k);
    }
    // A host whose clock cannot be trusted takes no id: give this one back, off the caller's
    // thread, and stop.
    Thread t =
        new Thread(
            () -> {
              try {
                registry.release(k.grant, k.generator.lastIssuedMs());
              } catch (RuntimeException ex) {
                registry.abandon(k.grant);
              }
            },
            "snowid-lease-release");
    t.setDaemon(true);
    t.start();
  }
}
