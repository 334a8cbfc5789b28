#include "testing/postgres_server.h"

#include <libpq-fe.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>

#include "child_process.h"
#include "temp_dir.h"

namespace snowid::sequences::testing {

// The cluster's directory: a temporary one of the server's own, removed with
// it, or one that somebody else started and will stop.
struct PostgresServer::Dir {
  std::optional<test_support::TempDir> temp;
  std::string path;
};

namespace {

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

std::string pg_scratch_script() {
  const char* env = std::getenv("SNOWID_PG_SCRATCH");
  return env != nullptr && *env != '\0' ? env : SNOWID_PG_SCRATCH;
}

Result<std::unique_ptr<PostgresServer>> PostgresServer::launch() {
  std::unique_ptr<PostgresServer> server(new PostgresServer());
  server->script_ = pg_scratch_script();
  server->dir_ = std::make_unique<Dir>();
  server->dir_->temp.emplace("snowid-pg");
  server->dir_->path = server->dir_->temp->path();
  if (server->dir().empty()) {
    return Status(Code::kUnavailable, "cannot make a temporary directory for PostgreSQL");
  }
  server->owned_ = true;
  std::string out;
  if (Status s = server->script("start", &out); !s.is_ok()) return s;
  server->conninfo_ = trimmed(out);
  if (server->conninfo_.rfind("postgresql://", 0) != 0) {
    return Status(Code::kUnavailable, "pg-scratch printed no conninfo: \"" + out + "\"");
  }
  return server;
}

Result<std::unique_ptr<PostgresServer>> PostgresServer::attach(const std::string& dir) {
  std::unique_ptr<PostgresServer> server(new PostgresServer());
  server->script_ = pg_scratch_script();
  server->dir_ = std::make_unique<Dir>();
  server->dir_->path = dir;
  std::string out;
  if (Status s = server->script("status", &out); !s.is_ok()) return s;
  server->conninfo_ = trimmed(out);
  return server;
}

PostgresServer::~PostgresServer() {
  if (owned_) (void)script("stop", nullptr);
}

const std::string& PostgresServer::dir() const noexcept { return dir_->path; }

Status PostgresServer::script(const char* command, std::string* out) {
  test_support::SpawnRequest request;
  request.argv = {script_, command, dir()};
  const test_support::ProcessResult r =
      test_support::run_to_completion(request, std::chrono::seconds(120));
  if (r.exit_code != 0) {
    return Status(Code::kUnavailable, "pg-scratch " + std::string(command) + " failed (exit " +
                                          std::to_string(r.exit_code) + "): " + trimmed(r.err));
  }
  if (out != nullptr) *out = r.out;
  return Status::ok();
}

Status PostgresServer::stop() { return script("stop", nullptr); }

Status PostgresServer::start() {
  std::string out;
  if (Status s = script("start", &out); !s.is_ok()) return s;
  if (trimmed(out) != conninfo_) {
    return Status(Code::kUnavailable,
                  "the server came back as " + trimmed(out) + ", not " + conninfo_);
  }
  return Status::ok();
}

Status PostgresServer::restart() {
  if (Status s = stop(); !s.is_ok()) return s;
  return start();
}

Result<std::string> PostgresServer::fresh_schema() {
  // The process id keeps the names of processes sharing one server apart.
  const std::string name = "test_" + std::to_string(::getpid()) + "_" + std::to_string(++schemas_);
  PGconn* conn = PQconnectdb(conninfo_.c_str());
  Status status;
  if (PQstatus(conn) != CONNECTION_OK) {
    status = Status(Code::kUnavailable, "connect: " + trimmed(PQerrorMessage(conn)));
  } else {
    // The name is ours ([a-z0-9_]), so it can go into the SQL text as it is.
    PGresult* res = PQexec(conn, ("CREATE SCHEMA " + name).c_str());
    if (PQresultStatus(res) != PGRES_COMMAND_OK) {
      status = Status(Code::kUnavailable, "CREATE SCHEMA: " + trimmed(PQresultErrorMessage(res)));
    }
    PQclear(res);
  }
  PQfinish(conn);
  if (!status.is_ok()) return status;
  return conninfo_ + "?options=-csearch_path%3D" + name;
}

std::string PostgresServer::log_tail() const {
  std::ifstream in(dir() + "/server.log", std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string all = ss.str();
  constexpr std::size_t kMax = 3000;
  return all.size() > kMax ? all.substr(all.size() - kMax) : all;
}

Result<PostgresServer*> shared_postgres_server() {
  static std::mutex mu;
  static std::unique_ptr<PostgresServer> server;
  static Status failure;
  std::lock_guard<std::mutex> lock(mu);
  if (server == nullptr && failure.is_ok()) {
    Result<std::unique_ptr<PostgresServer>> got = Status(Code::kUnavailable, "");
    const char* state = std::getenv("SNOWID_PG_SHARED_STATE");
    if (state != nullptr && *state != '\0') {
      std::ifstream in(state);
      std::string dir;
      std::getline(in, dir);
      got = dir.empty() ? Result<std::unique_ptr<PostgresServer>>(Status(
                              Code::kUnavailable, std::string("no server directory in ") + state))
                        : PostgresServer::attach(dir);
    } else {
      got = PostgresServer::launch();
    }
    if (got.is_ok()) {
      server = std::move(got.value());
    } else {
      failure = got.status();
    }
  }
  if (server == nullptr) return failure;
  return server.get();
}

}  // namespace snowid::sequences::testing
