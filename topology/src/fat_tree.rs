//! Fat-trees as parallel-ports generalised fat-trees, PGFT(h; m₁…m_h; w₁…w_h; p₁…p_h)
//! (Zahavi, "D-Mod-K routing providing non-blocking traffic for shift permutations on real
//! life fat trees", 2010), the form of SimGrid's `FAT_TREE` cluster (`topo_parameters =
//! "h;m₁,…;w₁,…;p₁,…"`, `FatTreeZone.cpp`): a switch of level l has m_l children, a node of
//! level l − 1 has w_l parents, and each such pair is joined by p_l parallel wires.
//!
//! SimGrid's counts (`FatTreeZone::generate_switches`): ∏ m endpoints; at level l,
//! ∏_{j≤l} w_j · ∏_{j>l} m_j switches; between levels l − 1 and l, (nodes of level l − 1) ·
//! w_l · p_l wires. A node's label is its position in mixed radix, digit j of radix w_j below
//! its level and m_j from its level up; a parent shares every digit with its child but the
//! child level's (`FatTreeZone::are_related`).
//!
//! One difference: SimGrid wants exactly ∏ m endpoints. Here fewer may attach (endpoints fill
//! the tree from position 0, as racks fill a built fabric), and a switch with no endpoint
//! below it is not generated, so that a cluster of a variable number of boards keeps one
//! fabric description. With ∏ m endpoints the counts are SimGrid's.

use crate::{check_counts, product, End, Fabric, Role, Switch, TopologyError, Wire, MAX_ELEMENTS};

/// PGFT(h; m; w; p): `down` = m, `up` = w, `parallel` = p, level 1 (the endpoints' switches)
/// first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FatTree {
    pub down: Vec<u32>,
    pub up: Vec<u32>,
    pub parallel: Vec<u32>,
}

/// Two levels: leaves of `leaf_down` endpoints each, as many as the endpoints need, each
/// wired to every one of `spines` spines by `parallel` wires. Its oversubscription is
/// `leaf_down` / (`spines` · `parallel`): 1 is non-blocking.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeafSpine {
    pub leaf_down: u32,
    pub spines: u32,
    pub parallel: u32,
}

/// Levels at most: a fat-tree of more has no use at any size this simulator runs.
const MAX_LEVELS: usize = 8;

impl FatTree {
    /// The k-ary three-level fat-tree of k-port switches (Al-Fares et al., SIGCOMM 2008):
    /// PGFT(3; k/2, k/2, k; 1, k/2, k/2; 1, 1, 1), k³/4 endpoints, 5k²/4 switches.
    pub fn k_ary(k: u32) -> Result<Self, TopologyError> {
        if k < 2 || k % 2 != 0 {
            return Err(TopologyError::new(
                "k",
                format!("expected an even number >= 2, got {k}"),
            ));
        }
        Ok(FatTree {
            down: vec![k / 2, k / 2, k],
            up: vec![1, k / 2, k / 2],
            parallel: vec![1, 1, 1],
        })
    }

    /// The fabric over `endpoints` endpoints (at most ∏ `down`); switches named `l<level>s<i>`.
    pub fn build(&self, endpoints: usize) -> Result<Fabric, TopologyError> {
        self.build_named(endpoints, |level, i| format!("l{level}s{i}"))
    }

    fn build_named(
        &self,
        endpoints: usize,
        name: impl Fn(usize, u64) -> String,
    ) -> Result<Fabric, TopologyError> {
        let h = self.down.len();
        check_counts("down", &self.down, 1..=MAX_LEVELS)?;
        check_counts("up", &self.up, h..=h)?;
        check_counts("parallel", &self.parallel, h..=h)?;
        let capacity = product(self.down.iter().copied(), "down")?;
        let e = endpoints as u64;
        if e > capacity {
            return Err(TopologyError::new(
                "down",
                format!("the tree holds {capacity} endpoints (the product of `down`), {endpoints} attach"),
            ));
        }
        // Per level l (1-based; index l of these vectors): W_l = ∏_{j<l} w_j, the digits below
        // the level; the kept blocks (values of the digits from l up) and the first index.
        let (m, w) = (&self.down, &self.up);
        let mut width = vec![1u64; h + 1];
        let mut blocks = vec![0u64; h + 1];
        let mut offset = vec![0u64; h + 2];
        let mut below = 1u64; // ∏_{j<l} m_j
        for l in 1..=h {
            width[l] = width[l - 1] * u64::from(w[l - 1]);
            below *= u64::from(m[l - 1]);
            let above = product(m[l..].iter().copied(), "down")?;
            blocks[l] = e.div_ceil(below).min(above);
            offset[l + 1] = offset[l] + width[l] * blocks[l];
        }
        let wires_total = (0..h).try_fold(0u64, |sum, l| {
            let nodes = if l == 0 { e } else { width[l] * blocks[l] };
            nodes
                .checked_mul(u64::from(w[l]) * u64::from(self.parallel[l]))
                .and_then(|n| n.checked_add(sum))
        });
        if offset[h + 1] > MAX_ELEMENTS || wires_total.is_none_or(|n| n > MAX_ELEMENTS) {
            return Err(TopologyError::new(
                "down",
                format!("more than {MAX_ELEMENTS} switches or wires"),
            ));
        }
        let mut switches = Vec::with_capacity(offset[h + 1] as usize);
        for l in 1..=h {
            for i in 0..width[l] * blocks[l] {
                switches.push(Switch {
                    name: name(l, i),
                    level: l as u32,
                });
            }
        }
        let mut wires = Vec::with_capacity(wires_total.unwrap_or(0) as usize);
        // A node of level l (0: an endpoint) at (block, low) and its parents at level l + 1:
        // digit l replaced by each d < w_l, so low' = low + d·W_l and block' = block / m_l.
        let mut join = |l: usize, child: End, block: u64, low: u64| {
            let role = if l == 0 { Role::Access } else { Role::Up(l as u32) };
            for d in 0..u64::from(w[l]) {
                let parent = offset[l + 1] + (block / u64::from(m[l])) * width[l + 1] + low + d * width[l];
                for _ in 0..self.parallel[l] {
                    wires.push(Wire {
                        ends: [child, End::Switch(parent as usize)],
                        role,
                    });
                }
            }
        };
        for endpoint in 0..endpoints {
            join(0, End::Endpoint(endpoint), endpoint as u64, 0);
        }
        for l in 1..h {
            for block in 0..blocks[l] {
                for low in 0..width[l] {
                    let index = offset[l] + block * width[l] + low;
                    join(l, End::Switch(index as usize), block, low);
                }
            }
        }
        Ok(Fabric { switches, wires })
    }
}

impl LeafSpine {
    /// The fabric over `endpoints` endpoints: PGFT(2; leaf_down, leaves; 1, spines; 1,
    /// parallel) with leaves = ⌈endpoints / leaf_down⌉; switches `leaf<i>` and `spine<i>`.
    pub fn build(&self, endpoints: usize) -> Result<Fabric, TopologyError> {
        check_counts("leaf_down", &[self.leaf_down], 1..=1)?;
        check_counts("spines", &[self.spines], 1..=1)?;
        check_counts("parallel", &[self.parallel], 1..=1)?;
        let leaves = (endpoints as u64).div_ceil(u64::from(self.leaf_down)).max(1);
        let leaves = u32::try_from(leaves)
            .map_err(|_| TopologyError::new("leaf_down", format!("{leaves} leaves are too many")))?;
        let tree = FatTree {
            down: vec![self.leaf_down, leaves],
            up: vec![1, self.spines],
            parallel: vec![1, self.parallel],
        };
        tree.build_named(endpoints, |level, i| {
            if level == 1 {
                format!("leaf{i}")
            } else {
                format!("spine{i}")
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(down: &[u32], up: &[u32], parallel: &[u32]) -> FatTree {
        FatTree {
            down: down.to_vec(),
            up: up.to_vec(),
            parallel: parallel.to_vec(),
        }
    }

    fn per_level(f: &Fabric) -> Vec<usize> {
        let top = f.switches.iter().map(|s| s.level).max().unwrap_or(0);
        (1..=top)
            .map(|l| f.switches.iter().filter(|s| s.level == l).count())
            .collect()
    }

    #[test]
    fn simgrids_documented_tree_has_its_counts() {
        // SimGrid's docs example "2;4,4;1,2;1,2": 16 nodes; level 1: w1·m2 = 4 switches,
        // level 2: w1·w2 = 2; wires: 16·1·1 up from the nodes, 4·2·2 = 16 from level 1.
        let f = tree(&[4, 4], &[1, 2], &[1, 2]).build(16).unwrap();
        assert_eq!(per_level(&f), [4, 2]);
        assert_eq!(f.count(Role::Access), 16);
        assert_eq!(f.count(Role::Up(1)), 16);
        // Each level-2 switch: m2 = 4 children, 2 wires each; each leaf: 4 down, 2·2 up.
        assert_eq!(f.ports(4), 8);
        assert_eq!(f.ports(0), 8);
    }

    #[test]
    fn a_k_ary_tree_has_al_fares_counts() {
        // k = 4: k³/4 = 16 hosts, 5k²/4 = 20 switches (8 edge, 8 aggregation, 4 core),
        // 3k³/4 = 48 wires; every switch uses its k = 4 ports.
        let f = FatTree::k_ary(4).unwrap().build(16).unwrap();
        assert_eq!(per_level(&f), [8, 8, 4]);
        assert_eq!(f.wires.len(), 48);
        assert!((0..20).all(|s| f.ports(s) == 4));
        assert!(FatTree::k_ary(5).is_err());
    }

    #[test]
    fn switches_with_no_endpoint_below_are_not_built() {
        // 5 endpoints on "2;4,4;1,2;1,2": leaves ⌈5/4⌉ = 2, both top switches kept;
        // wires 5 + 2 leaves · 2 parents · 2 = 13.
        let f = tree(&[4, 4], &[1, 2], &[1, 2]).build(5).unwrap();
        assert_eq!(per_level(&f), [2, 2]);
        assert_eq!(f.wires.len(), 13);
        // k = 64 over 8,192 endpoints: 256 edge, aggregation ⌈8192/1024⌉ = 8 pods · 32,
        // core 32·32 = 1024 (each with one wire per pod: 8).
        let f = FatTree::k_ary(64).unwrap().build(8192).unwrap();
        assert_eq!(per_level(&f), [256, 256, 1024]);
        assert_eq!(f.wires.len(), 8192 + 256 * 32 + 256 * 32);
        assert_eq!(f.ports(f.switches.len() - 1), 8);
    }

    #[test]
    fn every_parent_shares_the_childs_digits_but_one() {
        // "2;2,3;2,2;1,1": level-1 switch (block b, low d) must reach both level-2 switches
        // whose low digit is d, and an endpoint e its w1 = 2 leaves of block e / 2.
        let f = tree(&[2, 3], &[2, 2], &[1, 1]).build(6).unwrap();
        assert_eq!(per_level(&f), [6, 4]);
        let parents = |end: End| -> Vec<usize> {
            f.wires
                .iter()
                .filter(|w| w.ends[0] == end)
                .map(|w| match w.ends[1] {
                    End::Switch(s) => s,
                    End::Endpoint(_) => unreachable!(),
                })
                .collect()
        };
        assert_eq!(parents(End::Endpoint(3)), [2, 3]); // block 1: leaves 2 and 3
        assert_eq!(parents(End::Switch(3)), [6 + 1, 6 + 3]); // low 1: top 1 and 3
    }

    #[test]
    fn a_leaf_spine_grows_its_leaves_with_the_endpoints() {
        // 70 endpoints, leaves of 32, 4 spines, 2 wires each: 3 leaves, 70 + 3·4·2 wires;
        // oversubscription 32 / (4·2) = 4.
        let f = LeafSpine {
            leaf_down: 32,
            spines: 4,
            parallel: 2,
        }
        .build(70)
        .unwrap();
        assert_eq!(per_level(&f), [3, 4]);
        assert_eq!(f.wires.len(), 70 + 24);
        assert_eq!(f.switches[3].name, "spine0");
        assert_eq!(f.ports(3), 6);
    }

    #[test]
    fn bad_parameters_are_named() {
        let e = tree(&[4, 4], &[1], &[1, 1]).build(16).unwrap_err();
        assert_eq!(e.to_string(), "up: expected 2 counts, got 1");
        let e = tree(&[4, 4], &[1, 2], &[1, 1]).build(17).unwrap_err();
        assert_eq!(
            e.to_string(),
            "down: the tree holds 16 endpoints (the product of `down`), 17 attach"
        );
        assert!(tree(&[64; 5], &[1, 64, 64, 64, 64], &[1; 5]).build(10).is_err());
    }
}
