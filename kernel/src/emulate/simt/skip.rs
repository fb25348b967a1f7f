//! Skipping the middle trips of a loop that repeats itself.
//!
//! A long loop is most of an emulation's time: a tiled SGEMM at N = 4096 runs 256 trips of 50
//! instructions a warp, a naive one 256 trips of 120. Most such loops are affine: each trip
//! adds the same step to every register it changes (counters, pointers), takes the same blocks
//! with the same lanes and loads what cannot be known anyway. Their trips' accesses are the
//! previous trip's shifted by a fixed step, so the middle trips need no interpretation: their
//! accesses are replayed (sectors, L1 hits and misses, bank wavefronts, stream entries,
//! exactly as running them would give) and their other counts added.
//!
//! - **Detecting.** At each visit of a loop's header the registers the loop writes, the counts
//!   and the stream positions are kept, for the last three visits. The loop is taken to be
//!   affine when the three visits have the same reconvergence stack and active lanes, the two
//!   trips between them stayed in the loop's body (an inner loop visited once per trip of an
//!   outer one is not skipped: the outer loop's registers are not followed), took the same
//!   blocks without diverging or meeting an unresolved branch and counted the same, every
//!   register advanced by the same step lane by lane (unknown where unknown, predicates
//!   unchanged), and every access's addresses likewise.
//! - **How far.** Where the loop leaves is found by probing: a copy of the warp, advanced `j`
//!   trips, runs one trip without counting anything; it passes if it takes the template's
//!   blocks with its lanes, its branches all resolved, and its accesses at the predicted
//!   addresses. Probes 0 and 1 give the line each integer comparison's inputs follow; where
//!   some comparison would change order on it (the loop's own test, `k < n`, at its last trip),
//!   the trip before that is probed first and, passing, settles it. Otherwise `j` runs 0, 1, 3,
//!   7, … until a probe fails, then bisects. The trips up to the last that passed are skipped;
//!   the next one, and the exit with it, run as usual.
//! - **Replaying.** A global access whose lanes all move by the same whole sectors a trip has
//!   its sectors moved on too, instead of gathered again from its 32 addresses. Where no
//!   stream is kept and no outer loop logs accesses, it needs no trip at all: its sectors
//!   for every skipped trip enter the block's and the launch's sets as progressions
//!   ([`Distinct`](super::super::memory::Distinct)) and its counts are summed in closed form.
//! - **What is assumed.** Trips between two that passed are taken to behave like them, so a
//!   change confined to the middle of a stretch whose probes pass on both sides is missed,
//!   the price of not running every trip. A test runs every shipped kernel both ways and
//!   compares the counts, the streams and the sectors touched.

use super::super::alu::Op;
use super::super::decode::{Kind, Reg};
use super::super::lanes::{lanes_of, Lanes};
use super::super::memory::{Shifting, Target, BANKS};
use super::super::warp::{Addresses, Held, Step, Warp};
use super::{Frame, Issued, Profile, Program};
use crate::arch::Space;
use crate::cfg::Exit;
use line::{first_reorder, on_the_line};
use std::ops::Range;

mod line;

/// Visits of a loop's header kept: three give two trips to compare.
const VISITS: usize = 3;

/// Accesses the log keeps at most; a loop whose two trips hold more is not skipped.
const LOG_CAP: usize = 1 << 15;

/// A warp's bookkeeping for skipping: the last visits of each loop's header, and the
/// accesses since the oldest of them.
#[derive(Default)]
pub(super) struct Watch {
    on: bool,
    visits: Vec<Vec<Visit>>,
    log: Vec<Logged>,
    logging: bool,
    /// Divergent or unresolved branches and exits met so far.
    splits: u64,
    /// Trips skipped, over every warp run.
    #[cfg(test)]
    skipped: u64,
    /// Accesses whose skipped trips were counted at once, over every warp run.
    #[cfg(test)]
    at_once: u64,
}

/// One access, as the log keeps it.
#[derive(Clone, Copy)]
struct Logged {
    instruction: usize,
    lanes: u32,
    addresses: Option<Addresses>,
}

/// What a warp was at a visit of a loop's header.
struct Visit {
    held: Vec<Held>,
    stack: Vec<Frame>,
    active: u32,
    tally: Profile,
    /// Index of this visit's header block in the warp's path.
    path: usize,
    trace: usize,
    log: usize,
    splits: u64,
}

/// An affine loop's trip, ready to be repeated.
struct Plan {
    header: u32,
    /// The blocks of one trip, its header first.
    blocks: Vec<u32>,
    /// The trip's entries in the warp's stream.
    trace: Range<usize>,
    accesses: Vec<Stepped>,
    /// Registers that change, with their step per trip.
    steps: Vec<(Reg, Lanes)>,
    per_trip: Profile,
}

/// How a replay counts one access of the template trip.
enum Each {
    /// Its addresses stepped on and counted every trip.
    Stepped,
    /// Its sectors moved on every trip ([`Shifting`]).
    Shifting(Shifting),
    /// The template's entry every trip, counted for all of them.
    Fixed(Issued),
    /// Counted for all trips, with no stream to write.
    Counted,
}

/// One access of the template trip and how its addresses move per trip.
struct Stepped {
    instruction: usize,
    lanes: u32,
    /// Addresses in the template trip, and their step; `None` where unknown.
    addresses: Option<(Addresses, Addresses)>,
}

impl Stepped {
    /// Addresses `trips` trips after the template.
    fn at(&self, trips: u64) -> Option<Addresses> {
        self.addresses.as_ref().map(|(a, step)| a.advanced(step, trips))
    }
}

impl Watch {
    /// Starts a warp: nothing seen; skipping if `on`.
    pub(super) fn reset(&mut self, on: bool, loops: usize) {
        self.on = on;
        self.visits.clear();
        self.visits.resize_with(loops, Vec::new);
        self.log.clear();
        self.logging = false;
        self.splits = 0;
    }

    /// Logs an access while some loop is watched (inlined: replays call it for every access
    /// of every trip, mostly to find nothing watched).
    #[inline]
    pub(super) fn log(&mut self, instruction: usize, lanes: u32, addresses: Option<&Addresses>) {
        if self.logging {
            self.log.push(Logged {
                instruction,
                lanes,
                addresses: addresses.copied(),
            });
            if self.log.len() > LOG_CAP {
                self.forget(|_| true);
            }
        }
    }

    /// Notes a branch that diverged or was not resolved, or lanes that exited.
    pub(super) fn split(&mut self) {
        self.splits += 1;
    }

    /// Drops the visits of the loops `drop` selects and the log no visit needs.
    fn forget(&mut self, drop: impl Fn(usize) -> bool) {
        for (l, v) in self.visits.iter_mut().enumerate() {
            if drop(l) {
                v.clear();
            }
        }
        let oldest = self.visits.iter().filter_map(|v| v.first()).map(|v| v.log).min();
        self.logging = oldest.is_some();
        let start = oldest.unwrap_or(self.log.len());
        if start > 0 {
            self.log.drain(..start);
            for v in self.visits.iter_mut().flatten() {
                v.log -= start;
            }
        }
    }
}

/// The step from `a` to `b` if `c` is `b` plus the same step: words known in the same lanes
/// of all three, bits unchanged from `b` to `c`. `Some(None)` for no change.
fn step(a: &Held, b: &Held, c: &Held) -> Option<Option<Lanes>> {
    match (a, b, c) {
        (Held::Words(a), Held::Words(b), Held::Words(c)) => {
            if a.known != b.known || b.known != c.known {
                return None;
            }
            let mut step = Lanes::splat(0);
            for lane in lanes_of(b.known) {
                let d = b.v[lane].wrapping_sub(a.v[lane]);
                if c.v[lane].wrapping_sub(b.v[lane]) != d {
                    return None;
                }
                step.v[lane] = d;
            }
            Some((step.v != [0; 32]).then_some(step))
        }
        (_, Held::Bits(b), Held::Bits(c)) => {
            (b.known == c.known && b.value & b.known == c.value & c.known).then_some(None)
        }
        _ => None,
    }
}

impl Program<'_> {
    /// At a visit of loop `l`'s header (counted in `tally`, pushed on `path`): notes the
    /// visit and, when the last three show an affine loop, skips the trips probes find alike.
    pub(super) fn at_header(
        &mut self,
        l: usize,
        warp: &mut Warp,
        stack: &[Frame],
        active: u32,
        tally: &mut Profile,
        path: &mut Vec<u32>,
    ) {
        if !self.watch.on {
            return;
        }
        let visit = Visit {
            held: self.loop_writes[l].iter().map(|&r| warp.held(r)).collect(),
            stack: stack.to_vec(),
            active,
            tally: tally.clone(),
            path: path.len() - 1,
            trace: self.trace.as_ref().map_or(0, Vec::len),
            log: self.watch.log.len(),
            splits: self.watch.splits,
        };
        let visits = &mut self.watch.visits[l];
        visits.push(visit);
        if visits.len() > VISITS {
            visits.remove(0);
        }
        self.watch.forget(|_| false);
        let Some(plan) = self.plan(l, path) else {
            return;
        };
        let mask = stack.last().map_or(0, |f| f.mask) & active;
        let trips = self.trips(warp, &plan, mask, tally.executed);
        // The plan holds what it needs; only loops around this one still log (the trips
        // replayed below are part of theirs).
        self.watch.forget(|x| x == l);
        if trips > 0 {
            self.repeat(warp, &plan, trips, tally, path);
            #[cfg(test)]
            {
                self.watch.skipped += u64::from(trips);
            }
        }
    }

    /// The template trip, if loop `l`'s last three visits show an affine loop.
    fn plan(&self, l: usize, path: &[u32]) -> Option<Plan> {
        let [a, b, c] = self.watch.visits[l].as_slice() else {
            return None;
        };
        let per_trip = c.tally.since(&b.tally);
        // A trip that leaves the loop's body (an inner loop visited once per trip of an outer
        // one) runs instructions whose registers `loop_writes` does not follow.
        let body = &self.cfg.loops[l].blocks;
        let inside = path[a.path..c.path]
            .iter()
            .all(|&x| body.binary_search(&(x as usize)).is_ok());
        let alike = inside
            && a.stack == b.stack
            && b.stack == c.stack
            && a.active == c.active
            && b.active == c.active
            && a.splits == c.splits
            && per_trip.executed > 0
            && per_trip == b.tally.since(&a.tally)
            && path[a.path..b.path] == path[b.path..c.path];
        if !alike {
            return None;
        }
        let mut steps = Vec::new();
        for (k, &reg) in self.loop_writes[l].iter().enumerate() {
            if let Some(s) = step(&a.held[k], &b.held[k], &c.held[k])? {
                steps.push((reg, s));
            }
        }
        let (first, second) = (&self.watch.log[a.log..b.log], &self.watch.log[b.log..c.log]);
        if first.len() != second.len() {
            return None;
        }
        let accesses = first
            .iter()
            .zip(second)
            .map(|(x, y)| {
                let addresses = match (x.addresses, y.addresses) {
                    (Some(p), Some(q)) => Some((q, q.step_from(&p)?)),
                    (None, None) => None,
                    _ => return None,
                };
                (x.instruction == y.instruction && x.lanes == y.lanes).then_some(Stepped {
                    instruction: y.instruction,
                    lanes: y.lanes,
                    addresses,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Plan {
            header: path[c.path],
            blocks: path[b.path..c.path].to_vec(),
            trace: b.trace..c.trace,
            accesses,
            steps,
            per_trip,
        })
    }

    /// How many trips from now behave as the template, by probing; no more than the warp may
    /// run before its loop is called endless (so that the check still fires).
    ///
    /// A probe alone cannot tell that the loop left between two trips that pass: a counter
    /// tested with `!=` passes again once past its end. So each probe also reads the inputs
    /// of the trip's integer comparisons, and passes only if they lie on the line through
    /// trips 0 and 1 (no wrap) with the same order as in trip 0: each difference is then
    /// linear in the trip and keeps its sign in between, and so does every branch it decides.
    fn trips(&self, warp: &Warp, plan: &Plan, mask: u32, executed: u64) -> u32 {
        let cap = self.max_instructions.saturating_sub(executed) / plan.per_trip.executed + 1;
        let cap = u32::try_from(cap).unwrap_or(u32::MAX);
        let Some(first) = self.probe(warp, plan, 0, mask) else {
            return 0;
        };
        let Some(second) = self.probe(warp, plan, 1, mask).filter(|_| cap > 1) else {
            return 1;
        };
        let passes = |j: u32| {
            self.probe(warp, plan, j, mask)
                .is_some_and(|c| on_the_line(&first, &second, &c, j))
        };
        let (mut good, mut bad) = (1, cap);
        // Where the comparisons' line says the loop leaves, one probe usually settles it.
        if let Some(flip) = first_reorder(&first, &second) {
            let last = u32::try_from(flip - 1).unwrap_or(u32::MAX).min(cap - 1);
            if last <= good {
                return good + 1;
            }
            if passes(last) {
                return last + 1;
            }
            bad = last;
        }
        let mut j = 3;
        while j < bad {
            if !passes(j) {
                bad = j;
                break;
            }
            good = j;
            j = j.saturating_mul(2).saturating_add(1);
        }
        while bad - good > 1 {
            let mid = good + (bad - good) / 2;
            if passes(mid) {
                good = mid;
            } else {
                bad = mid;
            }
        }
        good + 1
    }

    /// Runs the trip `j` trips from now on a copy of `warp` without counting; if it behaves
    /// as the template predicts, the inputs of its integer comparisons (`None` if unknown).
    fn probe(&self, warp: &Warp, plan: &Plan, j: u32, mask: u32) -> Option<Vec<Option<(i64, i64)>>> {
        let mut w = warp.clone();
        for (reg, s) in &plan.steps {
            w.advance(*reg, s, j);
        }
        let mut accesses = plan.accesses.iter();
        let mut threads = 0;
        let mut compared = Vec::new();
        for (k, &b) in plan.blocks.iter().enumerate() {
            let block = &self.cfg.blocks[b as usize];
            let mut last = Step::default();
            for i in block.start..block.end {
                let d = &self.decoded[i];
                let step = w.guard(d, mask);
                let lanes = step.exec | step.unsure;
                threads += u64::from(lanes.count_ones());
                match &d.kind {
                    Kind::Memory(access) => {
                        let expected = accesses.next()?;
                        let at = expected.at(u64::from(j) + 1);
                        let alike = expected.instruction == i && expected.lanes == lanes;
                        if !alike || w.addresses(access, lanes) != at {
                            return None;
                        }
                    }
                    Kind::Compute(Op::Isetp { signed, .. }) => {
                        let (a, b) = (w.read_value(&d.values[0]), w.read_value(&d.values[1]));
                        let as_int = |x: u32| {
                            if *signed {
                                i64::from(x as i32)
                            } else {
                                i64::from(x)
                            }
                        };
                        compared
                            .extend(lanes_of(lanes).map(|l| Some((as_int(a.get(l)?), as_int(b.get(l)?)))));
                    }
                    _ => {}
                }
                w.execute(d, i as u32, step);
                last = step;
            }
            let next = plan.blocks.get(k + 1).copied().unwrap_or(plan.header);
            if self.successor(b as usize, mask, last) != Some(next as usize) {
                return None;
            }
        }
        (accesses.next().is_none() && threads == plan.per_trip.thread_executed).then_some(compared)
    }

    /// The block lanes `mask` go to after block `b`, whose last instruction ran as `last`;
    /// `None` where they would diverge, exit or meet an unresolved branch.
    fn successor(&self, b: usize, mask: u32, last: Step) -> Option<usize> {
        let block = &self.cfg.blocks[b];
        match block.exit {
            Exit::FallThrough => block.successors.last().copied(),
            Exit::ConditionalEnd if last.exec | last.unsure == 0 => block.successors.last().copied(),
            Exit::Jump { target } => Some(target),
            Exit::Branch { target } if last.unsure == 0 => {
                if last.exec == mask {
                    Some(target)
                } else if last.exec == 0 {
                    block.fall_through()
                } else {
                    None
                }
            }
            _ => None,
        }
    }

    /// How access `s` is replayed for `trips` trips; counted already where that needs no
    /// trip of its own: a shared access shifted by whole rows of banks takes the template's
    /// wavefronts every trip (the tiled SGEMM's reads of its tiles, most of its accesses);
    /// where `at_once`, a global one whose lanes all move by the same whole sectors a trip
    /// has its sectors entered as runs.
    fn replayed(&mut self, s: &Stepped, trips: u32, at_once: bool, tally: &mut Profile) -> Each {
        let (space, bytes) = match &self.decoded[s.instruction].kind {
            Kind::Memory(access) => (access.space, access.bytes),
            _ => return Each::Stepped,
        };
        let Some((template, step)) = &s.addresses else {
            return Each::Stepped;
        };
        let Some(&by) = step.first() else {
            return Each::Stepped;
        };
        let uniform = step.iter().all(|&d| d == by);
        if space == Space::Shared {
            if !(uniform && by % (4 * BANKS) == 0) {
                return Each::Stepped;
            }
            let times = u64::from(trips);
            let m = self.account(
                s.instruction,
                s.lanes,
                Target::Lanes(Some(template)),
                tally,
                times,
            );
            return Each::Fixed(Issued::new(s.instruction, s.lanes, &m));
        }
        let Some(shifting) = uniform
            .then(|| Shifting::new(template, bytes, by, trips))
            .flatten()
        else {
            return Each::Stepped;
        };
        if !at_once {
            return Each::Shifting(shifting);
        }
        let load = self.costs[s.instruction].global_load;
        let m = shifting.all_trips(bytes, s.lanes.count_ones(), load, trips, self.seen());
        // `m` holds every trip's counts already.
        self.count(s.instruction, &m, tally, 1);
        #[cfg(test)]
        {
            self.watch.at_once += 1;
        }
        Each::Counted
    }

    /// Runs `trips` trips of `plan` without interpreting them: replays their accesses
    /// (counted, seen and streamed as if run), adds their other counts and advances the
    /// registers. `path` ends with the header of the next trip, as it will after them.
    fn repeat(&mut self, warp: &mut Warp, plan: &Plan, trips: u32, tally: &mut Profile, path: &mut Vec<u32>) {
        // The template's stream entries and which are accesses (whose entry each trip
        // replaces), told once rather than every trip.
        let template: Vec<Issued> = self
            .trace
            .as_ref()
            .map_or_else(Vec::new, |t| t[plan.trace.clone()].to_vec());
        let access_slots: Vec<usize> = (0..template.len())
            .filter(|&k| {
                matches!(
                    self.decoded[template[k].instruction as usize].kind,
                    Kind::Memory(_)
                )
            })
            .collect();
        // Without a stream to write or a log to keep, shifting sectors need no trip of their
        // own: every trip is counted at once.
        let at_once = self.trace.is_none() && !self.watch.logging;
        let mut each: Vec<Each> = plan
            .accesses
            .iter()
            .map(|s| self.replayed(s, trips, at_once, tally))
            .collect();
        let mut moved = Vec::with_capacity(plan.accesses.len());
        // Each access's addresses, stepped on in place from trip to trip.
        let mut at: Vec<Option<Addresses>> = plan.accesses.iter().map(|s| s.at(0)).collect();
        let per_trip = each.iter().any(|e| !matches!(e, Each::Counted | Each::Fixed(_)));
        let trips_run = if per_trip || !at_once { trips } else { 0 };
        for _ in 0..trips_run {
            moved.clear();
            for ((s, each), addresses) in plan.accesses.iter().zip(&mut each).zip(&mut at) {
                // Fixed wavefronts and shifting sectors need no addresses but the log's, and
                // logging cannot start during a replay.
                if matches!(each, Each::Stepped) || self.watch.logging {
                    if let (Some(a), Some((_, step))) = (addresses.as_mut(), &s.addresses) {
                        a.step_by(step);
                    }
                }
                self.watch.log(s.instruction, s.lanes, addresses.as_ref());
                let target = match each {
                    Each::Fixed(issued) => {
                        moved.push(*issued);
                        continue;
                    }
                    Each::Counted => continue,
                    Each::Shifting(sectors) => Target::Sectors(sectors.next()),
                    Each::Stepped => Target::Lanes(addresses.as_deref()),
                };
                let m = self.account(s.instruction, s.lanes, target, tally, 1);
                moved.push(Issued::new(s.instruction, s.lanes, &m));
            }
            if let Some(trace) = &mut self.trace {
                // The template trip's entries, each access's replaced by this trip's.
                let start = trace.len();
                trace.extend_from_slice(&template);
                for (&k, m) in access_slots.iter().zip(&moved) {
                    trace[start + k] = *m;
                }
            }
        }
        let counted = Profile {
            gmem_bytes: 0,
            unknown_address_accesses: 0,
            ..plan.per_trip.clone()
        };
        tally.add(&counted, u64::from(trips));
        for (reg, s) in &plan.steps {
            warp.advance(*reg, s, trips);
        }
        path.pop();
        for _ in 0..trips {
            path.extend_from_slice(&plan.blocks);
        }
        path.push(plan.header);
    }
}

#[cfg(test)]
mod tests;
