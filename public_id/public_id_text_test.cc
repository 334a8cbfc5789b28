#include <gtest/gtest.h>

#include "snowid/public_id.h"

namespace snowid {
namespace {

std::string reason_of(std::string_view text) {
  Result<PublicIdParts> p = parse_public_id(text);
  return p.is_ok() ? "OK" : std::string(public_id_reason(p.status()));
}

TEST(PublicIdText, CompactCarriesTheSlotInTheFirstSymbolsTopBits) {
  Result<PublicIdParts> p = parse_public_id("ord_c4khywqwtw0xe");
  ASSERT_TRUE(p.is_ok()) << p.status().to_string();
  EXPECT_EQ(p->type(), "ord");
  EXPECT_EQ(p->form, PublicIdForm::kCompact);
  EXPECT_EQ(p->slot, 1);
  EXPECT_EQ(p->compact, 4777825412144038830u);
  EXPECT_EQ(p->text().view(), "ord_c4khywqwtw0xe");
  EXPECT_EQ(parse_public_id("ord_0000000000000")->compact, 0u);
  EXPECT_EQ(parse_public_id("ord_7zzzzzzzzzzzz")->compact, (std::uint64_t{1} << 63) - 1);
  EXPECT_EQ(parse_public_id("ord_zzzzzzzzzzzzz")->slot, 3);
}

TEST(PublicIdText, UpperCaseFoldsToTheCanonicalText) {
  Result<PublicIdParts> p = parse_public_id("ORD_C4KHYWQWTW0XE");
  ASSERT_TRUE(p.is_ok());
  EXPECT_EQ(p->text().view(), "ord_c4khywqwtw0xe");
}

TEST(PublicIdText, SealedRoundTripsAllBits) {
  PublicIdParts parts;
  parts.form = PublicIdForm::kSealed;
  parts.type_chars[0] = 'x';
  parts.type_size = 1;
  parts.slot = 2;
  for (int i = 0; i < 16; ++i)
    parts.sealed[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(0xa5 ^ (i * 37));
  const PublicIdText text = parts.text();
  EXPECT_EQ(text.view().size(), 2u + 26u);
  Result<PublicIdParts> back = parse_public_id(text.view());
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_EQ(back->form, PublicIdForm::kSealed);
  EXPECT_EQ(back->slot, 2);
  EXPECT_EQ(back->sealed, parts.sealed);
  EXPECT_EQ(back->text().view(), text.view());
}

TEST(PublicIdText, RefusalsNameTheirReason) {
  EXPECT_EQ(reason_of("c4khywqwtw0xe"), "NO_TYPE");
  EXPECT_EQ(reason_of("_c4khywqwtw0xe"), "NO_TYPE");
  EXPECT_EQ(reason_of("or-d_c4khywqwtw0xe"), "BAD_TYPE");
  EXPECT_EQ(reason_of("ord__c4khywqwtw0xe"), "BAD_TYPE");
  EXPECT_EQ(reason_of(std::string(64, 'a') + "_c4khywqwtw0xe"), "BAD_TYPE");
  EXPECT_EQ(reason_of("ord_c4khywqwtw0x"), "BAD_LENGTH");
  EXPECT_EQ(reason_of("ord_c4khywqwtw0xee"), "BAD_LENGTH");
  EXPECT_EQ(reason_of("ord_"), "BAD_LENGTH");
  EXPECT_EQ(reason_of("ord_c4khywqwtwoxe"), "AMBIGUOUS_SYMBOL");
  EXPECT_EQ(reason_of("ord_c4khywqwtwIxe"), "AMBIGUOUS_SYMBOL");
  EXPECT_EQ(reason_of("ord_c4khywqwtw0x!"), "BAD_SYMBOL");
  EXPECT_EQ(reason_of("ord_c4khywqwtw0x "), "BAD_SYMBOL");
  EXPECT_EQ(reason_of("my_type_c4khywqwtw0xe"), "OK");
  EXPECT_EQ(parse_public_id("my_type_c4khywqwtw0xe")->type(), "my_type");
  Result<PublicIdParts> hinted = parse_public_id("ord_c4khywqwtwoxe");
  EXPECT_EQ(hinted.status().code(), Code::kInvalidArgument);
  EXPECT_NE(hinted.status().message().find("did you mean 0"), std::string::npos);
  EXPECT_NE(parse_public_id("ord_c4khywqwtwlxe").status().message().find("did you mean 1"),
            std::string::npos);
}

}  // namespace
}  // namespace snowid
