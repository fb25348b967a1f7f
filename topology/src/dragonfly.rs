//! Dragonflies as SimGrid's `DRAGONFLY` cluster builds them (`topo_parameters =
//! "G,b;C,k;R,g;N"`, `DragonflyZone::generate_links`): G groups of C chassis of R routers,
//! N endpoints per router. Within a chassis every pair of routers is joined (green, g wires);
//! within a group, the routers of the same rank in every pair of chassis (black, k wires);
//! between groups i < j, router j of group i and router i of group j (blue, b wires).
//!
//! Counts: G·C·R routers, G·C·R·N endpoints; G·C·R(R−1)/2 green, G·R·C(C−1)/2 black and
//! G(G−1)/2 blue pairs. Differences: SimGrid joins a pair by one link of b (k, g) times the
//! bandwidth; here by that many parallel wires. Fewer than G·C·R·N endpoints may attach
//! (routers fill from the first); every router is built.

use crate::{check_counts, product, End, Fabric, Role, Switch, TopologyError, Wire};

/// A level of a dragonfly: how many, and the wires that join each joined pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Level {
    pub count: u32,
    pub links: u32,
}

/// SimGrid's dragonfly parameters: groups (G, b), chassis per group (C, k), routers per
/// chassis (R, g), endpoints per router (N).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dragonfly {
    pub groups: Level,
    pub chassis: Level,
    pub routers: Level,
    pub nodes: u32,
}

impl Dragonfly {
    /// The fabric over `endpoints` endpoints; routers named `g<group>c<chassis>r<router>`.
    pub fn build(&self, endpoints: usize) -> Result<Fabric, TopologyError> {
        let (g, c, r) = (self.groups, self.chassis, self.routers);
        check_counts("groups", &[g.count, g.links], 2..=2)?;
        check_counts("chassis", &[c.count, c.links], 2..=2)?;
        check_counts("routers", &[r.count, r.links], 2..=2)?;
        check_counts("nodes", &[self.nodes], 1..=1)?;
        let routers = product([g.count, c.count, r.count], "routers")? as usize;
        let capacity = product([g.count, c.count, r.count, self.nodes], "nodes")?;
        if endpoints as u64 > capacity {
            return Err(TopologyError::new(
                "nodes",
                format!("the dragonfly holds {capacity} endpoints (groups · chassis · routers · nodes), {endpoints} attach"),
            ));
        }
        let per_group = (c.count * r.count) as usize;
        if g.count as usize > per_group {
            return Err(TopologyError::new(
                "groups",
                format!(
                    "{} groups need as many routers per group for their blue wires, a group has {per_group}",
                    g.count
                ),
            ));
        }
        let switches = (0..routers)
            .map(|i| Switch {
                name: format!(
                    "g{}c{}r{}",
                    i / per_group,
                    (i % per_group) / r.count as usize,
                    i % r.count as usize
                ),
                level: 1,
            })
            .collect();
        let mut wires = Vec::new();
        let mut join = |a: usize, b: usize, links: u32, role: Role| {
            for _ in 0..links {
                wires.push(Wire {
                    ends: [End::Switch(a), End::Switch(b)],
                    role,
                });
            }
        };
        let router =
            |group: usize, chassis: usize, rank: usize| group * per_group + chassis * r.count as usize + rank;
        let (groups, chassis, ranks) = (g.count as usize, c.count as usize, r.count as usize);
        for group in 0..groups {
            for ch in 0..chassis {
                for a in 0..ranks {
                    for b in a + 1..ranks {
                        join(router(group, ch, a), router(group, ch, b), r.links, Role::Green);
                    }
                }
            }
            for a in 0..chassis {
                for b in a + 1..chassis {
                    for rank in 0..ranks {
                        join(
                            router(group, a, rank),
                            router(group, b, rank),
                            c.links,
                            Role::Black,
                        );
                    }
                }
            }
        }
        for i in 0..groups {
            for j in i + 1..groups {
                join(i * per_group + j, j * per_group + i, g.links, Role::Blue);
            }
        }
        wires.extend((0..endpoints).map(|e| Wire {
            ends: [End::Endpoint(e), End::Switch(e / self.nodes as usize)],
            role: Role::Access,
        }));
        Ok(Fabric { switches, wires })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn simgrid_example() -> Dragonfly {
        // SimGrid's docs example "3,4;4,3;5,1;2".
        Dragonfly {
            groups: Level { count: 3, links: 4 },
            chassis: Level { count: 4, links: 3 },
            routers: Level { count: 5, links: 1 },
            nodes: 2,
        }
    }

    #[test]
    fn simgrids_documented_dragonfly_has_its_counts() {
        // 3·4·5 = 60 routers, 120 endpoints; green 3·4·(5·4/2) = 120 pairs · 1,
        // black 3·5·(4·3/2) = 90 pairs · 3 = 270, blue 3·2/2 = 3 pairs · 4 = 12.
        let f = simgrid_example().build(120).unwrap();
        assert_eq!(f.switches.len(), 60);
        assert_eq!(f.count(Role::Access), 120);
        assert_eq!(f.count(Role::Green), 120);
        assert_eq!(f.count(Role::Black), 270);
        assert_eq!(f.count(Role::Blue), 12);
        assert_eq!(f.switches[27].name, "g1c1r2");
        // Blue: group 0's router 2 (g0c0r2) to group 2's router 0 (g2c0r0 = 40).
        assert!(f
            .wires
            .iter()
            .any(|w| w.role == Role::Blue && w.ends == [End::Switch(2), End::Switch(40)]));
    }

    #[test]
    fn too_many_endpoints_or_groups_are_refused() {
        assert_eq!(simgrid_example().build(121).unwrap_err().field, "nodes");
        let mut wide = simgrid_example();
        wide.groups.count = 21;
        assert_eq!(wide.build(1).unwrap_err().field, "groups");
        wide.groups.count = 0;
        assert_eq!(
            wide.build(1).unwrap_err().to_string(),
            "groups: every count must be at least 1"
        );
    }
}
