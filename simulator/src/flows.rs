//! Messages as flows over whole routes, sharing every link they cross max-min fairly in
//! bytes per second (SimGrid's CM02 flow model: Velho & Legrand's linear max-min system).
//!
//! A flow of `B` bytes crosses the link directions of its route. On each it needs `work_l`
//! seconds with the link to itself (its bytes over the bandwidth the link's model gives it);
//! its work `W` is the largest of them (its bottleneck alone), its rate alone `U = B / W`, and
//! on link `l` it consumes `a_l = work_l / W` of a unit for each unit of its *share* `s` (the
//! fraction of `W` done per second; its rate is `s·U`). The rates are the max-min fair
//! solution of
//!
//! ```text
//!     Σ_f a_{l,f} s_f ≤ channels_l · σ_l   on every link direction l   (its capacity)
//!     a_{l,f} s_f ≤ σ_l                    on every l of f's route      (one unit at most)
//! ```
//!
//! where `σ_l` is the direction's speed (1, or its duplex fraction while the other direction
//! carries bytes too): progressive filling raises every unfixed flow's rate alike until a
//! direction is full or a flow reaches its bound. Rates are counted in units of the fastest
//! flow's `U` in the problem, so that flows of one rate get `s = σ · min(1, channels / n)` on
//! one link, bit for bit the processor sharing of [`crate::sharing`].
//!
//! Flows with the same route, weights and rate alone always get the same share, so they are
//! kept together in a *bundle*, a [`Shared`] resource whose speed is the share: a join, a
//! finish and the next finish cost O(log n) within a bundle whatever its size (a million
//! messages over one link are one bundle). The max-min problem is solved over bundles, and
//! only over the bundles that share a link, directly or through others, with one whose flows
//! changed (SimGrid's partial invalidation), once an instant however many flows joined or
//! ended in it ([`Flows::settle`]), with the lowest level found from a heap
//! (`levels::Levels`): a step of a collective over a thousand GPUs is one solve of
//! O(n log n), not a thousand of O(n²).

use std::collections::VecDeque;
use std::rc::Rc;

use crate::platform::{Hop, LinkId};
use crate::sharing::Shared;
use crate::word_hash::WordMap;
use levels::Levels;

/// A bundle's index, stable while it has flows.
pub type BundleId = usize;

/// Emptied bundles kept open for the next flows of their route: a message at a time over a
/// link (a ping-pong) reuses one bundle instead of opening one per message, and a workload
/// of many distinct routes or sizes keeps no more than this many idle ones.
const IDLE_KEPT: usize = 64;

/// Flows `T` over the links of a platform.
#[derive(Debug)]
pub struct Flows<T> {
    /// Per link, per direction (forward, backward).
    directions: Vec<[Direction; 2]>,
    bundles: Vec<Option<Bundle<T>>>,
    free: Vec<BundleId>,
    /// Bundles of several hops by their key (those of one hop are in their direction's
    /// `singles`).
    index: WordMap<Key, BundleId>,
    /// Emptied bundles, each once, oldest first (one may have got flows again since).
    idle: VecDeque<BundleId>,
    /// Bundles whose flows changed where others share their links: the seeds of the
    /// components the next [`Self::settle`] solves.
    unsettled: Vec<BundleId>,
    /// Marks of the current settle (bundles, directions), compared with `epoch`.
    bundle_mark: Vec<u64>,
    direction_mark: Vec<[u64; 2]>,
    epoch: u64,
}

#[derive(Debug)]
struct Direction {
    channels: f64,
    /// σ: the fraction of its rate the direction runs at.
    speed: f64,
    /// Flows crossing it, in all its bundles.
    flows: usize,
    /// Its bundles and their weight `a` on it.
    bundles: Vec<(BundleId, f64)>,
    /// Its bundles of one hop, by their rate alone (as bits): found by a scan of a list that
    /// is mostly one long, without building a [`Key`].
    singles: Vec<(u64, BundleId)>,
    /// Scratch of a solve: capacity left [units], the weight of unfixed flows on it, and
    /// their count (whether any is left, free of rounding).
    left: f64,
    weight: f64,
    unfixed: usize,
    /// Its place among the directions of the solve.
    order: usize,
}

/// Flows with one route, one weight per hop and one rate alone (as bits, to hash).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Key {
    route: Rc<[Hop]>,
    weights: Box<[u64]>,
    rate: u64,
}

#[derive(Debug)]
struct Bundle<T> {
    key: Key,
    weights: Box<[f64]>,
    /// U: bytes per second of each of its flows alone.
    rate: f64,
    flows: Shared<T>,
    count: usize,
    /// The share of each of its flows, as last solved.
    share: f64,
    /// Whether it is in `idle`.
    idle: bool,
    /// Scratch of a solve: fixed yet, and its rate alone over the fastest's.
    fixed: bool,
    relative: f64,
}

impl<T> Flows<T> {
    /// Links with `channels[l]` transfers at once per direction.
    pub fn new(channels: impl IntoIterator<Item = u32>) -> Self {
        let directions: Vec<[Direction; 2]> = channels
            .into_iter()
            .map(|c| [0, 1].map(|_| Direction::new(f64::from(c.max(1)))))
            .collect();
        let links = directions.len();
        Flows {
            directions,
            bundles: Vec::new(),
            free: Vec::new(),
            index: WordMap::default(),
            idle: VecDeque::new(),
            unsettled: Vec::new(),
            bundle_mark: Vec::new(),
            direction_mark: vec![[0; 2]; links],
            epoch: 0,
        }
    }

    /// Starts `item`, `bytes` over `route`, at `now`: `works[h]` seconds of link time on hop
    /// `h`, > 0 on one hop at least. Its bundle, and the bundles whose shares changed, are
    /// appended to `changed` (their next finish moved).
    pub fn join(
        &mut self,
        now: f64,
        route: &Rc<[Hop]>,
        bytes: f64,
        works: &[f64],
        item: T,
        changed: &mut Vec<BundleId>,
    ) {
        let whole = works.iter().copied().fold(0.0, f64::max);
        let rate = bytes / whole;
        let found = match **route {
            [hop] => self
                .direction(hop)
                .singles
                .iter()
                .find(|&&(bits, _)| bits == rate.to_bits())
                .map(|&(_, id)| id),
            _ => None,
        };
        let id = match found {
            Some(id) => id,
            None => {
                let weights: Box<[f64]> = works.iter().map(|w| w / whole).collect();
                let key = Key {
                    route: route.clone(),
                    weights: weights.iter().map(|w| w.to_bits()).collect(),
                    rate: rate.to_bits(),
                };
                let indexed = (route.len() > 1).then(|| self.index.get(&key).copied()).flatten();
                match indexed {
                    Some(id) => id,
                    None => self.open(key, weights, rate),
                }
            }
        };
        if let Some(bundle) = self.bundles[id].as_mut() {
            bundle.flows.join(now, whole, item);
            bundle.count += 1;
        }
        self.count_flows(id, 1);
        if self.reshare(now, id, changed) {
            changed.push(id);
        }
    }

    /// When the next flow of `bundle` is done at the current shares.
    pub fn next_finish(&self, bundle: BundleId) -> Option<f64> {
        self.bundles.get(bundle)?.as_ref()?.flows.next_finish()
    }

    /// Ends the flows of `bundle` due at `now` (see [`Shared::finish_due`]); the bundles whose
    /// shares changed are appended to `changed`.
    pub fn finish_due(&mut self, now: f64, bundle: BundleId, changed: &mut Vec<BundleId>) -> Vec<T> {
        let Some(b) = self.bundles.get_mut(bundle).and_then(Option::as_mut) else {
            return Vec::new();
        };
        let done = b.flows.finish_due(now);
        if done.is_empty() {
            return done;
        }
        b.count -= done.len();
        let newly_idle = b.count == 0 && !b.idle;
        b.idle |= newly_idle;
        self.count_flows(bundle, -(done.len() as isize));
        self.reshare(now, bundle, changed);
        if newly_idle {
            self.idle.push_back(bundle);
        }
        if !self.is_unsettled() {
            self.trim_idle();
        }
        done
    }

    fn open(&mut self, key: Key, weights: Box<[f64]>, rate: f64) -> BundleId {
        let id = self.free.pop().unwrap_or_else(|| {
            self.bundles.push(None);
            self.bundle_mark.push(0);
            self.bundles.len() - 1
        });
        for (hop, &a) in key.route.iter().zip(weights.iter()) {
            self.direction_mut(*hop).bundles.push((id, a));
        }
        match *key.route {
            [hop] => self.direction_mut(hop).singles.push((rate.to_bits(), id)),
            _ => {
                self.index.insert(key.clone(), id);
            }
        }
        self.bundles[id] = Some(Bundle {
            key,
            weights,
            rate,
            // The bundle's own capacity never binds: its speed is its flows' share.
            flows: Shared::new(f64::INFINITY),
            count: 0,
            share: 1.0,
            idle: false,
            fixed: false,
            relative: 1.0,
        });
        id
    }

    /// Closes the bundles idle the longest beyond [`IDLE_KEPT`] if they still have no flows
    /// (else they stay open). Only when settled: an unsettled bundle that lost its flows
    /// still ties its neighbours into the component that the settle solves.
    fn trim_idle(&mut self) {
        while self.idle.len() > IDLE_KEPT {
            let Some(oldest) = self.idle.pop_front() else {
                return;
            };
            if let Some(b) = self.bundles[oldest].as_mut() {
                b.idle = false;
                if b.count == 0 {
                    self.close(oldest);
                }
            }
        }
    }

    fn close(&mut self, id: BundleId) {
        if let Some(bundle) = self.bundles[id].take() {
            for hop in bundle.key.route.iter() {
                self.direction_mut(*hop).bundles.retain(|&(b, _)| b != id);
            }
            match *bundle.key.route {
                [hop] => self.direction_mut(hop).singles.retain(|&(_, b)| b != id),
                _ => {
                    self.index.remove(&bundle.key);
                }
            }
            self.free.push(id);
        }
    }

    fn direction(&self, hop: Hop) -> &Direction {
        &self.directions[hop.link][usize::from(!hop.forward)]
    }

    fn direction_mut(&mut self, hop: Hop) -> &mut Direction {
        direction_in(&mut self.directions, hop)
    }

    /// Adds `delta` flows to the count of every direction `bundle` crosses.
    fn count_flows(&mut self, bundle: BundleId, delta: isize) {
        let Some(route) = self.bundles[bundle].as_ref().map(|b| b.key.route.clone()) else {
            return;
        };
        for hop in route.iter() {
            let d = self.direction_mut(*hop);
            d.flows = d.flows.saturating_add_signed(delta);
        }
    }

    /// Whether direction `direction` (0 forward, 1 backward) of `link` carries a flow.
    pub fn is_busy(&self, link: LinkId, direction: usize) -> bool {
        self.directions[link][direction].flows > 0
    }

    /// Runs direction `direction` of `link` at `speed` from `now` on; the bundles whose shares
    /// changed are appended to `changed`.
    pub fn set_speed(
        &mut self,
        now: f64,
        link: LinkId,
        direction: usize,
        speed: f64,
        changed: &mut Vec<BundleId>,
    ) {
        let d = &mut self.directions[link][direction];
        if d.speed == speed {
            return;
        }
        d.speed = speed;
        if let Some(&(seed, _)) = d.bundles.first() {
            self.reshare(now, seed, changed);
        }
    }

    /// Whether a change of flows waits for [`Self::settle`].
    pub fn is_unsettled(&self) -> bool {
        !self.unsettled.is_empty()
    }

    /// Solves the max-min shares of every component whose flows changed since the last
    /// settle, each once however many of its flows joined or ended: the engine settles
    /// before its clock moves on, so that the flows of one instant (a collective's step over
    /// a thousand links) cost one solve instead of one each. The bundles whose flows joined
    /// or ended, and those whose shares changed, are appended to `changed`.
    pub fn settle(&mut self, now: f64, changed: &mut Vec<BundleId>) {
        let seeds = std::mem::take(&mut self.unsettled);
        self.epoch += 1;
        for &seed in &seeds {
            if self.bundle_mark[seed] != self.epoch {
                self.solve(now, seed, changed);
            }
        }
        changed.extend_from_slice(&seeds);
        self.unsettled = seeds;
        self.unsettled.clear();
        self.trim_idle();
    }

    /// Sets `seed`'s share at once where its flows are alone on their route (most messages:
    /// nothing else to solve) and says so; else leaves its component to [`Self::settle`].
    fn reshare(&mut self, now: f64, seed: BundleId, changed: &mut Vec<BundleId>) -> bool {
        match self.alone(seed) {
            Some(share) => {
                if share > 0.0 {
                    self.set_share(now, seed, share, changed);
                }
                true
            }
            None => {
                self.unsettled.push(seed);
                false
            }
        }
    }

    /// Solves the max-min shares of the bundles connected to `seed` through shared links, by
    /// progressive filling: the direction (or flow bound) with the lowest fair level fixes its
    /// bundles at that level, its capacity is taken out, and so on.
    fn solve(&mut self, now: f64, seed: BundleId, changed: &mut Vec<BundleId>) {
        let (bundles, directions) = self.component(seed);
        for &(link, dir) in &directions {
            let d = &mut self.directions[link][dir];
            d.left = d.channels;
            d.weight = 0.0;
            d.unfixed = 0;
        }
        let fastest = bundles
            .iter()
            .filter_map(|&id| self.bundles[id].as_ref().filter(|b| b.count > 0))
            .map(|b| b.rate)
            .fold(0.0, f64::max);
        for &id in &bundles {
            let Some(b) = self.bundles[id].as_mut() else {
                continue;
            };
            b.fixed = false;
            b.relative = b.rate / fastest;
            for (hop, a) in b.key.route.iter().zip(b.weights.iter()) {
                let d = direction_in(&mut self.directions, *hop);
                d.weight += b.count as f64 * a / b.relative;
                d.unfixed += b.count;
            }
        }
        let mut levels = Levels::default();
        for (order, &(link, dir)) in directions.iter().enumerate() {
            let d = &mut self.directions[link][dir];
            d.order = order;
            levels.offer_direction(d);
        }
        for (order, &id) in bundles.iter().enumerate() {
            if let Some(b) = self.bundles[id].as_ref().filter(|b| b.count > 0) {
                levels.push(self.flow_bound(b), directions.len() + order);
            }
        }
        let mut unfixed = bundles.iter().filter(|&&id| self.count(id) > 0).count();
        while unfixed > 0 {
            let Some((level, order)) = levels.pop() else {
                break;
            };
            let fixing: Vec<BundleId> = match directions.get(order) {
                Some(&(link, dir)) => {
                    let d = &self.directions[link][dir];
                    if d.unfixed == 0 || d.level().to_bits() != level.to_bits() {
                        continue; // fixed already, or offered again at its new level
                    }
                    d.bundles
                        .iter()
                        .map(|&(b, _)| b)
                        .filter(|&b| self.is_unfixed(b))
                        .collect()
                }
                None => {
                    let id = bundles[order - directions.len()];
                    if !self.is_unfixed(id) {
                        continue;
                    }
                    vec![id]
                }
            };
            for id in fixing {
                unfixed -= 1;
                self.fix(now, id, level, &mut levels, changed);
            }
        }
    }

    /// The share of `id`'s flows where they are the only flows on every direction they cross
    /// (most messages: nothing else to solve), computed as the progressive filling would
    /// compute it for them alone, bit for bit; 0 for a bundle without flows.
    fn alone(&self, id: BundleId) -> Option<f64> {
        let b = self.bundles[id].as_ref()?;
        let mut level = f64::INFINITY;
        let mut bound = f64::INFINITY;
        for (hop, &a) in b.key.route.iter().zip(b.weights.iter()) {
            let d = self.direction(*hop);
            if d.flows != b.count {
                return None;
            }
            if b.count > 0 {
                level = level.min((d.channels / (b.count as f64 * a)) * d.speed);
                bound = bound.min(d.speed / a);
            }
        }
        Some(if b.count == 0 { 0.0 } else { level.min(bound) })
    }

    /// Sets `id`'s share, moving its flows' clock, and notes it in `changed` if it moved.
    fn set_share(&mut self, now: f64, id: BundleId, share: f64, changed: &mut Vec<BundleId>) {
        let Some(b) = self.bundles[id].as_mut() else {
            return;
        };
        if b.share != share {
            b.share = share;
            b.flows.set_speed(now, share);
            changed.push(id);
        }
    }

    fn count(&self, id: BundleId) -> usize {
        self.bundles[id].as_ref().map_or(0, |b| b.count)
    }

    fn is_unfixed(&self, id: BundleId) -> bool {
        self.bundles[id].as_ref().is_some_and(|b| !b.fixed && b.count > 0)
    }

    /// A flow uses at most one unit of each direction it crosses: its rate is at most the
    /// least σ_l / a_l of its rate alone.
    fn flow_bound(&self, bundle: &Bundle<T>) -> f64 {
        bundle.relative
            * bundle
                .key
                .route
                .iter()
                .zip(bundle.weights.iter())
                .map(|(hop, a)| self.direction(*hop).speed / a)
                .fold(f64::INFINITY, f64::min)
    }

    /// Fixes `id`'s rate at `level` and takes its flows' consumption out of its directions.
    fn fix(&mut self, now: f64, id: BundleId, level: f64, levels: &mut Levels, changed: &mut Vec<BundleId>) {
        let Some(b) = self.bundles[id].as_mut() else {
            return;
        };
        b.fixed = true;
        let share = level / b.relative;
        let n = b.count as f64;
        for (hop, a) in b.key.route.iter().zip(b.weights.iter()) {
            let d = direction_in(&mut self.directions, *hop);
            d.weight -= n * a / b.relative;
            d.unfixed -= b.count;
            d.left -= n * a * share / d.speed;
            levels.offer_direction(d);
        }
        self.set_share(now, id, share, changed);
    }

    /// The bundles linked to `seed` through the directions they share, and those directions,
    /// each by index.
    fn component(&mut self, seed: BundleId) -> (Vec<BundleId>, Vec<(LinkId, usize)>) {
        let epoch = self.epoch;
        let mut bundles = vec![seed];
        let mut directions = Vec::new();
        self.bundle_mark[seed] = epoch;
        let mut next = 0;
        while next < bundles.len() {
            let id = bundles[next];
            next += 1;
            let Some(route) = self.bundles[id].as_ref().map(|b| b.key.route.clone()) else {
                continue;
            };
            for hop in route.iter() {
                let dir = usize::from(!hop.forward);
                if self.direction_mark[hop.link][dir] == epoch {
                    continue;
                }
                self.direction_mark[hop.link][dir] = epoch;
                directions.push((hop.link, dir));
                for &(other, _) in &self.directions[hop.link][dir].bundles {
                    if self.bundle_mark[other] != epoch {
                        self.bundle_mark[other] = epoch;
                        bundles.push(other);
                    }
                }
            }
        }
        // In one order whatever the seed, so that the shares, to the bit, do not depend on
        // which flow's change the solve started from.
        bundles.sort_unstable();
        directions.sort_unstable();
        (bundles, directions)
    }
}

/// The direction of `directions` that `hop` crosses (a function of the field, so that a
/// bundle can be read while its directions change).
fn direction_in(directions: &mut [[Direction; 2]], hop: Hop) -> &mut Direction {
    &mut directions[hop.link][usize::from(!hop.forward)]
}

impl Direction {
    fn new(channels: f64) -> Self {
        Direction {
            channels,
            speed: 1.0,
            flows: 0,
            bundles: Vec::new(),
            singles: Vec::new(),
            left: 0.0,
            weight: 0.0,
            unfixed: 0,
            order: 0,
        }
    }

    /// The fair level of its unfixed flows: its capacity left over their weight, at its
    /// speed (a rate in units of the fastest flow's rate alone).
    fn level(&self) -> f64 {
        (self.left.max(0.0) / self.weight) * self.speed
    }
}

mod levels;
#[cfg(test)]
mod tests;
