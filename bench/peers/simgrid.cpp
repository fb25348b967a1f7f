// SimGrid 3.32 S4U peers of hetsim's benchmarks (bench/compare.py builds and runs them).
//   simgrid pingpong N          2 actors, N round trips of 1000-byte messages over one link
//   simgrid masterworker W R    1 master, W workers on their own hosts, R rounds of one task
//   simgrid dumbbell A          examples/dumbbell's flows; access links of A bytes/s, 1 us
//                               (run with --cfg=network/model:CM02, bench/dumbbell.py)
// The platform is a star: every host has its own 125 MB/s, 50 us link to the centre, except
// the master (h0), whose link is a fat pipe, so that each master-worker path is one
// worker's link, as in hetsim's system model.
#include <simgrid/s4u.hpp>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;

static int payload = 0;

static void star_platform(int hosts)
{
  auto* zone = sg4::create_star_zone("star");
  for (int i = 0; i < hosts; i++) {
    std::string name = "h" + std::to_string(i);
    auto* host = zone->create_host(name, "512Gf");
    sg4::Link* link;
    if (i == 0) {
      link = zone->create_link(name + "_link", "1000GBps")->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE);
    } else {
      link = zone->create_link(name + "_link", "125MBps")->set_latency("50us");
    }
    zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr, {sg4::LinkInRoute(link)}, true);
  }
  zone->seal();
}

static void ping(int n)
{
  auto* out = sg4::Mailbox::by_name("pong");
  auto* in  = sg4::Mailbox::by_name("ping");
  for (int i = 0; i < n; i++) {
    out->put(&payload, 1000);
    in->get<int>();
  }
}

static void pong(int n)
{
  auto* in  = sg4::Mailbox::by_name("pong");
  auto* out = sg4::Mailbox::by_name("ping");
  for (int i = 0; i < n; i++) {
    in->get<int>();
    out->put(&payload, 1000);
  }
}

static void master(int workers, int rounds)
{
  std::vector<sg4::Mailbox*> boxes;
  for (int w = 0; w < workers; w++)
    boxes.push_back(sg4::Mailbox::by_name("w" + std::to_string(w)));
  auto* back = sg4::Mailbox::by_name("master");
  for (int r = 0; r < rounds; r++) {
    for (auto* box : boxes)
      box->put_init(&payload, 1e6)->detach();
    for (int w = 0; w < workers; w++)
      back->get<int>();
  }
}

static void worker(int w, int rounds)
{
  auto* box  = sg4::Mailbox::by_name("w" + std::to_string(w));
  auto* back = sg4::Mailbox::by_name("master");
  for (int r = 0; r < rounds; r++) {
    box->get<int>();
    sg4::this_actor::execute(1e9);
    back->put_init(&payload, 1e3)->detach();
  }
}

// examples/dumbbell/system.toml: s1, s2 -> left -> right -> r1, r2, the middle link the
// bottleneck; each route is the sender's access link, the bottleneck and the receiver's.
static void dumbbell_platform(const std::string& access)
{
  auto* zone = sg4::create_full_zone("dumbbell");
  auto* bottleneck = zone->create_link("bottleneck", "125MBps")->set_latency("50us");
  std::map<std::string, std::pair<sg4::Host*, sg4::Link*>> ends;
  for (const char* end : {"s1", "s2", "r1", "r2"})
    ends[end] = {zone->create_host(end, "1Gf"),
                 zone->create_link(std::string(end) + "_access", access)->set_latency("1us")};
  for (const char* s : {"s1", "s2"})
    for (const char* r : {"r1", "r2"})
      zone->add_route(ends[s].first->get_netpoint(), ends[r].first->get_netpoint(), nullptr, nullptr,
                      {sg4::LinkInRoute(ends[s].second), sg4::LinkInRoute(bottleneck), sg4::LinkInRoute(ends[r].second)},
                      true);
  zone->seal();
}

struct Flow {
  const char* from;
  const char* to;
  double bytes;
  double start;
};

// examples/dumbbell/app.rhai's flows.
static const Flow flows[] = {{"s1", "r1", 10e6, 0.0}, {"s2", "r2", 5e6, 0.0}, {"s2", "r1", 2.5e6, 0.02}};

static void flow_sender(Flow f)
{
  sg4::this_actor::sleep_until(f.start);
  sg4::Mailbox::by_name(std::string(f.from) + "->" + f.to)->put_init(&payload, f.bytes)->detach();
}

// One receiver per flow, waiting from the start, so that every flow begins when it is sent.
static void flow_receiver(Flow f)
{
  sg4::Mailbox::by_name(std::string(f.from) + "->" + f.to)->get<int>();
  std::printf("flow %s->%s %.0f B arrived %.9f\n", f.from, f.to, f.bytes, sg4::Engine::get_clock());
}

int main(int argc, char** argv)
{
  sg4::Engine e(&argc, argv);
  std::string scenario = argc > 1 ? argv[1] : "pingpong";
  if (scenario == "pingpong") {
    int n = argc > 2 ? std::stoi(argv[2]) : 100000;
    star_platform(2);
    sg4::Actor::create("ping", e.host_by_name("h0"), ping, n);
    sg4::Actor::create("pong", e.host_by_name("h1"), pong, n);
  } else if (scenario == "dumbbell") {
    dumbbell_platform(argc > 2 ? argv[2] : "12.5GBps");
    for (const Flow& f : flows) {
      sg4::Actor::create("sender", e.host_by_name(f.from), flow_sender, f);
      sg4::Actor::create("receiver", e.host_by_name(f.to), flow_receiver, f);
    }
  } else {
    int workers = argc > 2 ? std::stoi(argv[2]) : 10000;
    int rounds  = argc > 3 ? std::stoi(argv[3]) : 10;
    star_platform(workers + 1);
    sg4::Actor::create("master", e.host_by_name("h0"), master, workers, rounds);
    for (int w = 0; w < workers; w++)
      sg4::Actor::create("worker", e.host_by_name("h" + std::to_string(w + 1)), worker, w, rounds);
  }
  e.run();
  std::printf("simulated time %.9f s\n", sg4::Engine::get_clock());
  return 0;
}
