#include "settings.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <initializer_list>
#include <set>
#include <string>
#include <vector>

#include "setting_values.h"
#include "snowid/etcd_endpoints.h"

namespace snowid::daemon {
namespace {

using namespace std::chrono_literals;

// Never the real environment: every test starts from a user with a home.
host::MapEnvironment base_env() {
  host::MapEnvironment env;
  env.variables["HOME"] = "/home/u";
  env.user = 1000;
  return env;
}

Result<Settings> load(std::initializer_list<const char*> args, const host::Environment& env) {
  std::vector<const char*> argv = {"snowidd"};
  argv.insert(argv.end(), args.begin(), args.end());
  return load_settings(static_cast<int>(argv.size()), argv.data(), env);
}

Result<Settings> load(std::initializer_list<const char*> args) { return load(args, base_env()); }

// The error message of a load that must fail with kInvalidArgument.
std::string error_of(const Result<Settings>& r) {
  EXPECT_FALSE(r.is_ok());
  if (r.is_ok()) return "";
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << r.status().message();
  return r.status().message();
}

Result<Settings> load_toml(const std::string& toml) {
  host::MapEnvironment env = base_env();
  env.files["snowidd.toml"] = toml;
  return load({"--config", "snowidd.toml"}, env);
}

TEST(Settings, DefaultsRunWithNoConfiguration) {
  const Result<Settings> r = load({});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  const Settings& s = r.value();
  EXPECT_EQ(s.action, Action::kRun);
  EXPECT_EQ(s.config_file, "");
  EXPECT_EQ(s.socket, "/tmp/snowid-1000/snowidd.sock");
  ASSERT_TRUE(s.http.has_value());
  EXPECT_EQ(s.http->to_string(), "127.0.0.1:7390");
  EXPECT_FALSE(s.tcp.has_value());
  EXPECT_TRUE(s.registry.etcd_endpoints.empty());
  EXPECT_EQ(s.region, 0u);
  EXPECT_EQ(s.registry.state_dir, "/home/u/.local/state/snowid");
  EXPECT_EQ(s.socket_mode, 0660u);
  EXPECT_EQ(s.max_batch, 10000u);
  EXPECT_EQ(s.threads, 2u);
  EXPECT_EQ(s.log_level, LogLevel::kInfo);
  EXPECT_TRUE(s.log_json);
  EXPECT_EQ(s.http_token, "");
  EXPECT_EQ(s.first_request_timeout, 10s);
  EXPECT_EQ(s.lease_ttl, 10s);
  EXPECT_EQ(s.lease_renew, 3s);
  EXPECT_EQ(s.lease_stop, 8s);
  EXPECT_EQ(s.registry.quarantine, 0s);
  EXPECT_EQ(s.max_clock_skew, 100ms);
  EXPECT_EQ(s.max_backward, 100ms);
  EXPECT_EQ(s.registry.etcd_prefix, "/snowid");
  EXPECT_EQ(s.registry.etcd_cluster, "default");
  EXPECT_EQ(s.layout, "snowid");
#if SNOWID_DAEMON_SEQUENCE_STORES
  EXPECT_EQ(s.sequences, "sqlite:/home/u/.local/state/snowid/sequences.db");
#else
  EXPECT_EQ(s.sequences, "off");
#endif
  EXPECT_EQ(s.sequence_refill, 20u);
  EXPECT_EQ(s.sequence_wait_timeout, 1s);
  EXPECT_EQ(s.sequence_step, 0);
  EXPECT_FALSE(s.sequence_adaptive);
  EXPECT_EQ(s.sequence_min_step, 100);
  EXPECT_EQ(s.sequence_max_step, 100000);
  EXPECT_EQ(s.sequence_range_life, 60s);
  EXPECT_EQ(s.sequence_store_timeout, 5s);
  EXPECT_EQ(s.max_range, 1000000);
  EXPECT_EQ(s.sequence_threads, 4u);
  EXPECT_EQ(s.max_sequences, 1000u);
  EXPECT_TRUE(s.warnings.empty());
}

#if SNOWID_DAEMON_SEQUENCE_STORES
TEST(Settings, DefaultSequencesFileIsInTheStateDir) {
  EXPECT_EQ(load({"--state-dir", "/srv/snowid"})->sequences, "sqlite:/srv/snowid/sequences.db");
  host::MapEnvironment env = base_env();
  env.variables["SNOWID_SEQUENCES"] = "off";
  EXPECT_EQ(load({"--state-dir", "/srv/snowid"}, env)->sequences, "off");
}
#endif

TEST(Settings, SequencesTakeTheStoreFormsOrOff) {
  for (const char* ok :
       {"off", "sqlite:/var/lib/snowid/seq.db", "sqlite:relative.db",
        "postgresql://snowid@db.example:5432/snowid", "postgres://db/snowid?sslmode=require"}) {
    const Result<Settings> r = load({"--sequences", ok});
    ASSERT_TRUE(r.is_ok()) << ok << ": " << r.status().message();
    EXPECT_EQ(r->sequences, ok);
  }
  for (const char* bad : {"", "on", "sqlite:", "postgresql://", "mysql://u:hunter2@db/x",
                          "SQLITE:/x", "/var/lib/snowid/seq.db"}) {
    const std::string err = error_of(load({"--sequences", bad}));
    EXPECT_EQ(err,
              "--sequences: sequences must be sqlite:PATH, a postgresql:// (or postgres://) URL, "
              "or off")
        << bad;
    EXPECT_EQ(err.find("hunter2"), std::string::npos) << "a password is never echoed";
  }
  EXPECT_EQ(load_toml("sequences = \"off\"\n")->sequences, "off");
}

TEST(Settings, SequenceBoundsAtAndPastTheEdges) {
  EXPECT_EQ(load({"--sequence-refill", "1"})->sequence_refill, 1u);
  EXPECT_EQ(load({"--sequence-refill", "99"})->sequence_refill, 99u);
  EXPECT_EQ(error_of(load({"--sequence-refill", "0"})),
            "--sequence-refill: sequence_refill must be 1..99, not \"0\"");
  EXPECT_FALSE(load({"--sequence-refill", "100"}).is_ok());
  EXPECT_EQ(load({"--sequence-wait-timeout", "1ms"})->sequence_wait_timeout, 1ms);
  EXPECT_EQ(load({"--sequence-wait-timeout", "1m"})->sequence_wait_timeout, 1min);
  EXPECT_EQ(error_of(load({"--sequence-wait-timeout", "0"})),
            "--sequence-wait-timeout: sequence_wait_timeout must be 1ms..1m, not 0ms");
  EXPECT_FALSE(load({"--sequence-wait-timeout", "61s"}).is_ok());
  EXPECT_EQ(load({"--sequence-step", "0"})->sequence_step, 0);
  EXPECT_EQ(load({"--sequence-step", "1000000000"})->sequence_step, 1000000000);
  EXPECT_FALSE(load({"--sequence-step", "1000000001"}).is_ok());
  EXPECT_FALSE(load({"--sequence-step", "-1"}).is_ok());
  EXPECT_TRUE(load({"--sequence-adaptive"})->sequence_adaptive);
  EXPECT_EQ(load({"--sequence-min-step", "1"})->sequence_min_step, 1);
  EXPECT_FALSE(load({"--sequence-min-step", "0"}).is_ok());
  EXPECT_EQ(load({"--sequence-max-step", "1000000000"})->sequence_max_step, 1000000000);
  EXPECT_FALSE(load({"--sequence-max-step", "1000000001"}).is_ok());
  EXPECT_EQ(load({"--sequence-range-life", "1s"})->sequence_range_life, 1s);
  EXPECT_FALSE(load({"--sequence-range-life", "999ms"}).is_ok());
  EXPECT_EQ(load({"--sequence-store-timeout", "100ms"})->sequence_store_timeout, 100ms);
  EXPECT_FALSE(load({"--sequence-store-timeout", "99ms"}).is_ok());
  EXPECT_FALSE(load({"--sequence-store-timeout", "301s"}).is_ok());
  EXPECT_EQ(load({"--first-request-timeout", "100ms"})->first_request_timeout, 100ms);
  EXPECT_EQ(load({"--first-request-timeout", "1h"})->first_request_timeout, 1h);
  EXPECT_EQ(error_of(load({"--first-request-timeout", "99ms"})),
            "--first-request-timeout: first_request_timeout must be 100ms..1h, not 99ms");
  EXPECT_FALSE(load({"--first-request-timeout", "3600001"}).is_ok());
  EXPECT_EQ(load({"--max-range", "1"})->max_range, 1);
  EXPECT_EQ(load({"--max-range", "1000000000"})->max_range, 1000000000);
  EXPECT_EQ(error_of(load({"--max-range", "1000000001"})),
            "--max-range: max_range must be 1..1000000000, not \"1000000001\"");
  EXPECT_EQ(load({"--sequence-threads", "64"})->sequence_threads, 64u);
  EXPECT_EQ(load({"--max-sequences", "1"})->max_sequences, 1u);
  EXPECT_EQ(load({"--max-sequences", "100000"})->max_sequences, 100000u);
  EXPECT_FALSE(load({"--max-sequences", "0"}).is_ok());
  EXPECT_FALSE(load({"--max-sequences", "100001"}).is_ok());
  EXPECT_FALSE(load({"--sequence-threads", "0"}).is_ok());
  EXPECT_FALSE(load({"--sequence-threads", "65"}).is_ok());
}

TEST(Settings, SequenceMinStepMustNotExceedMaxStep) {
  EXPECT_EQ(error_of(load({"--sequence-min-step", "200", "--sequence-max-step", "100"})),
            "--sequence-min-step: sequence_min_step (200) must be at most sequence_max_step (100)");
  const Result<Settings> equal = load({"--sequence-min-step", "500", "--sequence-max-step", "500"});
  ASSERT_TRUE(equal.is_ok()) << equal.status().message();
  EXPECT_EQ(error_of(load({"--sequence-min-step", "100001"})),
            "--sequence-min-step: sequence_min_step (100001) must be at most sequence_max_step "
            "(100000)");
}

TEST(Settings, APasswordInTheSequencesFlagWarns) {
  Result<Settings> r = load({"--sequences", "postgresql://snowid:hunter2@db/snowid"});
  ASSERT_TRUE(r.is_ok());
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_NE(r->warnings[0].find("sequences"), std::string::npos);
  EXPECT_EQ(r->warnings[0].find("hunter2"), std::string::npos);
  r = load({"--sequences", "postgresql://db/snowid?user=s&password=hunter2"});
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r->warnings.size(), 1u);
  EXPECT_TRUE(load({"--sequences", "postgresql://snowid@db/snowid"})->warnings.empty());
  host::MapEnvironment env = base_env();
  env.variables["SNOWID_SEQUENCES"] = "postgresql://snowid:hunter2@db/snowid";
  EXPECT_TRUE(load({}, env)->warnings.empty()) << "the environment is the place for it";
}

TEST(Settings, DefaultSocketFollowsRuntimeDirThenRoot) {
  host::MapEnvironment env = base_env();
  env.variables["XDG_RUNTIME_DIR"] = "/run/user/1000";
  EXPECT_EQ(load({}, env)->socket, "/run/user/1000/snowid/snowidd.sock");
  env.variables["XDG_RUNTIME_DIR"] = "relative";  // ignored, as XDG says
  EXPECT_EQ(load({}, env)->socket, "/tmp/snowid-1000/snowidd.sock");
  env.variables.erase("XDG_RUNTIME_DIR");
  env.user = 0;
  EXPECT_EQ(load({}, env)->socket, "/run/snowid/snowidd.sock");
}

TEST(Settings, DefaultStateDirMatchesTheTool) {
  host::MapEnvironment env = base_env();
  env.variables["XDG_STATE_HOME"] = "/xdg/state";
  EXPECT_EQ(load({}, env)->registry.state_dir, "/xdg/state/snowid");
  env.variables["SNOWID_STATE_DIR"] = "/srv/snowid";
  EXPECT_EQ(load({}, env)->registry.state_dir, "/srv/snowid");

  host::MapEnvironment homeless;
  EXPECT_NE(error_of(load({}, homeless)).find("state_dir"), std::string::npos);
  homeless.user = 0;
  EXPECT_EQ(load({}, homeless)->registry.state_dir, "/var/lib/snowid");
}

TEST(Settings, QuarantineDefaultDependsOnRegistry) {
  EXPECT_EQ(load({"--etcd", "http://10.0.0.1:2379"})->registry.quarantine, 10s);
  EXPECT_EQ(load({"--etcd", "http://a:2379", "--quarantine", "2s"})->registry.quarantine, 2s);
}

TEST(Settings, FlagBeatsEnvironmentBeatsFileBeatsDefault) {
  host::MapEnvironment env = base_env();
  env.files["c.toml"] = "region = 1\nthreads = 3\nmax_batch = 50\nlog_level = \"debug\"\n";
  env.variables["SNOWID_CONFIG"] = "c.toml";
  env.variables["SNOWID_REGION"] = "2";
  env.variables["SNOWID_THREADS"] = "4";
  const Result<Settings> r = load({"--region", "3"}, env);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(r->config_file, "c.toml");
  EXPECT_EQ(r->region, 3u);                   // flag over variable and file
  EXPECT_EQ(r->threads, 4u);                  // variable over file
  EXPECT_EQ(r->max_batch, 50u);               // file over default
  EXPECT_EQ(r->log_level, LogLevel::kDebug);  // file over default
  EXPECT_EQ(r->socket_mode, 0660u);           // default
}

TEST(Settings, ConfigFlagBeatsConfigVariable) {
  host::MapEnvironment env = base_env();
  env.files["a.toml"] = "region = 1\n";
  env.files["b.toml"] = "region = 2\n";
  env.variables["SNOWID_CONFIG"] = "a.toml";
  EXPECT_EQ(load({"--config=b.toml"}, env)->region, 2u);
  EXPECT_EQ(load({}, env)->region, 1u);
}

TEST(Settings, EmptyVariableCountsAsUnset) {
  host::MapEnvironment env = base_env();
  env.variables["SNOWID_REGION"] = "";
  EXPECT_EQ(load({}, env)->region, 0u);
}

TEST(Settings, MissingConfigFileIsNotFound) {
  const Result<Settings> r = load({"--config", "nope.toml"});
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Code::kNotFound);
  EXPECT_NE(r.status().message().find("nope.toml"), std::string::npos);
}

TEST(Settings, InvalidValueAtAnyLevelIsAnErrorEvenIfOverridden) {
  host::MapEnvironment env = base_env();
  env.variables["SNOWID_REGION"] = "x";
  EXPECT_EQ(error_of(load({"--region", "1"}, env)),
            "SNOWID_REGION: region must be 0..1023, not \"x\"");
}

TEST(Settings, RegionBoundsFollowTheLayout) {
  EXPECT_EQ(load({"--region", "3"})->region, 3u);
  host::MapEnvironment env = base_env();
  env.variables["SNOWID_REGION"] = "7";
  EXPECT_EQ(error_of(load({}, env)), "SNOWID_REGION: region must be 0..3 (layout snowid), not 7");
  EXPECT_EQ(error_of(load({"--region", "-1"})), "--region: region must be 0..1023, not \"-1\"");
  EXPECT_EQ(error_of(load({"--region", "1024"})), "--region: region must be 0..1023, not \"1024\"");
}

TEST(Settings, HostIsUnpinnedByDefaultAndPinnedWithinTheLayout) {
  EXPECT_FALSE(load({})->host.has_value());
  EXPECT_EQ(load({"--host", "0"})->host, std::optional<std::uint32_t>(0));
  EXPECT_EQ(load({"--host=255"})->host, std::optional<std::uint32_t>(255));
  host::MapEnvironment env = base_env();
  env.variables["SNOWID_HOST"] = "256";
  EXPECT_EQ(error_of(load({}, env)), "SNOWID_HOST: host must be 0..255 (layout snowid), not 256");
  EXPECT_EQ(error_of(load({"--host", "-1"})), "--host: host must be any or 0..65535, not \"-1\"");
  EXPECT_EQ(error_of(load({"--host", "65536"})),
            "--host: host must be any or 0..65535, not \"65536\"");
  EXPECT_FALSE(load({"--host", "1x"}).is_ok());
  EXPECT_FALSE(load({"--host", ""}).is_ok());
}

TEST(Settings, HostAnyUndoesAPinOfLowerPrecedence) {
  host::MapEnvironment env = base_env();
  env.files["c.toml"] = "host = 7\n";
  env.variables["SNOWID_CONFIG"] = "c.toml";
  EXPECT_EQ(load({}, env)->host, std::optional<std::uint32_t>(7));
  env.variables["SNOWID_HOST"] = "any";
  EXPECT_FALSE(load({}, env)->host.has_value());
  EXPECT_EQ(load({"--host", "9"}, env)->host, std::optional<std::uint32_t>(9));
  EXPECT_FALSE(load_toml("host = \"any\"\n")->host.has_value());
  EXPECT_EQ(error_of(load_toml("host = \"7\"\n")),
            "snowidd.toml:1: host must be an integer or \"any\"");
}

TEST(Settings, IntegerBoundsAtAndPastTheEdges) {
  EXPECT_EQ(load({"--max-batch", "1"})->max_batch, 1u);
  EXPECT_EQ(load({"--max-batch", "100000"})->max_batch, 100000u);
  EXPECT_EQ(error_of(load({"--max-batch", "0"})),
            "--max-batch: max_batch must be 1..100000, not \"0\"");
  EXPECT_EQ(error_of(load({"--max-batch", "100001"})),
            "--max-batch: max_batch must be 1..100000, not \"100001\"");
  EXPECT_EQ(load({"--threads=64"})->threads, 64u);
  EXPECT_FALSE(load({"--threads=65"}).is_ok());
  EXPECT_FALSE(load({"--threads=2x"}).is_ok());
  EXPECT_FALSE(load({"--threads=99999999999999999999"}).is_ok());
}

TEST(Settings, DurationsParseUnitsAndBounds) {
  EXPECT_EQ(load({"--max-backward", "250"})->max_backward, 250ms);
  EXPECT_EQ(load({"--max-backward", "250ms"})->max_backward, 250ms);
  EXPECT_EQ(load({"--max-backward", "2s"})->max_backward, 2s);
  EXPECT_EQ(load({"--max-backward", "1h"})->max_backward, 1h);
  EXPECT_EQ(error_of(load({"--max-backward", "61m"})),
            "--max-backward: max_backward must be 0ms..1h, not 61m");
  EXPECT_EQ(load({"--max-clock-skew", "0"})->max_clock_skew, 0ms);
  EXPECT_EQ(load({"--max-clock-skew", "1m"})->max_clock_skew, 1min);
  EXPECT_FALSE(load({"--max-clock-skew", "60001"}).is_ok());
  EXPECT_FALSE(load({"--max-clock-skew", "-1"}).is_ok());
  EXPECT_FALSE(load({"--max-clock-skew", "1.5s"}).is_ok());
  EXPECT_FALSE(load({"--max-clock-skew", "10 s"}).is_ok());
  EXPECT_FALSE(load({"--max-clock-skew", "99999999999999999h"}).is_ok());
  EXPECT_EQ(load({"--lease-ttl", "2s", "--lease-stop", "1500ms", "--lease-renew", "1s"})->lease_ttl,
            2s);
  EXPECT_FALSE(load({"--lease-ttl", "1999"}).is_ok());
}

TEST(Settings, LeaseTimingsMustBeOrdered) {
  EXPECT_EQ(error_of(load({"--lease-renew", "8s"})),
            "--lease-renew: lease_renew (8s) must be less than lease_stop (8s)");
  EXPECT_EQ(error_of(load({"--lease-stop", "10s"})),
            "--lease-stop: lease_stop (10s) must be less than lease_ttl (10s)");
  EXPECT_EQ(error_of(load({"--lease-ttl", "10500ms"})),
            "--lease-ttl: lease_ttl must be whole seconds, not 10500ms");
}

TEST(Settings, ModeIsOctal) {
  EXPECT_EQ(load({"--socket-mode", "0600"})->socket_mode, 0600u);
  EXPECT_EQ(load({"--socket-mode", "777"})->socket_mode, 0777u);
  EXPECT_EQ(load({"--socket-mode", "0o640"})->socket_mode, 0640u);
  EXPECT_EQ(error_of(load({"--socket-mode", "01000"})),
            "--socket-mode: socket_mode must be an octal mode 00..0777, not \"01000\"");
  EXPECT_FALSE(load({"--socket-mode", "0680"}).is_ok());
  EXPECT_EQ(load_toml("socket_mode = 0o600\n")->socket_mode, 0600u);
  EXPECT_EQ(load_toml("socket_mode = \"0640\"\n")->socket_mode, 0640u);
  EXPECT_EQ(error_of(load_toml("\nsocket_mode = 660\n")),
            "snowidd.toml:2: socket_mode must be octal: write 0o660 or \"0660\", not 660");
}

TEST(Settings, EnumAndBool) {
  EXPECT_EQ(load({"--log-level", "error"})->log_level, LogLevel::kError);
  EXPECT_EQ(error_of(load({"--log-level", "loud"})),
            "--log-level: log_level must be one of debug|info|warn|error, not \"loud\"");
  EXPECT_TRUE(load({"--log-json"})->log_json);
  EXPECT_FALSE(load({"--log-json=false"})->log_json);
  EXPECT_FALSE(load({"--log-json=no"}).is_ok());
  EXPECT_FALSE(load_toml("log_json = false\n")->log_json);
  EXPECT_FALSE(load_toml("log_json = \"false\"\n").is_ok());
}

TEST(Settings, AddressParsing) {
  Result<Address> a = parse_address("10.1.2.3:80");
  ASSERT_TRUE(a.is_ok());
  EXPECT_EQ(a->host, "10.1.2.3");
  EXPECT_EQ(a->port, 80);
  EXPECT_FALSE(a->ipv6);
  EXPECT_FALSE(a->is_loopback());

  a = parse_address("[::1]:7390");
  ASSERT_TRUE(a.is_ok());
  EXPECT_EQ(a->host, "::1");
  EXPECT_TRUE(a->ipv6);
  EXPECT_TRUE(a->is_loopback());
  EXPECT_EQ(a->to_string(), "[::1]:7390");

  EXPECT_EQ(parse_address("localhost:0")->to_string(), "127.0.0.1:0");
  EXPECT_EQ(parse_address("0.0.0.0:65535")->port, 65535);
  for (const char* bad :
       {"127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:http", "::1:80",
        "[::1]", "[::1]80", "[::1:80", "[nothost]:80", "300.1.1.1:80", "example.com:80", ":80"}) {
    EXPECT_FALSE(parse_address(bad).is_ok()) << bad;
  }
  EXPECT_FALSE(load({"--http", "off"})->http.has_value());
  EXPECT_EQ(load({"--tcp", "[::1]:6379"})->tcp->port, 6379);
  const std::string err = error_of(load({"--http", "1.2.3.4"}));
  EXPECT_EQ(err.rfind("--http: http must be host:port", 0), 0u) << err;
}

TEST(Settings, EtcdEndpoints) {
  EXPECT_EQ(load({"--etcd", "http://a:2379,https://b:2379"})->registry.etcd_endpoints,
            (std::vector<std::string>{"http://a:2379", "https://b:2379"}));
  EXPECT_EQ(load_toml("etcd = [\"http://a:1\", \"http://b:2\"]\n")->registry.etcd_endpoints.size(),
            2u);
  EXPECT_FALSE(load({"--etcd", "a:2379"}).is_ok());
  EXPECT_FALSE(load({"--etcd", "http://a:2379,"}).is_ok());
}

// The daemon reads the list with the parser the `snowid` tool and the etcd
// registry use (snowid/etcd_endpoints.h): the same URLs are accepted,
// normalised the same way, and refused in the same words. A URL no etcd
// member could answer at (no port, a path, a bad host) used to pass the
// daemon's prefix check and fail only when the registry connected.
TEST(Settings, EtcdEndpointsAreReadByTheToolsParser) {
  EXPECT_EQ(load({"--etcd", " http://a:1/ ,\thttps://[::1]:2379"})->registry.etcd_endpoints,
            (std::vector<std::string>{"http://a:1", "https://[::1]:2379"}));
  for (const char* bad : {"http://a", "http://a:1/v3", "http://u@a:1", "http://a:0", "http://",
                          "https://", "http://-a:1", "ftp://a:1"}) {
    const std::string message = error_of(load({"--etcd", bad}));
    Result<std::vector<std::string>> tool = parse_etcd_endpoints(bad);
    ASSERT_FALSE(tool.is_ok()) << bad;
    EXPECT_EQ(message, "--etcd: " + tool.status().message()) << bad;
    EXPECT_NE(message.find("bad etcd endpoint \"" + std::string(bad) + "\""), std::string::npos)
        << message;
  }
}

// An empty etcd setting is a deployment mistake (a variable meant to be
// filled), never "use the file registry": every pod would take worker 0/0.
TEST(Settings, AnEmptyOrBlankEtcdIsRefusedWhereverItComesFrom) {
  for (const char* text : {"", " ", "\t", " \n "}) {
    EXPECT_NE(error_of(load({"--etcd", text})).find("etcd is empty"), std::string::npos) << text;
    for (const char* var : {"SNOWID_ETCD", "SNOWID_ETCD_ENDPOINTS"}) {
      host::MapEnvironment env = base_env();
      env.variables[var] = text;
      const std::string message = error_of(load({}, env));
      EXPECT_NE(message.find(var), std::string::npos) << var << ": " << message;
      EXPECT_NE(message.find("is empty"), std::string::npos) << message;
    }
  }
  for (const char* toml : {"etcd = \"\"\n", "etcd = \"  \"\n", "etcd = []\n"}) {
    EXPECT_NE(error_of(load_toml(toml)).find("is empty"), std::string::npos) << toml;
  }
  EXPECT_TRUE(load({"--etcd", "off"})->registry.etcd_endpoints.empty())
      << "off is the explicit file registry";
}

TEST(Settings, RegistryIsAutoFileOrEtcd) {
  EXPECT_EQ(load({})->registry.choice, host::RegistryChoice::kAuto);
  EXPECT_EQ(load({"--registry", "file"})->registry.choice, host::RegistryChoice::kFile);
  EXPECT_EQ(load_toml("registry = \"etcd\"\n")->registry.choice, host::RegistryChoice::kEtcd);
  EXPECT_FALSE(load({"--registry", "zookeeper"}).is_ok());
  host::MapEnvironment env = base_env();
  env.variables["SNOWID_REGISTRY"] = "";
  EXPECT_FALSE(load({}, env).is_ok()) << "an empty registry variable is refused, not ignored";
  env.variables["SNOWID_REGISTRY"] = "file";
  EXPECT_EQ(load({}, env)->registry.choice, host::RegistryChoice::kFile);
}

TEST(Settings, EtcdAlsoReadsTheToolsVariableButItsOwnWins) {
  host::MapEnvironment env = base_env();
  env.variables["SNOWID_ETCD_ENDPOINTS"] = "http://tool:2379";
  EXPECT_EQ(load({}, env)->registry.etcd_endpoints, (std::vector<std::string>{"http://tool:2379"}));
  env.variables["SNOWID_ETCD"] = "http://own:2379";
  EXPECT_EQ(load({}, env)->registry.etcd_endpoints, (std::vector<std::string>{"http://own:2379"}));
  env.variables.erase("SNOWID_ETCD");
  env.variables["SNOWID_ETCD_ENDPOINTS"] = "not-a-url";
  const Result<Settings> bad = load({}, env);
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("SNOWID_ETCD_ENDPOINTS"), std::string::npos)
      << bad.status().message();
}

TEST(Settings, NonLoopbackWithoutTokenWarns) {
  Result<Settings> r = load({"--http", "0.0.0.0:8080"});
  ASSERT_TRUE(r.is_ok());
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_NE(r->warnings[0].find("http_token"), std::string::npos);

  host::MapEnvironment env = base_env();
  env.variables["SNOWID_HTTP_TOKEN"] = "s3cret";
  r = load({"--http", "0.0.0.0:8080"}, env);
  ASSERT_TRUE(r.is_ok());
  EXPECT_TRUE(r->warnings.empty());
  EXPECT_EQ(r->http_token, "s3cret");

  r = load({"--http-token", "s3cret"});  // visible in ps
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r->warnings.size(), 1u);
}

TEST(Settings, UnknownFlagsAndArguments) {
  EXPECT_EQ(error_of(load({"--regoin", "1"})),
            "unknown flag --regoin (snowidd --help-settings lists them)");
  EXPECT_EQ(error_of(load({"region"})), "unexpected argument \"region\"");
  EXPECT_EQ(error_of(load({"--region"})), "--region needs a value");
  EXPECT_EQ(error_of(load({"--config="})), "--config needs a file name");
}

TEST(Settings, HelpSkipsEverythingElse) {
  host::MapEnvironment env = base_env();
  env.variables["SNOWID_REGION"] = "bad";
  EXPECT_EQ(load({"--help"}, env)->action, Action::kHelp);
  EXPECT_EQ(load({"--regoin", "-h"}, env).is_ok(), false);  // flags in order
  EXPECT_EQ(load({"--help-settings"}, env)->action, Action::kHelpSettings);
}

TEST(Settings, TomlErrorsNameFileLineAndSetting) {
  EXPECT_EQ(error_of(load_toml("region = 1\nregoin = 2\n")),
            "snowidd.toml:2: unknown setting \"regoin\" (snowidd --help-settings lists them)");
  EXPECT_EQ(error_of(load_toml("region = \"1\"\n")), "snowidd.toml:1: region must be an integer");
  EXPECT_EQ(error_of(load_toml("[etcd]\nprefix = \"/x\"\n")),
            "snowidd.toml:1: etcd must be a string or an array of strings");
  EXPECT_EQ(error_of(load_toml("max_batch = 0\n")),
            "snowidd.toml:1: max_batch must be 1..100000, not \"0\"");
  const std::string bad = error_of(load_toml("region = = 1\n"));
  EXPECT_EQ(bad.rfind("snowidd.toml:1: not valid TOML: ", 0), 0u) << bad;
  EXPECT_FALSE(load_toml("region = 1\nregion = 2\n").is_ok());  // duplicate key
}

TEST(Settings, TomlDurationsTakeMillisecondsOrText) {
  const Result<Settings> r = load_toml("max_backward = 250\nlease_ttl = \"20s\"\n");
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(r->max_backward, 250ms);
  EXPECT_EQ(r->lease_ttl, 20s);
  EXPECT_FALSE(load_toml("max_backward = -1\n").is_ok());
  EXPECT_FALSE(load_toml("max_backward = 1.5\n").is_ok());
}

TEST(SettingsTable, NamesFlagsAndVariablesAreDerivedAndUnique) {
  std::set<std::string_view> names;
  for (const SettingInfo& info : settings_table()) {
    EXPECT_TRUE(names.insert(info.name).second) << info.name;
    std::string flag = "--", env = "SNOWID_";
    for (char c : info.name) {
      flag += c == '_' ? '-' : c;
      env += static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
    }
    EXPECT_EQ(info.flag, flag);
    EXPECT_EQ(info.env, env);
    EXPECT_FALSE(info.description.empty()) << info.name;
  }
  for (std::string_view n : {"socket",
                             "http",
                             "tcp",
                             "etcd",
                             "registry",
                             "region",
                             "host",
                             "state_dir",
                             "socket_mode",
                             "max_batch",
                             "threads",
                             "log_level",
                             "http_token",
                             "first_request_timeout",
                             "lease_ttl",
                             "lease_renew",
                             "lease_stop",
                             "quarantine",
                             "max_clock_skew",
                             "max_backward",
                             "etcd_prefix",
                             "etcd_cluster",
                             "etcd_ca",
                             "etcd_cert",
                             "etcd_key",
                             "etcd_user",
                             "etcd_password",
                             "layout",
                             "sequences",
                             "sequence_refill",
                             "sequence_wait_timeout",
                             "sequence_step",
                             "sequence_adaptive",
                             "sequence_min_step",
                             "sequence_max_step",
                             "sequence_range_life",
                             "sequence_store_timeout",
                             "max_range",
                             "sequence_threads",
                             "max_sequences"}) {
    EXPECT_EQ(names.count(n), 1u) << n;
  }
}

TEST(SettingsTable, OnlyTheLogMaxBatchAndPublicIdSettingsChangeAtRunTime) {
  std::set<std::string_view> runtime;
  for (const SettingInfo& info : settings_table()) {
    if (info.runtime()) runtime.insert(info.name);
  }
  EXPECT_EQ(runtime, (std::set<std::string_view>{"log_level", "max_batch", "public_id_keys",
                                                 "public_id_unwrap"}));
}

TEST(SettingsTable, EveryDefaultIsAcceptedByItsOwnSetting) {
  for (const SettingInfo& info : settings_table()) {
    if (info.computed_default()) continue;
    std::string arg = std::string(info.flag) + "=" + std::string(info.default_text);
    Result<Settings> r = load({arg.c_str()});
    EXPECT_TRUE(r.is_ok()) << arg << ": " << r.status().message();
  }
}

TEST(SettingsTable, DescribeListsEveryEntry) {
  const std::string text = describe_settings();
  EXPECT_NE(text.find("Precedence, highest first: flags, SNOWID_*"), std::string::npos);
  for (const SettingInfo& info : settings_table()) {
    EXPECT_NE(text.find("\n" + std::string(info.name) + "  " + std::string(info.flag) + "  " +
                        std::string(info.env) + "\n"),
              std::string::npos)
        << info.name;
  }
  EXPECT_NE(text.find("integer 1..100000; default: 10000; runtime"), std::string::npos);
  EXPECT_NE(text.find("mode 00..0777; default: 0660; fixed"), std::string::npos);
  EXPECT_NE(text.find("duration 2s..1h; default: 10s; fixed"), std::string::npos);
}

// Values to try for a setting, of which at least one parses and differs from
// the default: the bounds, the choices, a second form.
std::vector<std::string> other_values(const SettingInfo& info) {
  switch (info.type) {
    case SettingType::kString:
      return {"other", "sqlite:/other.db"};
    case SettingType::kInteger:
      return {std::to_string(info.max), std::to_string(info.min)};
    case SettingType::kDuration:
      return {std::to_string(info.max), std::to_string(info.min)};
    case SettingType::kMode: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "0%llo", static_cast<unsigned long long>(info.max));
      return {buf};
    }
    case SettingType::kEnum:
      return {info.choices.begin(), info.choices.end()};
    case SettingType::kBool:
      return {"true", "false"};
    case SettingType::kAddress:
      return {"127.0.0.1:1", "off"};
    case SettingType::kEndpoints:
      return {"http://other:1", "off"};
    case SettingType::kAddresses:
      return {"127.0.0.1:1,[::1]:2", "off"};
  }
  return {};
}

TEST(SettingsList, EveryRowIsCompleteAndConsistent) {
  std::set<std::string_view> names, flags, envs;
  for (const SettingInfo& info : settings_table()) {
    SCOPED_TRACE(std::string(info.name));
    EXPECT_FALSE(info.name.empty());
    EXPECT_TRUE(names.insert(info.name).second);
    EXPECT_TRUE(flags.insert(info.flag).second);
    EXPECT_TRUE(envs.insert(info.env).second);
    EXPECT_FALSE(info.default_text.empty() && info.type != SettingType::kString);
    EXPECT_FALSE(info.description.empty());
    EXPECT_NE(info.field.store, nullptr);
    EXPECT_NE(info.field.same, nullptr);
    EXPECT_NE(info.field.copy, nullptr);
    EXPECT_EQ(!info.choices.empty(), info.type == SettingType::kEnum);
    if (!info.unset_word.empty()) {
      EXPECT_EQ(info.type, SettingType::kInteger);
    }
    if (info.check != nullptr) {
      EXPECT_EQ(info.type, SettingType::kString);
    }
    const bool bounded = info.type == SettingType::kInteger ||
                         info.type == SettingType::kDuration || info.type == SettingType::kMode;
    if (bounded) {
      EXPECT_LT(info.min, info.max);
    } else {
      EXPECT_EQ(info.min, 0);
      EXPECT_EQ(info.max, 0);
    }
    // A fixed default passes its own type, bounds and check; a computed one
    // is a description of its rule.
    if (!info.computed_default()) {
      Result<SettingValue> v = parse_value(info, info.default_text);
      EXPECT_TRUE(v.is_ok()) << v.status().message();
    }
  }
}

// Each row is wired to its own field: storing another value in it changes
// that setting alone, reload applies it if it is a runtime setting, and the
// check for changed fixed settings names it otherwise.
TEST(SettingsList, EachRowOwnsItsFieldForReloadAndTheFixedCheck) {
  const Result<Settings> loaded = load({});
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().message();
  const Settings& base = loaded.value();
  for (const SettingInfo& info : settings_table()) {
    SCOPED_TRACE(std::string(info.name));
    Settings other = base;
    for (const std::string& text : other_values(info)) {
      Result<SettingValue> v = parse_value(info, text);
      if (!v.is_ok()) continue;
      info.field.store(other, std::move(v).value());
      if (!info.field.same(base, other)) break;
    }
    ASSERT_FALSE(info.field.same(base, other)) << "no other value found";
    for (const SettingInfo& rest : settings_table()) {
      if (&rest != &info) {
        EXPECT_TRUE(rest.field.same(base, other)) << rest.name;
      }
    }
    std::vector<std::string_view> applied;
    const RuntimeTargets targets{
        .set_log_level = [&](LogLevel) { applied.push_back("log_level"); },
        .set_max_batch = [&](std::uint32_t) { applied.push_back("max_batch"); },
        .set_public_id_keys = [&](const std::string&) { applied.push_back("public_id_keys"); },
        .set_public_id_unwrap = [&](const std::string&) { applied.push_back("public_id_unwrap"); },
    };
    Settings running = base;
    if (info.runtime()) {
      EXPECT_EQ(fixed_differences(base, other), "");
      EXPECT_EQ(apply_runtime(running, other, targets), info.name);
      EXPECT_EQ(applied, std::vector<std::string_view>{info.name});
      EXPECT_TRUE(info.field.same(running, other));
    } else {
      EXPECT_EQ(fixed_differences(base, other), info.name);
      EXPECT_EQ(apply_runtime(running, other, targets), "");
      EXPECT_TRUE(applied.empty());
      EXPECT_TRUE(info.field.same(running, base));
    }
  }
}

TEST(SettingsList, ReloadAppliesEveryChangedRuntimeSettingOnce) {
  const Result<Settings> first = load({});
  const Result<Settings> fresh = load({"--log-level=debug", "--max-batch=5", "--threads=3"});
  ASSERT_TRUE(first.is_ok() && fresh.is_ok());
  Settings running = first.value();
  std::vector<LogLevel> levels;
  std::vector<std::uint32_t> batches;
  const RuntimeTargets targets{
      .set_log_level = [&](LogLevel l) { levels.push_back(l); },
      .set_max_batch = [&](std::uint32_t n) { batches.push_back(n); },
      .set_public_id_keys = {},
      .set_public_id_unwrap = {},
  };
  EXPECT_EQ(apply_runtime(running, fresh.value(), targets), "log_level,max_batch");
  EXPECT_EQ(levels, std::vector<LogLevel>{LogLevel::kDebug});
  EXPECT_EQ(batches, std::vector<std::uint32_t>{5});
  EXPECT_EQ(running.max_batch, 5u);
  EXPECT_EQ(running.threads, 2u);  // fixed: kept, and reported
  EXPECT_EQ(fixed_differences(running, fresh.value()), "threads");
  EXPECT_EQ(apply_runtime(running, fresh.value(), targets), "");
  EXPECT_EQ(levels.size(), 1u);
}

TEST(Settings, PublicIdsAreOffAndUnwrapLocalByDefault) {
  const Result<Settings> s = load({});
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  EXPECT_EQ(s->public_id_keys, "");
  EXPECT_EQ(s->public_id_unwrap, "local");
}

TEST(Settings, PublicIdUnwrapTakesOnlyLocalTokenOrAny) {
  for (const char* word : {"local", "token", "any"}) {
    const std::string flag = std::string("--public-id-unwrap=") + word;
    const Result<Settings> s = load({flag.c_str()});
    ASSERT_TRUE(s.is_ok()) << s.status().message();
    EXPECT_EQ(s->public_id_unwrap, word);
  }
  const Result<Settings> bad = load({"--public-id-unwrap=everyone"});
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("public_id_unwrap"), std::string::npos)
      << bad.status().message();
}

TEST(Settings, FormatDuration) {
  EXPECT_EQ(format_duration(0ms), "0ms");
  EXPECT_EQ(format_duration(1500ms), "1500ms");
  EXPECT_EQ(format_duration(3s), "3s");
  EXPECT_EQ(format_duration(2min), "2m");
  EXPECT_EQ(format_duration(1h), "1h");
}

}  // namespace
}  // namespace snowid::daemon
