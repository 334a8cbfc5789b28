// One RESP connection's conversation, independent of the transport: bytes
// read from the client in, reply bytes out. The server owns one per
// connection (Unix socket or TCP) and feeds it whatever it reads.
//
// Commands (case-insensitive names; replies in the connection's RESP version):
//   PING [message]          +PONG, or the message as a bulk string
//   ECHO message            the message
//   HELLO [2|3] [AUTH user pass] [SETNAME name]
//                           switches the version; replies with the server map
//                           (server, version, proto, id, mode, role, modules)
//   AUTH [user] token       with a token configured (TCP only, see below)
//   NEXTID                  the id, a bulk string of decimal digits
//   NEXTIDS n               array of n ids, increasing (1 <= n <= max_batch)
//   DECODE id               map (RESP3) or flat array (RESP2): id, time (ISO
//                           8601), unix_ms, ticks, then each layout field
//   IDFORMAT [STRING|INTEGER]
//                           how this connection receives ids and sequence
//                           numbers: bulk strings of decimal digits (the
//                           default, exact in every client, JavaScript's
//                           included) or RESP integers; +OK. Without an
//                           argument: +STRING or +INTEGER. A decoded field
//                           of at most 53 bits, unix_ms and the counters are
//                           integers either way (see resp_writer.h)
//   INFO [section]          bulk string "# Section\r\nkey:value\r\n..." as
//                           Redis does: server (with server_time_usec, the
//                           wall clock), layout, worker, lease, health, stats,
//                           sequences (the ticket table's kind and redacted
//                           URL, the buffers, the counters), clock (the
//                           host's bound, chrony's, each SNTP server's)
//   QUIT                    +OK, then the connection closes
//   NEXTSEQ name [count]    the next number of the named sequence, written
//                           as an id is; with
//                           a count, an array of count increasing numbers
//                           (1 <= count <= max_batch)
//   SEQRANGE name size      a range of size numbers taken from the ticket
//                           table for a client that hands them out itself:
//                           the array [start, end], end exclusive (the
//                           numbers start..end-1), 1 <= size <= max_range
//   SEQCREATE name start [step]
//                           creates the sequence (step default 1000): +OK
//   SEQINFO name            map (RESP3) or flat array (RESP2): name,
//                           next_value, step, created, updated (ISO 8601),
//                           and while this daemon buffers it: buffered,
//                           ranges_fetched, numbers_issued, step_in_use
//   SEQLIST                 array of every sequence's name
//   TIME                    as Redis: [seconds, microseconds], two bulk
//                           strings, from the generator's clock
//   SNOWID.CLOCK            map (RESP3) or flat array (RESP2): receive_ns,
//                           send_ns (written as ids are), bound_source,
//                           bound_ns, earliest_ns, latest_ns (null while the
//                           bound is unknown)
//   CLIENT SETNAME/GETNAME/ID/INFO, SELECT 0, CONFIG GET pattern (empty
//   answers), COMMAND [COUNT|DOCS] (empty): what stock clients, redis-cli and
//   redis-benchmark send when they connect, answered so that they work.
//
// NEXTID, NEXTIDS, DECODE, the sequence commands, TIME and SNOWID.CLOCK are
// rows of the command table (commands.h), served on HTTP too but for TIME; resp_commands.h reads
// their argv and writes their answers. The others are RESP's own and written here.
//
// Errors are RESP errors whose first word a client can act on: ERR for an
// unknown command, a wrong number of arguments or a malformed number (as
// Redis words them), NOAUTH before AUTH when a token is required, WRONGPASS
// for a bad token, and error_word() (refusals.h) for a refusal of the
// generator (CLOCK_MOVED_BACK, LEASE_UNCERTAIN, ...) or of a sequence
// (NOT_FOUND, ALREADY_EXISTS, UNAVAILABLE, OUT_OF_RANGE for a spent one,
// INVALID_ARGUMENT for a bad name, SEQUENCES_OFF when they are off)
// followed by a message; retryable refusals say "retry after <n>ms". An
// unknown sequence is never created: "-NOT_FOUND sequence 'x' does not exist
// (create it with SEQCREATE)". The connection survives all of these. A
// malformed frame (RespParser kError) gets one "-ERR Protocol error: ..." and
// closes the connection.
//
// Pipelining: complete commands are answered in order until one call has
// written `output_budget` bytes; the rest stay buffered (pending()) and are
// answered by the next on_bytes() call, which the server makes with no new
// bytes once the output has been sent. This bounds the memory and the time
// one read can cost: 16 KiB of "NEXTIDS 10000" would otherwise ask for 200 MB
// of replies.
//
// Waiting on the ticket table: the thread that feeds a session must not wait
// on the database (it serves other connections). With `defer` set, a
// sequence command that cannot be answered from memory (a NEXTSEQ whose
// buffer is dry or not open yet; SEQRANGE, SEQCREATE, SEQINFO and SEQLIST
// always) is not run: on_bytes() records the work that computes its reply,
// stops answering (the later commands stay pending, so replies keep their
// order) and returns. The caller takes the work (take_deferred()), runs it
// where waiting is allowed, hands the reply back (complete_deferred()) and
// calls on_bytes({}, out) to answer what follows. Without `defer` the work
// runs inline.
//
// Not thread-safe: one session per connection, used by one thread at a time.
// The deferred work is independent of the session and may run on any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "commands.h"
#include "id_service.h"
#include "resp_commands.h"
#include "resp_parser.h"
#include "resp_writer.h"
#include "sequence_service.h"

namespace snowid::daemon {

struct RespSessionOptions {
  // Non-empty: clients must AUTH (or HELLO ... AUTH) with this token before
  // any command but HELLO, AUTH and QUIT (as Redis). The daemon sets it on TCP
  // listeners when http_token is set; the Unix socket relies on its file
  // permissions.
  std::string token;
  RespLimits limits;
  // The connection's id for CLIENT ID and HELLO.
  std::uint64_t client_id = 0;
  // on_bytes() stops answering once it has appended this many bytes.
  std::size_t output_budget = 256 * 1024;
  // The named sequences; null: they are off. Must outlive the session.
  SequenceService* sequences = nullptr;
  // Hand work that waits on the ticket table to the caller (see above)
  // instead of running it inline.
  bool defer = false;
  // Public ids; null: built without them. Must outlive the session.
  const PublicIdPort* public_ids = nullptr;
  // Who the client is, for UNWRAP (public_id_unwrap): the Unix socket, or a
  // TCP peer on a loopback address.
  bool unix_socket = false;
  bool loopback_peer = false;
};

class RespSession {
 public:
  // `ids` must outlive the session.
  RespSession(IdService& ids, RespSessionOptions options);

  // Consumes `in` and appends the replies of complete commands to `out`,
  // up to the output budget. Returns false when the connection must close
  // once `out` has been sent (QUIT, or a protocol error); later input is then
  // ignored.
  bool on_bytes(std::string_view in, std::string& out);
  // After on_bytes() returned true: commands may remain unanswered because
  // the budget was reached or one was deferred. Send `out` (and complete the
  // deferred command), then call on_bytes({}, out) before reading again.
  bool pending() const noexcept { return pending_; }

  // The work of the command on_bytes() deferred, or an empty function. Once
  // taken, on_bytes() answers nothing (it keeps what it is fed) until
  // complete_deferred().
  DeferredReply take_deferred();
  // Appends the deferred command's reply (what its work returned) to `out`.
  void complete_deferred(std::string_view reply, std::string& out);
  // True between take_deferred() and complete_deferred().
  bool awaiting() const noexcept { return awaiting_; }

  // Commands answered (for metrics), and whether the last close was a
  // protocol error.
  std::uint64_t commands() const noexcept { return commands_; }
  bool protocol_error() const noexcept { return parser_.failed(); }
  RespVersion version() const noexcept { return version_; }

 private:
  void dispatch(const RespCommand& command, std::string& out);
  // The commands of RESP only, each after the checks dispatch() makes.
  void ping_command(const RespCommand& command, RespWriter& w);
  void hello_command(const RespCommand& command, RespWriter& w);
  void auth_command(const RespCommand& command, RespWriter& w);
  void idformat_command(const RespCommand& command, RespWriter& w);
  void echo_command(const RespCommand& command, RespWriter& w);
  void info_command(const RespCommand& command, RespWriter& w);
  void client_command(const RespCommand& command, RespWriter& w);
  void select_command(const RespCommand& command, RespWriter& w);
  void config_command(const RespCommand& command, RespWriter& w);
  void command_command(const RespCommand& command, RespWriter& w);
  // Defers `work` (options.defer) or appends its reply now.
  void defer(DeferredReply work, RespWriter& w);

  IdService& ids_;
  RespSessionOptions options_;
  Commands table_;
  RespParser parser_;
  RespCommand command_;
  RespVersion version_ = RespVersion::kResp2;
  WideFormat wide_ = WideFormat::kString;
  bool authenticated_ = false;
  bool closing_ = false;
  bool pending_ = false;
  DeferredReply deferred_;
  bool awaiting_ = false;
  std::string name_;
  std::uint64_t commands_ = 0;
};

}  // namespace snowid::daemon
