//! A rank's nodes read from its file while the run goes, so that the run holds the nodes in
//! flight rather than the file.
//!
//! This is for files in dependency order: ids strictly increasing and every dependency on an
//! earlier id (or on one that is not in the file), as a trace written in execution order
//! is. Such a file has no cycles, so no control dependency is dropped but one on the node
//! itself, and the lowest-id-first issue order of the whole graph ([`crate::graph`]) is
//! the file's order. A first pass over the file ([`scan`]) checks the order and notes, per
//! id, how far ahead the node of that id makes the run read once it completes: to the last
//! node whose dependency on it is its latest one (the node cannot be ready before, and is
//! read by then). The run reads that far at each completion, and to the last node without
//! dependencies at the start, so every ready node has been read: it issues exactly as the
//! whole graph would, with what lies between the nodes in flight and that reach held. A
//! file out of that order (PyTorch-derived traces, whose control dependencies close cycles)
//! is read whole into its graph instead (crate::run).

use std::path::Path;

use hetsim_chakra::{Attributes, ChakraError, Groups, RankReader, TraceNode};
use hetsim_simulator::word_hash::WordMap;

use crate::graph::{Interner, Node};

/// Ids may be this many times sparser than the nodes (plus a margin) for a file to be read
/// as the run goes: the scan keeps a bit, and the run a reach, per id.
const SPARSEST: u64 = 8;

/// What a first pass over a rank's file in dependency order found.
#[derive(Debug)]
pub struct Scan {
    pub nodes: u64,
    /// Dependencies on ids not in the file (each occurrence), skipped.
    pub missing_deps: u64,
    /// Control dependencies of nodes on themselves, dropped.
    pub dropped_ctrl: u64,
    pub groups: Groups,
    follow_ctrl: bool,
    first_id: u64,
    /// Per id from `first_id`: how far past it the run reads once its node completes.
    reach: Vec<u32>,
    /// The last node with no dependency in the file: the run reads to it before it starts.
    last_root: Option<u64>,
}

/// The bits of the ids seen so far, from the first.
struct Seen {
    first: u64,
    bits: Vec<u64>,
}

impl Seen {
    fn insert(&mut self, id: u64) {
        let at = (id - self.first) as usize;
        if at / 64 >= self.bits.len() {
            self.bits.resize(at / 64 + 1, 0);
        }
        self.bits[at / 64] |= 1 << (at % 64);
    }

    fn contains(&self, id: u64) -> bool {
        id.checked_sub(self.first)
            .and_then(|at| self.bits.get(at as usize / 64).map(|w| w >> (at % 64) & 1 == 1))
            .unwrap_or(false)
    }
}

/// The first pass over `file`: `Ok(None)` when it is not in dependency order (or its ids are
/// too sparse), and the run must read it whole.
pub fn scan(file: &Path, rank: usize, follow_ctrl: bool) -> Result<Option<Scan>, ChakraError> {
    let mut reader = RankReader::open(file, rank)?;
    let mut found = Scan {
        nodes: 0,
        missing_deps: 0,
        dropped_ctrl: 0,
        groups: Groups::default(),
        follow_ctrl,
        first_id: 0,
        reach: Vec::new(),
        last_root: None,
    };
    let mut seen: Option<Seen> = None;
    let mut deps: Vec<u64> = Vec::new();
    let mut last_id: Option<u64> = None;
    for node in reader.by_ref() {
        let node = node?;
        let seen = seen.get_or_insert_with(|| Seen {
            first: node.id,
            bits: Vec::new(),
        });
        if last_id.is_some_and(|last| node.id <= last) {
            return Ok(None);
        }
        last_id = Some(node.id);
        let sparse = node.id - seen.first > SPARSEST * (found.nodes + 1) + 4096;
        if sparse || !present_deps(&node, follow_ctrl, seen, &mut found, &mut deps) {
            return Ok(None);
        }
        seen.insert(node.id);
        found.first_id = seen.first;
        found.reach.resize((node.id - seen.first) as usize + 1, 0);
        found.nodes += 1;
        match deps.iter().max() {
            Some(&latest) => {
                let Ok(ahead) = u32::try_from(node.id - latest) else {
                    return Ok(None);
                };
                let r = &mut found.reach[(latest - seen.first) as usize];
                *r = (*r).max(ahead);
            }
            None => found.last_root = Some(node.id),
        }
    }
    found.groups = reader.groups;
    Ok(Some(found))
}

/// Puts into `deps` the dependencies of `node` that are in the file (counting those that
/// are not, and a control dependency on itself); false when one is on a later id or a data
/// dependency on itself (the whole graph reports that cycle).
fn present_deps(
    node: &TraceNode,
    follow_ctrl: bool,
    seen: &Seen,
    found: &mut Scan,
    deps: &mut Vec<u64>,
) -> bool {
    deps.clear();
    let ctrl: &[u64] = if follow_ctrl { &node.ctrl_deps } else { &[] };
    found.dropped_ctrl += u64::from(ctrl.contains(&node.id));
    for &d in node
        .data_deps
        .iter()
        .chain(ctrl.iter().filter(|&&d| d != node.id))
    {
        if d >= node.id {
            return false;
        }
        if seen.contains(d) {
            deps.push(d);
        } else {
            found.missing_deps += 1;
        }
    }
    deps.sort_unstable();
    deps.dedup();
    true
}

/// A node read and not yet done.
struct Held {
    node: Node,
    pending: u32,
    /// The positions of the held nodes that wait on it.
    children: Vec<u32>,
}

/// A rank's file read as the run goes. A node is named by its position in the file, which
/// orders the nodes as their ids do.
pub struct Feed {
    reader: RankReader,
    interner: Interner,
    scan: Scan,
    /// The next node, read but not yet taken in.
    peeked: Option<TraceNode>,
    next: u32,
    held: WordMap<u32, Held>,
    /// The positions of the held nodes, by id.
    positions: WordMap<u64, u32>,
    /// The most nodes held at once.
    pub peak_held: usize,
    deps: Vec<u32>,
}

impl Feed {
    /// `file` open again for the run, with what its scan found.
    pub fn open(file: &Path, rank: usize, scan: Scan) -> Result<Self, ChakraError> {
        Ok(Feed {
            reader: RankReader::open(file, rank)?,
            interner: Interner::default(),
            scan,
            peeked: None,
            next: 0,
            held: WordMap::default(),
            positions: WordMap::default(),
            peak_held: 0,
            deps: Vec::new(),
        })
    }

    pub fn scan(&self) -> &Scan {
        &self.scan
    }

    /// Reads to the last node without dependencies; pushes onto `ready` those that have none.
    pub fn start(&mut self, ready: &mut Vec<u32>) -> Result<(), String> {
        match self.scan.last_root {
            Some(id) => self.read_to(id, ready),
            None => Ok(()),
        }
    }

    /// Node `i` is done: pushes onto `ready` the held nodes that it was the last to wait
    /// for, and those it makes the run read that wait for nothing.
    pub fn release(&mut self, i: u32, ready: &mut Vec<u32>) -> Result<(), String> {
        let Some(done) = self.held.remove(&i) else {
            return Ok(());
        };
        self.positions.remove(&done.node.id);
        for c in done.children {
            if let Some(child) = self.held.get_mut(&c) {
                child.pending -= 1;
                if child.pending == 0 {
                    ready.push(c);
                }
            }
        }
        let reach = self.scan.reach[(done.node.id - self.scan.first_id) as usize];
        self.read_to(done.node.id + u64::from(reach), ready)
    }

    /// Takes in the nodes up to id `last`.
    fn read_to(&mut self, last: u64, ready: &mut Vec<u32>) -> Result<(), String> {
        loop {
            if self.peeked.is_none() {
                self.peeked = match self.reader.next() {
                    Some(node) => Some(node.map_err(|e| format!("reading the file again: {e}"))?),
                    None => return Ok(()),
                };
            }
            match self.peeked.take() {
                Some(node) if node.id <= last => self.take_in(node, ready),
                other => {
                    self.peeked = other;
                    return Ok(());
                }
            }
        }
    }

    fn take_in(&mut self, node: TraceNode, ready: &mut Vec<u32>) {
        let at = self.next;
        self.next += 1;
        let ctrl: &[u64] = if self.scan.follow_ctrl {
            &node.ctrl_deps
        } else {
            &[]
        };
        // The held nodes it waits for: the others are done, or not in the file.
        let mut deps = std::mem::take(&mut self.deps);
        deps.clear();
        deps.extend(
            node.data_deps
                .iter()
                .chain(ctrl)
                .filter_map(|d| self.positions.get(d).copied()),
        );
        deps.sort_unstable();
        deps.dedup();
        for &d in &deps {
            if let Some(parent) = self.held.get_mut(&d) {
                parent.children.push(at);
            }
        }
        let pending = deps.len() as u32;
        self.deps = deps;
        if pending == 0 {
            ready.push(at);
        }
        self.positions.insert(node.id, at);
        let node = self.interner.node(node);
        self.held.insert(
            at,
            Held {
                node,
                pending,
                children: Vec::new(),
            },
        );
        self.peak_held = self.peak_held.max(self.held.len());
    }

    fn held(&self, i: u32) -> &Node {
        &self.held[&i].node
    }

    pub fn node(&self, i: u32) -> TraceNode {
        self.interner.whole(self.held(i))
    }

    pub fn id(&self, i: u32) -> u64 {
        self.held(i).id
    }

    pub fn name(&self, i: u32) -> &str {
        self.interner.name(self.held(i))
    }

    pub fn attributes(&self, i: u32) -> &Attributes {
        self.interner.attributes(self.held(i))
    }

    pub fn kind(&self, i: u32) -> hetsim_chakra::NodeKind {
        self.held(i).kind
    }
}
