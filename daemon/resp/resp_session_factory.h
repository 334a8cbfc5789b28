// How the network layer gets a RESP session for each connection it accepts
// without knowing the services behind the commands: the server (net/) holds
// a RespSessionFactory and fills in what it knows of the connection; the
// factory adds the services. The HTTP side's counterpart is
// HttpRequestHandler (http_request_handler.h).
#pragma once

#include <memory>

#include "resp_session.h"

namespace snowid::daemon {

class IdService;
class PublicIdPort;
class SequenceService;

// Thread-safe: make() is called on any loop thread, concurrently.
class RespSessionFactory {
 public:
  virtual ~RespSessionFactory() = default;

  // True if a session may hand work to the caller to run where waiting is
  // allowed (the named sequences are on): the server starts its work pool
  // only then, and sets RespSessionOptions::defer while the pool runs.
  virtual bool may_defer() const = 0;
  // A session for one connection. `connection` carries what the server
  // knows of it (token, limits, client id, transport, peer, defer); the
  // services' fields are the factory's to set and are overwritten.
  virtual RespSession make(RespSessionOptions connection) const = 0;
};

// The daemon's sessions, over `ids`, `sequences` (null: off) and `public_ids`
// (null: built without), which must outlive every session made.
std::unique_ptr<RespSessionFactory> make_resp_sessions(IdService& ids,
                                                       SequenceService* sequences = nullptr,
                                                       const PublicIdPort* public_ids = nullptr);

}  // namespace snowid::daemon
