#include "snowid/etcd_endpoints.h"

#include <gtest/gtest.h>

namespace snowid {
namespace {

using Endpoints = std::vector<std::string>;

TEST(ParseEtcdEndpoints, AcceptsOneOrSeveralHttpAndHttpsUrls) {
  Result<Endpoints> one = parse_etcd_endpoints("http://127.0.0.1:2379");
  ASSERT_TRUE(one.is_ok()) << one.status().to_string();
  EXPECT_EQ(one.value(), Endpoints{"http://127.0.0.1:2379"});

  Result<Endpoints> three =
      parse_etcd_endpoints("https://etcd-0.example:2379,http://10.0.0.2:2379,http://[::1]:2379");
  ASSERT_TRUE(three.is_ok()) << three.status().to_string();
  EXPECT_EQ(three.value(), (Endpoints{"https://etcd-0.example:2379", "http://10.0.0.2:2379",
                                      "http://[::1]:2379"}));
}

TEST(ParseEtcdEndpoints, TrimsBlanksAndOneTrailingSlash) {
  Result<Endpoints> r = parse_etcd_endpoints(" http://a:1/ ,\thttp://b:65535");
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r.value(), (Endpoints{"http://a:1", "http://b:65535"}));
}

TEST(ParseEtcdEndpoints, RefusesWhatIsNotHostAndPort) {
  for (const char* bad : {"",
                          ",",
                          "http://a:1,",
                          ",http://a:1",
                          "a:2379",
                          "ftp://a:1",
                          "http://a",
                          "http://a:",
                          "http://:2379",
                          "http://a:0",
                          "http://a:65536",
                          "http://a:99999999",
                          "http://a:12x",
                          "http://a:1/v3",
                          "http://u@a:1",
                          "http://a:1?x",
                          "http://::1:2379",
                          "http://[::1]",
                          "http://[zz::]:1",
                          "http://-a:1",
                          "http://a..b:1",
                          "HTTP://a:1",
                          "http://a b:1"}) {
    Result<Endpoints> r = parse_etcd_endpoints(bad);
    EXPECT_FALSE(r.is_ok()) << "accepted \"" << bad << "\"";
    if (!r.is_ok()) {
      EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << bad;
      EXPECT_NE(r.status().message().find("etcd endpoint"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace snowid
