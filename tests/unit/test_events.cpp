// core/events.hpp, compiled in from source with channels of the test's own: every listener is
// called, in order then registration order; the "someone listens" bit is off with none; demand
// channels follow want(); queries answer the fallback until provided; registration from a static
// initializer works; an emit racing a registration sees a whole list.
#include <atomic>
#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

#include "core/events.hpp"

namespace ev = cuda_shim::ev;

namespace {

std::vector<std::string>& calls() {
  static std::vector<std::string> v;
  return v;
}

constinit ev::Flags g_flags;
constinit ev::Channel<void(int)> g_static_channel{g_flags, 1u << 7};
void static_listener(int x) { calls().push_back("static " + std::to_string(x)); }
// Registered by a static initializer, as the rooms do.
[[maybe_unused]] const ev::Registration kStatic{g_static_channel, &static_listener};

}  // namespace

TEST_CASE("events: a channel nobody listens to is off and emits nothing") {
  ev::Flags f;
  ev::Channel<void(int)> c{f, 1u << 0};
  CHECK_FALSE(c.on());
  CHECK(c.listeners() == 0);
  CHECK(f.load() == 0);
  c.emit(1);  // nothing to call
  c.call(1);  // nor when called without looking at the bit
}

TEST_CASE("events: every listener is called, in registration order") {
  ev::Flags f;
  ev::Channel<void(int)> c{f, 1u << 3};
  calls().clear();
  c.listen([](int x) { calls().push_back("a" + std::to_string(x)); });
  CHECK(c.on());
  CHECK(f.load() == 1u << 3);
  c.listen([](int x) { calls().push_back("b" + std::to_string(x)); });
  c.listen([](int x) { calls().push_back("c" + std::to_string(x)); });
  CHECK(c.listeners() == 3);
  c.emit(7);
  CHECK(calls() == std::vector<std::string>{"a7", "b7", "c7"});
}

TEST_CASE("events: a listener's order comes before registration order") {
  ev::Flags f;
  ev::Channel<void()> c{f, 1u << 0};
  calls().clear();
  c.listen([] { calls().push_back("normal 1"); });
  c.listen([] { calls().push_back("last"); }, ev::kLast);
  c.listen([] { calls().push_back("normal 2"); });
  c.listen([] { calls().push_back("first 1"); }, ev::kFirst);
  c.listen([] { calls().push_back("first 2"); }, ev::kFirst);
  c.emit();
  CHECK(calls() == std::vector<std::string>{"first 1", "first 2", "normal 1", "normal 2", "last"});
}

TEST_CASE("events: channels sharing a word of flags keep their own bits") {
  ev::Flags f;
  ev::Channel<void()> a{f, 1u << 0};
  ev::Channel<void()> b{f, 1u << 1};
  b.listen([] {});
  CHECK_FALSE(a.on());
  CHECK(b.on());
  CHECK((f.load() & a.bit()) == 0);
  CHECK((f.load() & b.bit()) != 0);
}

TEST_CASE("events: a demand channel is emitted only while wanted") {
  ev::Flags f;
  ev::Channel<void()> c{f, 1u << 2, ev::Channel<void()>::Mode::demand};
  static int n;
  n = 0;
  c.listen([] { ++n; });
  CHECK_FALSE(c.on());  // listening alone does not turn it on
  c.emit();
  CHECK(n == 0);
  c.want(true);
  CHECK(c.on());
  c.emit();
  CHECK(n == 1);
  c.want(false);
  CHECK_FALSE(c.on());
  c.emit();
  CHECK(n == 1);
}

TEST_CASE("events: a query answers its fallback until a provider registers") {
  struct Table {
    int (*answer)(int);
  };
  static constexpr Table kFallback{[](int) { return -1; }};
  static constexpr Table kProvided{[](int x) { return x * 2; }};
  ev::Query<Table> q{&kFallback};
  CHECK(q.get().answer(4) == -1);
  ev::Registration r{q, &kProvided};
  CHECK(q.get().answer(4) == 8);

  ev::Query<int(int) noexcept> f{+[](int) noexcept { return 0; }};
  CHECK(f.get()(3) == 0);
  ev::Registration rf{f, +[](int x) noexcept { return x + 1; }};
  CHECK(f.get()(3) == 4);
}

TEST_CASE("events: a registration by a static initializer is in place before main") {
  CHECK(g_static_channel.on());
  CHECK(g_static_channel.listeners() == 1);
  calls().clear();
  g_static_channel.emit(5);
  CHECK(calls() == std::vector<std::string>{"static 5"});
}

TEST_CASE("events: emits racing registrations see a whole list") {
  ev::Flags f;
  ev::Channel<void()> c{f, 1u << 0};
  static std::atomic<int> hits[ev::kMaxListeners];
  for (auto& h : hits) h = 0;
  std::atomic<bool> stop{false};
  std::thread emitter([&] {
    while (!stop.load()) c.emit();
  });
  c.listen([] { hits[0]++; });
  c.listen([] { hits[1]++; });
  c.listen([] { hits[2]++; }, ev::kFirst);
  c.listen([] { hits[3]++; });
  while (hits[3].load() == 0) std::this_thread::yield();
  stop = true;
  emitter.join();
  // Every emit called a prefix-consistent list: a later listener never ran more than an earlier one of
  // the same order that was registered before it.
  CHECK(hits[0].load() >= hits[1].load());
  CHECK(hits[1].load() >= hits[3].load());
  CHECK(c.listeners() == 4);
}
