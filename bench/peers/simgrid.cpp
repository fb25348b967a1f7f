// SimGrid 3.32 S4U peers of hetsim's benchmarks (bench/compare.py builds and runs them).
//   simgrid pingpong N          2 actors, N round trips of 1000-byte messages over one link
//   simgrid masterworker W R    1 master, W workers on their own hosts, R rounds of one task
// The platform is a star: every host has its own 125 MB/s, 50 us link to the centre, except
// the master (h0), whose link is a fat pipe, so that each master-worker path is one
// worker's link, as in hetsim's system model.
#include <simgrid/s4u.hpp>
#include <cstdio>
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

int main(int argc, char** argv)
{
  sg4::Engine e(&argc, argv);
  std::string scenario = argc > 1 ? argv[1] : "pingpong";
  if (scenario == "pingpong") {
    int n = argc > 2 ? std::stoi(argv[2]) : 100000;
    star_platform(2);
    sg4::Actor::create("ping", e.host_by_name("h0"), ping, n);
    sg4::Actor::create("pong", e.host_by_name("h1"), pong, n);
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
