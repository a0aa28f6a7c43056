// Remote stores take Config::remote of the settings in force when they are opened, and
// RemoteOptions wins over it.
#include "stores/remote/remote_settings.h"

#include <gtest/gtest.h>

#include "stores/remote/testing/fake_http_server.h"
#include "zarrkit/error.h"
#include "zarrkit/stores/http_store.h"

namespace zarrkit {
namespace {

using remote::HttpResponse;
using remote::testing::FakeHttpServer;
using namespace std::chrono_literals;

void scoped_remote(Config& c) {
  c.remote.concurrency = 5;
  c.remote.event_loops = 3;
  c.remote.connect_timeout = 111ms;
  c.remote.stall_timeout = 222ms;
  c.remote.request_timeout = 333ms;
  c.remote.max_attempts = 2;
  c.remote.retry_initial_delay = 1ms;
  c.remote.retry_max_delay = 2ms;
  c.remote.retry_total = 444ms;
  c.remote.verify_tls = false;
  c.remote.ca_bundle = "/tmp/zarrkit-test-ca.pem";
  c.remote.coalesce_gap_bytes = 17;
  c.remote.coalesce_max_bytes = 1000;
}

TEST(RemoteSettings, UnsetOptionsTakeTheScopedSettings) {
  ScopedConfig scoped(scoped_remote);
  const remote::RemoteSettings s = remote::resolve_remote_settings({}, nullptr);
  EXPECT_EQ(s.concurrency, 5u);
  EXPECT_EQ(s.retry.max_attempts, 2);
  EXPECT_EQ(s.retry.initial_delay, 1ms);
  EXPECT_EQ(s.retry.max_delay, 2ms);
  EXPECT_EQ(s.retry.max_total, 444ms);
  EXPECT_EQ(s.coalesce_gap, 17u);
  EXPECT_EQ(s.coalesce_max, 1000u);

  const remote::TransportOptions t = remote::transport_options(current_config().remote);
  EXPECT_EQ(t.concurrency, 5u);
  EXPECT_EQ(t.event_loops, 3u);
  EXPECT_EQ(t.connect_timeout, 111ms);
  EXPECT_EQ(t.stall_timeout, 222ms);
  EXPECT_EQ(t.request_timeout, 333ms);
  EXPECT_FALSE(t.verify_tls);
  EXPECT_EQ(t.ca_bundle, "/tmp/zarrkit-test-ca.pem");
}

TEST(RemoteSettings, GivenOptionsWinOverTheSettings) {
  ScopedConfig scoped(scoped_remote);
  RemoteOptions o;
  o.concurrency = 9;
  o.max_attempts = 4;
  o.retry_initial_delay = 5ms;
  o.retry_max_delay = 6ms;
  o.retry_total = 7ms;
  o.coalesce_gap_bytes = 0;
  o.coalesce_max_bytes = 0;
  const remote::RemoteSettings s = remote::resolve_remote_settings(o, nullptr);
  EXPECT_EQ(s.concurrency, 9u);
  EXPECT_EQ(s.retry.max_attempts, 4);
  EXPECT_EQ(s.retry.initial_delay, 5ms);
  EXPECT_EQ(s.retry.max_delay, 6ms);
  EXPECT_EQ(s.retry.max_total, 7ms);
  EXPECT_EQ(s.coalesce_gap, 0u);
  EXPECT_EQ(s.coalesce_max, 1u);  // at least one byte a request
}

TEST(RemoteSettings, ValuesOutOfRangeAreBroughtIntoRange) {
  ScopedConfig scoped([](Config& c) {
    c.remote.concurrency = 0;
    c.remote.event_loops = 1000;
    c.remote.max_attempts = 0;
  });
  EXPECT_EQ(remote::resolve_remote_settings({}, nullptr).concurrency, 1u);
  EXPECT_EQ(remote::resolve_remote_settings({}, nullptr).retry.max_attempts, 1);
  EXPECT_EQ(remote::transport_options(current_config().remote).event_loops, 64u);
}

TEST(RemoteSettings, AStoreKeepsTheSettingsOfTheScopeItWasOpenedIn) {
  auto server = std::make_shared<FakeHttpServer>();
  const std::string url = "http://host/data.zarr";
  server->put(url + "/c/0", "0123456789");
  std::shared_ptr<HttpStore> store;
  {
    ScopedConfig scoped(scoped_remote);
    store = HttpStore::open(url, {}, server);
  }
  std::shared_ptr<HttpStore> outside = HttpStore::open(url, {}, server);
  EXPECT_EQ(store->capabilities().requests_in_flight, 5u);
  EXPECT_EQ(outside->capabilities().requests_in_flight, std::max<std::size_t>(global_config().remote.concurrency, 1));

  // Its retries: two tries in all (the scope's max_attempts), long after the scope ended.
  for (int i = 0; i < 2; ++i) {
    server->fault_next(url + "/c/0", [](HttpResponse r) {
      r.status = 503;
      return FakeHttpServer::with_body(std::move(r), "slow down");
    });
  }
  EXPECT_THROW(store->get("c/0"), IoError);
  EXPECT_EQ(server->log.size(), 2u);
}

TEST(RemoteSettings, StoresOpenedUnderTheSameSettingsShareATransport) {
  remote::TransportOptions a;
  a.event_loops = 1;
  remote::TransportOptions b = a;
  b.stall_timeout = 1234ms;
  EXPECT_EQ(remote::shared_transport(a), remote::shared_transport(a));
  EXPECT_NE(remote::shared_transport(a), remote::shared_transport(b));
}

}  // namespace
}  // namespace zarrkit
