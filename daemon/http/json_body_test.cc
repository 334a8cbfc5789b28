// parse_integer_fields(): the strict reader of flat JSON bodies of integers.
#include "json_body.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace snowid::daemon {
namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

Fields fields_of(std::string_view body) {
  Result<Fields> r = parse_integer_fields(body, {"start", "step"});
  EXPECT_TRUE(r.is_ok()) << body << ": " << r.status().message();
  return r.is_ok() ? r.value() : Fields{};
}

std::string error_of(std::string_view body) {
  Result<Fields> r = parse_integer_fields(body, {"start", "step"});
  EXPECT_FALSE(r.is_ok()) << body;
  if (r.is_ok()) return "";
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  return r.status().message();
}

TEST(JsonBody, IntegersAndStringsComeBackAsTheirTextInBodyOrder) {
  EXPECT_EQ(fields_of(R"({"step":100,"start":1000})"),
            (Fields{{"step", "100"}, {"start", "1000"}}));
  EXPECT_EQ(fields_of(R"({"start":"9223372036854775806"})"),
            (Fields{{"start", "9223372036854775806"}}));
  EXPECT_EQ(fields_of(R"({"start":18446744073709551615})"),
            (Fields{{"start", "18446744073709551615"}}));
  EXPECT_EQ(fields_of(R"({"start":-7})"), (Fields{{"start", "-7"}}));
  // Too long for 64 bits: as written, for the caller's bounds to refuse.
  EXPECT_EQ(fields_of(R"({"start":123456789012345678901234567890})"),
            (Fields{{"start", "123456789012345678901234567890"}}));
  EXPECT_EQ(fields_of(" \n{ }\t"), Fields{});
  // Escapes are decoded like any JSON string.
  EXPECT_EQ(fields_of(R"({"st\u0061rt":"\u0031"})"), (Fields{{"start", "1"}}));
}

TEST(JsonBody, MalformedJsonIsRefusedSayingWhere) {
  for (const char* body : {"", " ", "{", "{\"start\":}", "{\"start\":1,}", "{'start':1}",
                           "{\"start\":1}x", "{\"start\":1}{}", "{\"start\":01}",
                           "{\"start\":1} // c", "{\"start\":\"\xc3\x28\"}", "nul"}) {
    SCOPED_TRACE(body);
    EXPECT_NE(error_of(body).find("not valid JSON"), std::string::npos) << error_of(body);
  }
  EXPECT_NE(error_of("{\"start\":1,}").find("line 1, column"), std::string::npos)
      << error_of("{\"start\":1,}");
}

TEST(JsonBody, OnlyAnObjectOfTheNamedFieldsEachOnceIsTaken) {
  EXPECT_EQ(error_of("[]"), "the request body must be a JSON object, not an array");
  EXPECT_EQ(error_of("5"), "the request body must be a JSON object");
  EXPECT_EQ(error_of("\"5\""), "the request body must be a JSON object");
  EXPECT_EQ(error_of("null"), "the request body must be a JSON object");
  EXPECT_EQ(error_of(R"({"start":1,"Start":2})"), "unknown field \"Start\" in the request body");
  EXPECT_EQ(error_of(R"({"start":1,"start":1})"), "field \"start\" given more than once");
}

TEST(JsonBody, ValuesMustBeIntegersOrStrings) {
  EXPECT_EQ(error_of(R"({"start":1.5})"),
            "field \"start\" must be an integer (no fraction or exponent), not \"1.5\"");
  EXPECT_EQ(error_of(R"({"step":1E2})"),
            "field \"step\" must be an integer (no fraction or exponent), not \"1E2\"");
  EXPECT_EQ(error_of(R"({"step":-0.0})"),
            "field \"step\" must be an integer (no fraction or exponent), not \"-0.0\"");
  EXPECT_EQ(error_of(R"({"step":true})"),
            "field \"step\" must be an integer or a decimal string, not a boolean");
  EXPECT_EQ(error_of(R"({"step":null})"),
            "field \"step\" must be an integer or a decimal string, not null");
  EXPECT_EQ(error_of(R"({"step":[]})"),
            "field \"step\" must be an integer or a decimal string, not an array");
  EXPECT_EQ(error_of(R"({"step":{}})"),
            "field \"step\" must be an integer or a decimal string, not an object");
}

TEST(JsonBody, DeepNestingStopsAtTheFirstContainerInsideTheObject) {
  const std::string deep = "{\"start\":" + std::string(10000, '[') + std::string(10000, ']') + "}";
  EXPECT_EQ(error_of(deep), "field \"start\" must be an integer or a decimal string, not an array");
}

}  // namespace
}  // namespace snowid::daemon
