// A small HTTP/1.1 client for black-box tests: one keep-alive connection to
// 127.0.0.1, requests written by hand, responses read with Content-Length or
// chunked bodies.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "socket_io.h"

namespace snowid::daemon_test {

struct HttpReply {
  int status = 0;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
  std::string header(const std::string& name) const;
};

class HttpConn {
 public:
  static std::optional<HttpConn> connect(int port);
  HttpConn(HttpConn&&) noexcept = default;
  HttpConn& operator=(HttpConn&&) noexcept = default;

  // Sends one request and reads its response; nullopt if the connection
  // failed or closed first (closed() then says so).
  std::optional<HttpReply> request(
      const std::string& method, const std::string& target,
      const std::vector<std::pair<std::string, std::string>>& headers = {});
  std::optional<HttpReply> get(
      const std::string& target,
      const std::vector<std::pair<std::string, std::string>>& headers = {}) {
    return request("GET", target, headers);
  }
  bool send_raw(const std::string& bytes);
  std::optional<HttpReply> read_reply(bool head = false,
                                      std::chrono::milliseconds timeout = std::chrono::seconds(20));
  bool closed() const noexcept { return eof_; }
  // True if bytes were received that do not make a whole response.
  bool torn() const noexcept { return torn_ || !buf_.empty(); }

 private:
  explicit HttpConn(Fd fd) : fd_(std::move(fd)) {}
  bool fill(std::chrono::steady_clock::time_point until);

  Fd fd_;
  std::string buf_;
  bool eof_ = false;
  bool torn_ = false;
};

// One request on a connection of its own.
std::optional<HttpReply> http_get(
    int port, const std::string& target,
    const std::vector<std::pair<std::string, std::string>>& headers = {});

}  // namespace snowid::daemon_test
