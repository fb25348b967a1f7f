//! Tori and rings of the endpoints themselves, with no switches, as SimGrid's `TORUS`
//! cluster builds them (`topo_parameters = "d₁,d₂,…"`, `TorusZone::create_links_for_node`):
//! endpoint r, at coordinates (r mod d₁, ⌊r/d₁⌋ mod d₂, …), has one wire per dimension to
//! the next endpoint along it, the last wrapping to the first; so ∏ d endpoints and
//! (∏ d) · (dimensions) wires, two between the same pair along a dimension of 2.
//!
//! One difference: along a dimension of 1, SimGrid makes an endpoint's wire to itself; here
//! there is none (a wire to itself carries nothing between endpoints).

use crate::{check_counts, product, End, Fabric, Role, TopologyError, Wire};

/// The torus of dimensions `dims` (1 to 3 of them, x first), whose product must be
/// `endpoints`.
pub fn build(dims: &[u32], endpoints: usize) -> Result<Fabric, TopologyError> {
    check_counts("dims", dims, 1..=3)?;
    let positions = product(dims.iter().copied(), "dims")?;
    if positions != endpoints as u64 {
        return Err(TopologyError::new(
            "dims",
            format!(
                "the torus has {positions} positions (the product of `dims`), {endpoints} endpoints attach"
            ),
        ));
    }
    let mut wires = Vec::new();
    for r in 0..endpoints {
        let mut stride = 1usize;
        for (j, &size) in dims.iter().enumerate() {
            let size = size as usize;
            if size > 1 {
                let next = if (r / stride) % size == size - 1 {
                    r - (size - 1) * stride
                } else {
                    r + stride
                };
                wires.push(Wire {
                    ends: [End::Endpoint(r), End::Endpoint(next)],
                    role: Role::Dimension(j as u32),
                });
            }
            stride *= size;
        }
    }
    Ok(Fabric {
        switches: Vec::new(),
        wires,
    })
}

/// The endpoints in a ring (0–1–…–n−1–0): the torus of one dimension of `endpoints`.
pub fn ring(endpoints: usize) -> Fabric {
    let wires = if endpoints < 2 {
        Vec::new()
    } else {
        (0..endpoints)
            .map(|r| Wire {
                ends: [End::Endpoint(r), End::Endpoint((r + 1) % endpoints)],
                role: Role::Dimension(0),
            })
            .collect()
    };
    Fabric {
        switches: Vec::new(),
        wires,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_torus_has_a_wire_per_endpoint_and_dimension() {
        // SimGrid's docs example "3,2,2": 12 endpoints, 12 · 3 = 36 wires.
        let f = build(&[3, 2, 2], 12).unwrap();
        assert!(f.switches.is_empty());
        assert_eq!(f.wires.len(), 36);
        assert_eq!(f.count(Role::Dimension(0)), 12);
        // Endpoint 2 = (2, 0, 0) wraps to 0 along x; endpoint 5 = (2, 1, 0) to 3 = (0, 1, 0);
        // along y, 3 = (0, 1, 0) wraps to 0.
        let next = |r: usize, d: u32| {
            f.wires
                .iter()
                .find(|w| w.ends[0] == End::Endpoint(r) && w.role == Role::Dimension(d))
                .map(|w| w.ends[1])
        };
        assert_eq!(next(2, 0), Some(End::Endpoint(0)));
        assert_eq!(next(5, 0), Some(End::Endpoint(3)));
        assert_eq!(next(3, 1), Some(End::Endpoint(0)));
        assert_eq!(next(0, 2), Some(End::Endpoint(6)));
    }

    #[test]
    fn a_dimension_of_one_adds_no_wire_and_a_ring_is_a_cycle() {
        assert_eq!(build(&[4, 1], 4).unwrap().wires.len(), 4);
        let f = ring(5);
        assert_eq!(f.wires.len(), 5);
        assert_eq!(f.wires[4].ends, [End::Endpoint(4), End::Endpoint(0)]);
        assert!(ring(1).wires.is_empty());
    }

    #[test]
    fn positions_must_match_the_endpoints() {
        assert_eq!(
            build(&[4, 4], 15).unwrap_err().to_string(),
            "dims: the torus has 16 positions (the product of `dims`), 15 endpoints attach"
        );
        assert!(build(&[2, 2, 2, 2], 16).is_err());
    }
}
