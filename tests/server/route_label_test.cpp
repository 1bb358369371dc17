#include "baton/server/observe/route_label.h"

#include <gtest/gtest.h>

#include "baton/server/routes/router.h"

namespace baton {
namespace {

TEST(RouteLabel, IsTheMatchedRoutesTemplate) {
  EXPECT_EQ(route_label("/v1/chat/completions"), "/v1/chat/completions");
  EXPECT_EQ(route_label("/"), "/");
  EXPECT_EQ(route_label("/v1/models"), "/v1/models");
  EXPECT_EQ(route_label("/v1/models/chat"), "/v1/models/{id}");
  EXPECT_EQ(route_label("/v1/models/x123/load"), "/v1/models/{id}/load");
  EXPECT_EQ(route_label("/v1/models/x123/unload"), "/v1/models/{id}/unload");
}

TEST(RouteLabel, IsOtherForAPathNoRouteServes) {
  for (const char* path : {"/junk123", "/v1/models/", "/v1/models//load", "/v1/models/x/eat",
                           "/v1/chat/completions/x", "", "/metrics2"}) {
    EXPECT_EQ(route_label(path), "other") << path;
  }
}

TEST(BearerToken, TheSchemeIsCaseInsensitive) {
  EXPECT_EQ(bearer_token("Bearer k1"), "k1");
  EXPECT_EQ(bearer_token("bearer k1"), "k1");
  EXPECT_EQ(bearer_token("BEARER k1"), "k1");
  EXPECT_EQ(bearer_token("Basic k1"), std::nullopt);
  EXPECT_EQ(bearer_token("Bearer"), std::nullopt);
  EXPECT_EQ(bearer_token("Bearerk1"), std::nullopt);
}

}  // namespace
}  // namespace baton
