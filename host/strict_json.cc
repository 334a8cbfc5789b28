#include "strict_json.h"

#include <exception>
#include <new>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "message_text.h"

namespace snowid::host {
namespace {

using Json = nlohmann::json;

// The SAX handler: builds the document, and stops at the first problem.
class StrictBuilder {
 public:
  explicit StrictBuilder(std::size_t max_depth) : max_depth_(max_depth) {}

  Json& root() { return root_; }
  const std::string& problem() const { return problem_; }

  bool null() { return put(Json(nullptr)); }
  bool boolean(bool v) { return put(Json(v)); }
  bool number_integer(Json::number_integer_t v) { return put(Json(v)); }
  bool number_unsigned(Json::number_unsigned_t v) { return put(Json(v)); }
  bool number_float(Json::number_float_t v, const std::string&) { return put(Json(v)); }
  bool string(std::string& v) { return put(Json(std::move(v))); }
  bool binary(Json::binary_t&) { return fail("binary values are not JSON"); }

  bool start_object(std::size_t) {
    if (!open(Json::object())) return false;
    keys_.emplace_back();
    return true;
  }
  bool key(std::string& k) {
    if (!keys_.back().insert(k).second) return fail("key " + quote_input(k) + " appears twice");
    key_ = std::move(k);
    return true;
  }
  bool end_object() {
    keys_.pop_back();
    stack_.pop_back();
    return true;
  }
  bool start_array(std::size_t) { return open(Json::array()); }
  bool end_array() {
    stack_.pop_back();
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const Json::exception& e) {
    // Drop the library's "[json.exception.parse_error.101] " tag.
    std::string_view what = e.what();
    if (const auto close = what.find("] "); close != std::string_view::npos) {
      what.remove_prefix(close + 2);
    }
    return fail("not valid JSON: " + printable(what, 160));
  }

 private:
  bool fail(std::string why) {
    if (problem_.empty()) problem_ = std::move(why);
    return false;
  }

  // Places `v` where the next value goes and returns it.
  Json* place(Json v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Json& parent = *stack_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(v));
      return &parent.back();
    }
    Json& slot = parent[key_];
    slot = std::move(v);
    return &slot;
  }

  bool put(Json v) {
    place(std::move(v));
    return true;
  }

  // Pointers on the stack stay valid: a container only grows while it is on
  // top of the stack, and then none of its elements is on the stack (object
  // members are map nodes, which never move).
  bool open(Json container) {
    if (stack_.size() >= max_depth_) {
      return fail("nested deeper than " + std::to_string(max_depth_) + " levels");
    }
    stack_.push_back(place(std::move(container)));
    return true;
  }

  std::size_t max_depth_;
  Json root_;
  std::vector<Json*> stack_;
  std::vector<std::set<std::string>> keys_;
  std::string key_;
  std::string problem_;
};

}  // namespace

Result<nlohmann::json> parse_strict_json(std::string_view text, std::size_t max_depth) {
  try {
    StrictBuilder builder(max_depth);
    const bool parsed = Json::sax_parse(text, &builder, Json::input_format_t::json,
                                        /*strict=*/true, /*ignore_comments=*/false);
    if (!parsed) {
      return Status(Code::kInvalidArgument,
                    builder.problem().empty() ? "not valid JSON" : builder.problem());
    }
    return std::move(builder.root());
  } catch (const std::bad_alloc&) {
    return Status(Code::kUnavailable, "out of memory while reading JSON");
  } catch (const std::exception& e) {
    return Status(Code::kInvalidArgument, "unreadable JSON: " + printable(e.what(), 160));
  }
}

}  // namespace snowid::host
