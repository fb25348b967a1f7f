//! hetsim-topology: the networks that join many copies of a board, generated from a few
//! counts, as SimGrid's cluster zones build theirs (SimGrid 3.x `ClusterZone`, `FatTreeZone`,
//! `TorusZone`, `DragonflyZone`; their `topo_parameters` are mirrored field by field).
//!
//! Pure: [`build`] takes a [`Topology`] and the number of endpoints (the board nodes that
//! attach to the fabric, board after board) and returns a [`Fabric`]: the switches it adds
//! and the wires between switches and endpoints, each with its role. Which components the
//! switches and wires are, and what the endpoints are called, is the system file's business
//! (hetsim-system).
//!
//! Modules: [`fat_tree`] (fat-tree and leaf-spine), [`torus`] (torus and ring),
//! [`dragonfly`]; each uses only the types of this file.

pub mod dragonfly;
pub mod fat_tree;
pub mod torus;

pub use dragonfly::Dragonfly;
pub use fat_tree::{FatTree, LeafSpine};

/// A generated network's shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Topology {
    /// One switch with a wire to every endpoint: SimGrid's flat cluster with a backbone.
    Star,
    /// A parallel-ports generalised fat-tree, PGFT(h; m; w; p) (SimGrid's `FAT_TREE`).
    FatTree(FatTree),
    /// Two levels: leaves of `leaf_down` endpoints, each wired to every spine.
    LeafSpine(LeafSpine),
    /// A 1-, 2- or 3-D torus of the endpoints themselves, no switches (SimGrid's `TORUS`).
    Torus(Vec<u32>),
    /// The endpoints in a ring: a 1-D torus of all of them.
    Ring,
    /// Groups of chassis of routers (SimGrid's `DRAGONFLY`).
    Dragonfly(Dragonfly),
}

/// One end of a wire: endpoint `e` (in the order the caller numbers them) or switch `s` (an
/// index into [`Fabric::switches`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum End {
    Endpoint(usize),
    Switch(usize),
}

/// A switch the topology adds, with a name unique within the fabric (`leaf3`, `l2s17`,
/// `g1c0r2`) and its level (1 for the switches endpoints attach to; 1 for every router of a
/// dragonfly and the star's one switch).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Switch {
    pub name: String,
    pub level: u32,
}

/// What a wire is for, as SimGrid names its links.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// Endpoint to the switch it attaches to.
    Access,
    /// Fat-tree: a switch of level `l` (>= 1) to a parent of level `l` + 1.
    Up(u32),
    /// Torus: along dimension `d` (0-based), to the next endpoint (with wrap-around).
    Dimension(u32),
    /// Dragonfly: between routers of one chassis (all to all).
    Green,
    /// Dragonfly: between routers of the same rank in the chassis of one group.
    Black,
    /// Dragonfly: between groups.
    Blue,
}

/// Two ends joined by one wire (parallel wires are separate entries).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wire {
    pub ends: [End; 2],
    pub role: Role,
}

/// What a topology adds to the endpoints: switches and wires.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fabric {
    pub switches: Vec<Switch>,
    pub wires: Vec<Wire>,
}

impl Fabric {
    /// The wires of `role`.
    pub fn count(&self, role: Role) -> usize {
        self.wires.iter().filter(|w| w.role == role).count()
    }

    /// Wires at switch `s` (its ports in use).
    pub fn ports(&self, s: usize) -> usize {
        self.wires
            .iter()
            .map(|w| w.ends.iter().filter(|e| **e == End::Switch(s)).count())
            .sum()
    }
}

/// Why a topology cannot be built: the parameter at fault (as the system file names it:
/// `down`, `dims`, ...) and what was expected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct TopologyError {
    pub field: &'static str,
    pub message: String,
}

impl TopologyError {
    pub(crate) fn new(field: &'static str, message: impl Into<String>) -> Self {
        TopologyError {
            field,
            message: message.into(),
        }
    }
}

/// At most this many switches or wires in one fabric: a slip of a count (`down = [64, 64,
/// 64, 64]`) is refused rather than allocated.
pub const MAX_ELEMENTS: u64 = 50_000_000;

/// The fabric of `topology` over `endpoints` endpoints.
pub fn build(topology: &Topology, endpoints: usize) -> Result<Fabric, TopologyError> {
    match topology {
        Topology::Star => Ok(star(endpoints)),
        Topology::FatTree(tree) => tree.build(endpoints),
        Topology::LeafSpine(leaf_spine) => leaf_spine.build(endpoints),
        Topology::Torus(dims) => torus::build(dims, endpoints),
        Topology::Ring => Ok(torus::ring(endpoints)),
        Topology::Dragonfly(dragonfly) => dragonfly.build(endpoints),
    }
}

/// One switch, `switch`, and a wire from every endpoint to it.
fn star(endpoints: usize) -> Fabric {
    Fabric {
        switches: vec![Switch {
            name: "switch".to_owned(),
            level: 1,
        }],
        wires: (0..endpoints)
            .map(|e| Wire {
                ends: [End::Endpoint(e), End::Switch(0)],
                role: Role::Access,
            })
            .collect(),
    }
}

/// The product of `counts`, refused (naming `field`) past [`MAX_ELEMENTS`].
pub(crate) fn product(
    counts: impl IntoIterator<Item = u32>,
    field: &'static str,
) -> Result<u64, TopologyError> {
    counts.into_iter().try_fold(1u64, |p, c| {
        p.checked_mul(u64::from(c))
            .filter(|p| *p <= MAX_ELEMENTS)
            .ok_or_else(|| TopologyError::new(field, format!("more than {MAX_ELEMENTS} elements")))
    })
}

/// Refuses a list of counts of the wrong length or with a 0.
pub(crate) fn check_counts(
    field: &'static str,
    counts: &[u32],
    length: std::ops::RangeInclusive<usize>,
) -> Result<(), TopologyError> {
    if !length.contains(&counts.len()) {
        let expected = if length.start() == length.end() {
            format!("{}", length.start())
        } else {
            format!("{} to {}", length.start(), length.end())
        };
        return Err(TopologyError::new(
            field,
            format!("expected {expected} counts, got {}", counts.len()),
        ));
    }
    if counts.contains(&0) {
        return Err(TopologyError::new(field, "every count must be at least 1"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_star_is_one_switch_and_a_wire_per_endpoint() {
        let fabric = build(&Topology::Star, 5).unwrap();
        assert_eq!(fabric.switches.len(), 1);
        assert_eq!(fabric.count(Role::Access), 5);
        assert_eq!(fabric.ports(0), 5);
    }

    #[test]
    fn counts_of_the_wrong_length_or_zero_are_named() {
        assert_eq!(
            check_counts("dims", &[2, 2, 2, 2], 1..=3)
                .unwrap_err()
                .to_string(),
            "dims: expected 1 to 3 counts, got 4"
        );
        assert_eq!(
            check_counts("up", &[1, 0], 2..=2).unwrap_err().to_string(),
            "up: every count must be at least 1"
        );
        assert!(product([1000, 1000, 1000], "down").is_err());
    }
}
