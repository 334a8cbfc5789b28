#include "resp_session_factory.h"

#include <utility>

namespace snowid::daemon {
namespace {

class ServiceSessions final : public RespSessionFactory {
 public:
  ServiceSessions(IdService& ids, SequenceService* sequences, const PublicIdPort* public_ids)
      : ids_(ids), sequences_(sequences), public_ids_(public_ids) {}

  bool may_defer() const override { return sequences_ != nullptr && sequences_->enabled(); }

  RespSession make(RespSessionOptions connection) const override {
    connection.sequences = sequences_;
    connection.public_ids = public_ids_;
    return RespSession(ids_, std::move(connection));
  }

 private:
  IdService& ids_;
  SequenceService* const sequences_;
  const PublicIdPort* const public_ids_;
};

}  // namespace

std::unique_ptr<RespSessionFactory> make_resp_sessions(IdService& ids, SequenceService* sequences,
                                                       const PublicIdPort* public_ids) {
  return std::make_unique<ServiceSessions>(ids, sequences, public_ids);
}

}  // namespace snowid::daemon
