#include "http_client.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <utility>

namespace snowid::daemon_test {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string trim(const std::string& s) {
  const std::size_t a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  const std::size_t b = s.find_last_not_of(" \t");
  return s.substr(a, b - a + 1);
}

}  // namespace

std::string HttpReply::header(const std::string& name) const {
  const auto it = headers.find(lower(name));
  return it == headers.end() ? "" : it->second;
}

std::optional<HttpConn> HttpConn::connect(int port) {
  Fd fd = connect_tcp_loopback(port);
  if (!fd) return std::nullopt;
  return HttpConn(std::move(fd));
}

bool HttpConn::send_raw(const std::string& bytes) { return send_all(fd_.get(), bytes); }

bool HttpConn::fill(std::chrono::steady_clock::time_point until) {
  if (eof_) return false;
  return receive_some(fd_.get(), buf_, until, eof_);
}

std::optional<HttpReply> HttpConn::read_reply(bool head, std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  std::size_t end;
  while ((end = buf_.find("\r\n\r\n")) == std::string::npos) {
    if (!fill(until)) return std::nullopt;
  }
  HttpReply reply;
  const std::string head_block = buf_.substr(0, end);
  buf_.erase(0, end + 4);
  std::size_t line_end = head_block.find("\r\n");
  const std::string status_line = head_block.substr(0, line_end);
  if (!status_line.starts_with("HTTP/1.1 ") && !status_line.starts_with("HTTP/1.0 ")) {
    torn_ = true;
    return std::nullopt;
  }
  reply.status = std::atoi(status_line.c_str() + 9);
  while (line_end != std::string::npos) {
    const std::size_t start = line_end + 2;
    line_end = head_block.find("\r\n", start);
    const std::string line = head_block.substr(
        start, line_end == std::string::npos ? std::string::npos : line_end - start);
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    reply.headers[lower(line.substr(0, colon))] = trim(line.substr(colon + 1));
  }
  if (head || reply.status == 204 || reply.status == 304) return reply;
  if (lower(reply.header("transfer-encoding")) == "chunked") {
    for (;;) {
      std::size_t size_end;
      while ((size_end = buf_.find("\r\n")) == std::string::npos) {
        if (!fill(until)) {
          torn_ = true;
          return std::nullopt;
        }
      }
      const std::size_t size = std::strtoul(buf_.c_str(), nullptr, 16);
      while (buf_.size() < size_end + 2 + size + 2) {
        if (!fill(until)) {
          torn_ = true;
          return std::nullopt;
        }
      }
      reply.body += buf_.substr(size_end + 2, size);
      buf_.erase(0, size_end + 2 + size + 2);
      if (size == 0) break;  // no trailers are expected
    }
    return reply;
  }
  const std::string length = reply.header("content-length");
  if (length.empty()) {
    // Body until close.
    while (fill(until)) {
    }
    reply.body = std::move(buf_);
    buf_.clear();
    return reply;
  }
  const std::size_t n = std::strtoul(length.c_str(), nullptr, 10);
  while (buf_.size() < n) {
    if (!fill(until)) {
      torn_ = true;
      return std::nullopt;
    }
  }
  reply.body = buf_.substr(0, n);
  buf_.erase(0, n);
  return reply;
}

std::optional<HttpReply> HttpConn::request(
    const std::string& method, const std::string& target,
    const std::vector<std::pair<std::string, std::string>>& headers) {
  std::string req = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  for (const auto& [k, v] : headers) req += k + ": " + v + "\r\n";
  req += "\r\n";
  if (!send_raw(req)) return std::nullopt;
  return read_reply(method == "HEAD");
}

std::optional<HttpReply> http_get(int port, const std::string& target,
                                  const std::vector<std::pair<std::string, std::string>>& headers) {
  std::optional<HttpConn> c = HttpConn::connect(port);
  if (!c) return std::nullopt;
  return c->get(target, headers);
}

}  // namespace snowid::daemon_test
