//! Messages on the links.
//!
//! A message is one flow over its whole route (cut-through, as switches, NVLink and
//! InfiniBand stream a message; SimGrid's CM02). On each link `l` of the route the link's model
//! gives `t_l(bytes)`, its startup being `t_l(0)`. The message first takes its latency alone:
//! the startups of its links plus the latency of every node it crosses on the way (a switch's).
//! Then its bytes flow over every link at once ([`crate::flows`]): on link `l` they need
//! `t_l(bytes) − t_l(0)` seconds with the link to themselves, and the flow runs at its max-min
//! fair share of every link direction it crosses. A message alone over one link thus takes
//! `t(bytes)`, as the thesis's model says; over `k` links, the sum of their startups plus the
//! slowest link's time for its bytes.

use std::rc::Rc;

use super::{finite_non_negative, keep_finish, Engine, EventKind};
use crate::error::SimError;
use crate::flows::BundleId;
use crate::platform::{Direction, Hop, HostMemory, LinkId};
use crate::process::{Handle, Message, Process};
use crate::results::SpanKind;
use crate::uncertainty::{Estimate, Spread};
use crate::Pid;

/// A message on its way (boxed in the event and flow queues, which move their entries).
pub(crate) struct InFlight {
    message: Message,
    /// The isend's handle, completed at delivery.
    pub(super) handle: Option<Handle>,
    route: Rc<[Hop]>,
    /// Its startups and the crossed switches' latencies [s].
    latency: f64,
    /// Per hop, the seconds its bytes need with the link to themselves.
    works: Box<[f64]>,
    /// The half-widths of its links' error bars, added [s].
    uncertainty: f64,
}

impl<P: Process> Engine<'_, P> {
    /// A message of `bytes` from `from` to `to`, its route found and timed by its links'
    /// models; or why it cannot go, naming the receiver (the sender fails with it).
    pub(super) fn prepare(
        &mut self,
        from: Pid,
        to: Pid,
        bytes: f64,
        direction: Option<Direction>,
        host_memory: HostMemory,
    ) -> Result<Box<InFlight>, String> {
        if to >= self.placements.len() {
            return Err(format!(
                "send to pid {to}, but the run has pids 0 to {}",
                self.placements.len() - 1
            ));
        }
        let bytes = finite_non_negative(bytes, "a message size [bytes]")?;
        let (a, b) = (&self.placements[from], &self.placements[to]);
        // Within a unit, or a pure synchronization (thesis Table 5.1): no link time.
        let route = if bytes == 0.0 {
            Rc::from([])
        } else {
            self.platform
                .route(a.node, b.node, [a.unit, b.unit])
                .map_err(|e| format!("a message to {}: {e}", self.who(to)))?
        };
        let direction = direction.unwrap_or_else(|| {
            let kinds = (self.platform.nodes[a.node].kind, self.platform.nodes[b.node].kind);
            Direction::between(kinds.0, kinds.1)
        });
        let mut latency = self.crossing_latency(&route);
        let mut works = Vec::with_capacity(route.len());
        let mut uncertainty = 0.0;
        for &hop in route.iter() {
            let whole = self.link_time(hop.link, bytes, direction, host_memory);
            let startup = self.link_time(hop.link, 0.0, direction, host_memory);
            let (whole, startup) = whole
                .and_then(|whole| Ok((whole, startup?.seconds.min(whole.seconds))))
                .map_err(|e| format!("a message to {}: {}: {e}", self.who(to), self.link_name(hop.link)))?;
            uncertainty += whole.uncertainty;
            latency += startup;
            works.push(whole.seconds - startup);
        }
        Ok(Box::new(InFlight {
            message: Message {
                from,
                to,
                bytes,
                sent: 0.0,
                arrived: 0.0,
                spread: Spread::default(),
            },
            handle: None,
            route,
            latency,
            works: works.into(),
            uncertainty,
        }))
    }

    /// Sends a prepared message now: its sender's error bar widened by its links', its latency
    /// alone, then its bytes on the links.
    pub(super) fn depart(&mut self, mut transfer: Box<InFlight>) -> Result<(), SimError> {
        let now = self.now();
        let m = &mut transfer.message;
        m.sent = now;
        m.arrived = now;
        m.spread = self.states[m.from].spread.widened(transfer.uncertainty);
        if transfer.route.is_empty() {
            self.events.schedule(now, EventKind::Deliver(transfer));
        } else if transfer.latency > 0.0 {
            self.events
                .schedule(now + transfer.latency, EventKind::Started(transfer));
        } else {
            self.join_links(transfer)?;
        }
        Ok(())
    }

    /// The latency of the nodes a route crosses on its way (not its ends).
    fn crossing_latency(&self, route: &[Hop]) -> f64 {
        route
            .iter()
            .skip(1)
            .map(|hop| {
                let [a, b] = self.platform.links[hop.link].between;
                self.platform.nodes[if hop.forward { a } else { b }].latency
            })
            .sum()
    }

    /// The link model's time for `bytes` on `link`, checked.
    fn link_time(
        &mut self,
        link: LinkId,
        bytes: f64,
        direction: Direction,
        host_memory: HostMemory,
    ) -> Result<Estimate, String> {
        let estimate = self
            .timing
            .transfer_time(link, bytes, direction, host_memory)
            .map_err(|e| format!("transfer time: {e}"))?;
        finite_non_negative(estimate.seconds, "transfer_time [s]")?;
        finite_non_negative(estimate.uncertainty, "transfer_time's uncertainty [s]")?;
        Ok(estimate)
    }

    /// Its latency over, the message's bytes join every link of its route (or, needing no
    /// link time, it arrives).
    pub(super) fn join_links(&mut self, mut transfer: Box<InFlight>) -> Result<(), SimError> {
        if !transfer.works.iter().any(|&w| w > 0.0) {
            // Arriving from an event of its own, as every message does, so that the sender
            // goes on first.
            self.events.schedule(self.now(), EventKind::Deliver(transfer));
            return Ok(());
        }
        let now = self.now();
        let route = transfer.route.clone();
        let works = std::mem::take(&mut transfer.works);
        let bytes = transfer.message.bytes;
        let mut changed = std::mem::take(&mut self.changed);
        self.flows
            .join(now, &route, bytes, &works, transfer, &mut changed);
        self.slow_duplex(&route, &mut changed);
        self.reschedule(&mut changed);
        self.changed = changed;
        Ok(())
    }

    /// Solves the shares of the flows that changed at this instant (see [`crate::flows::Flows::settle`]).
    pub(super) fn settle_flows(&mut self) {
        let mut changed = std::mem::take(&mut self.changed);
        self.flows.settle(self.now(), &mut changed);
        self.reschedule(&mut changed);
        self.changed = changed;
    }

    /// Slows each direction of the route's links to its `duplex` fraction while the other
    /// carries bytes too (and back to full speed when it stops).
    fn slow_duplex(&mut self, route: &[Hop], changed: &mut Vec<BundleId>) {
        let now = self.now();
        for hop in route {
            let duplex = self.platform.links[hop.link].duplex;
            if duplex == 1.0 {
                continue;
            }
            let busy = [0, 1].map(|d| self.flows.is_busy(hop.link, d));
            for direction in 0..2 {
                let speed = if busy[1 - direction] { duplex } else { 1.0 };
                self.flows.set_speed(now, hop.link, direction, speed, changed);
            }
        }
    }

    /// Keeps a finish event at or before the next finish of each bundle in `changed` (whose
    /// shares changed; see [`keep_finish`]), and empties it.
    fn reschedule(&mut self, changed: &mut Vec<BundleId>) {
        changed.sort_unstable();
        changed.dedup();
        for bundle in changed.drain(..) {
            if self.bundle_events.len() <= bundle {
                self.bundle_events.resize(bundle + 1, None);
            }
            if let Some(next) = self.flows.next_finish(bundle) {
                let finish = EventKind::FlowsFinish(bundle);
                keep_finish(&mut self.bundle_events[bundle], next, &mut self.events, finish);
            }
        }
    }

    /// The flows of `bundle` due now arrive.
    pub(super) fn flows_finish(&mut self, bundle: BundleId) -> Result<(), SimError> {
        let now = self.now();
        self.bundle_events[bundle] = None;
        let mut changed = std::mem::take(&mut self.changed);
        changed.push(bundle);
        let done = self.flows.finish_due(now, bundle, &mut changed);
        if let Some(first) = done.first() {
            let route = first.route.clone();
            self.slow_duplex(&route, &mut changed);
        }
        self.reschedule(&mut changed);
        self.changed = changed;
        for transfer in done {
            self.arrived(*transfer)?;
        }
        Ok(())
    }

    /// The message is at its receiver: its span is recorded and it is delivered.
    pub(super) fn arrived(&mut self, transfer: InFlight) -> Result<(), SimError> {
        if self.trace.is_some() && !transfer.route.is_empty() {
            let m = &transfer.message;
            let links: Vec<String> = transfer.route.iter().map(|h| self.link_name(h.link)).collect();
            let detail = format!("{} bytes to pid {} over {}", m.bytes, m.to, links.join(", "));
            let during = [m.sent, self.now()];
            self.span(m.from, SpanKind::Send, during, 0.0, || detail);
        }
        self.deliver(transfer)
    }

    fn link_name(&self, link: LinkId) -> String {
        let [a, b] = self.platform.links[link].between;
        format!(
            "link `{}`–`{}`",
            self.platform.nodes[a].id, self.platform.nodes[b].id
        )
    }

    fn deliver(&mut self, transfer: InFlight) -> Result<(), SimError> {
        let InFlight {
            mut message, handle, ..
        } = transfer;
        message.arrived = self.now();
        if let Some(handle) = handle {
            self.complete(handle, None)?;
        }
        self.arrive(message)
    }
}
