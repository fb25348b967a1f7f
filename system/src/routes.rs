//! Routes fixed by hand (`[[route]]`): each resolved to its path of nodes, checked against
//! the system's nodes and links, with the way back unless the route says otherwise.

use std::collections::{HashMap, HashSet};

use crate::error::{unknown_node, SystemError};
use crate::spec::RouteSpec;

/// The path of nodes of each of `routes` (and of its way back where symmetric, listed first:
/// a later path for the same pair of nodes takes precedence), the nodes
/// found by id in `index`; `links` are the ends of the system's links. Refused, naming the
/// route's field: an unknown node, a route from a node to itself, a node crossed twice, two
/// consecutive nodes with no link between them.
pub fn resolve(
    routes: &[RouteSpec],
    index: &HashMap<String, usize>,
    links: &[[usize; 2]],
    origin: &str,
) -> Result<Vec<Vec<usize>>, SystemError> {
    let joined: HashSet<[usize; 2]> = links.iter().flat_map(|&[a, b]| [[a, b], [b, a]]).collect();
    let (mut paths, mut ways_back) = (Vec::new(), Vec::new());
    for (number, route) in routes.iter().enumerate() {
        let path = format!("route[{number}]");
        let owner = format!("route from `{}` to `{}`", route.from, route.to);
        let error = |field: &str, message: String| {
            SystemError::new(format!("{owner}: {message}"))
                .in_file(origin)
                .at_path(format!("{path}.{field}"))
        };
        let node = |id: &str, field: &str| {
            index.get(id).copied().ok_or_else(|| {
                unknown_node(
                    origin,
                    &format!("{path}.{field}"),
                    &owner,
                    id,
                    index.keys().map(String::as_str),
                )
            })
        };
        let mut nodes = vec![node(&route.from, "from")?];
        for (hop, id) in route.via.iter().enumerate() {
            nodes.push(node(id, &format!("via[{hop}]"))?);
        }
        nodes.push(node(&route.to, "to")?);
        let mut seen = HashSet::new();
        if let Some(twice) = nodes.iter().find(|n| !seen.insert(**n)) {
            let id = index.iter().find(|(_, n)| *n == twice).map_or("?", |(id, _)| id);
            return Err(error(
                "via",
                format!("crosses node `{id}` twice (a route is a path: no loops)"),
            ));
        }
        if let Some(step) = nodes
            .windows(2)
            .position(|step| !joined.contains(&[step[0], step[1]]))
        {
            let ids = [&route.from]
                .into_iter()
                .chain(&route.via)
                .chain([&route.to])
                .collect::<Vec<_>>();
            // The field naming the node the step enters.
            let field = match step < route.via.len() {
                true => format!("via[{step}]"),
                false => "to".to_owned(),
            };
            return Err(error(
                &field,
                format!(
                    "no link joins `{}` and `{}`: each step of a route needs one",
                    ids[step],
                    ids[step + 1]
                ),
            ));
        }
        if route.symmetric {
            ways_back.push(nodes.iter().rev().copied().collect());
        }
        paths.push(nodes);
    }
    // Ways back first, so that a route written for the way back takes precedence.
    ways_back.extend(paths);
    Ok(ways_back)
}
